import type { JsonSchema } from './fields';

// Schema pieces the control plane's request bodies share (functions/control/bodies.ts and the modules
// beside it). No imports beyond types: a function that needs one body description loads only its own.

export const text = (maxLength = 200): JsonSchema => ({ type: 'string', minLength: 1, maxLength });
export const nullable = (schema: JsonSchema): JsonSchema => ({
  ...schema,
  type: [schema.type as string, 'null'],
});
export const slug = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' };
export const workspaceField = {
  schema: { type: 'string' },
  description:
    'Slug of the workspace; the caller’s own when absent (only an organisation admin names another).',
};
