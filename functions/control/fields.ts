import { badRequest, type ErrorCode } from '../core/errors';

// A request body described once, as data: which fields it takes, the JSON Schema of each and what it
// means. The validators read it to refuse unknown fields (and to say which are accepted), and the OpenAPI
// document is generated from it, so the two cannot drift apart.

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = Record<string, unknown>;

export interface FieldSpec {
  schema: JsonSchema;
  description: string;
  /** Required when the resource is created (an update takes any subset). */
  required?: boolean;
}

export interface BodySpec {
  /** What the body describes, as errors name it: "a virtual key". */
  title: string;
  description: string;
  fields: Record<string, FieldSpec>;
}

/** The shape of a value in a few words, for error messages: `string`, `"none"|"monthly"`, `object|null`. */
export function shapeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join('|');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as JsonSchema[]).map(shapeOf).join('|');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'any')];
  return types
    .map((t) => (t === 'array' && schema.items ? `array of ${shapeOf(schema.items as JsonSchema)}` : t))
    .join('|');
}

/** `name (string, required), slug (string), ...`: every accepted field with its expected shape. */
export function acceptedFields(spec: BodySpec): string {
  return Object.entries(spec.fields)
    .map(([name, f]) => `${name} (${shapeOf(f.schema)}${f.required ? ', required' : ''})`)
    .join(', ');
}

/** Fields of `body` that `spec` does not describe. */
export function unknownFields(body: Record<string, unknown>, spec: BodySpec): string[] {
  return Object.keys(body).filter((k) => !Object.hasOwn(spec.fields, k));
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The sentence that teaches: `A virtual key takes: name (string, required), ...`. */
export function takesSentence(spec: BodySpec): string {
  return `${capitalised(spec.title)} takes: ${acceptedFields(spec)}.`;
}

/**
 * Refuses a body with a field `spec` does not describe: a 400 that names the first unknown field as
 * `param` (prefixed with `at`, for a nested object) and lists every accepted field with its shape.
 */
export function refuseUnknownFields(body: Record<string, unknown>, spec: BodySpec, at = ''): void {
  const unknown = unknownFields(body, spec);
  if (unknown.length === 0) return;
  const names = unknown.map((k) => `${at}${k}`).join(', ');
  throw badRequest(
    `Unknown field${unknown.length > 1 ? 's' : ''}: ${names}. ${takesSentence(spec)}`,
    `${at}${unknown[0]}`,
    'unknown_field',
  );
}

/**
 * Problems found in one body, collected so that a 400 lists them all; the reply's `param` is the field
 * of the first one. Unknown fields come first, followed by the accepted ones.
 */
export class Problems {
  private readonly found: Array<{ param: string; message: string }> = [];
  private hint = '';

  constructor(private readonly spec: BodySpec) {}

  add(param: string, message: string): void {
    this.found.push({ param, message });
  }

  unknown(body: Record<string, unknown>): void {
    const unknown = unknownFields(body, this.spec);
    for (const key of unknown) this.add(key, `${key} is not a known field`);
    if (unknown.length > 0) this.hint = ` ${takesSentence(this.spec)}`;
  }

  get messages(): string[] {
    return this.found.map((p) => p.message);
  }

  /** Throws one 400 listing every problem, if there is any. */
  throwIfAny(code: ErrorCode): void {
    const first = this.found[0];
    if (!first) return;
    throw badRequest(
      `Invalid ${this.spec.title.replace(/^an? /, '')}: ${this.messages.join('; ')}.${this.hint}`,
      first.param,
      code,
    );
  }
}

/** The JSON Schema of a whole body: an object of the described fields and no others. */
export function bodySchema(spec: BodySpec, options: { creating: boolean }): JsonSchema {
  const required = Object.entries(spec.fields)
    .filter(([, f]) => options.creating && f.required)
    .map(([name]) => name);
  return {
    type: 'object',
    description: spec.description,
    properties: Object.fromEntries(
      Object.entries(spec.fields).map(([name, f]) => [name, { ...f.schema, description: f.description }]),
    ),
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}
