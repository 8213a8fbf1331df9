import { readFileSync } from 'node:fs';
import { type Schema, Validator } from '@cfworker/json-schema';

// OpenAI's published OpenAPI schemas (vendored and trimmed by scripts/trim-openai-openapi.ts), to check
// that the bodies the gateway writes itself are what OpenAI's clients and validators expect.

const document = JSON.parse(
  readFileSync(new URL('./openapi/openai-schemas.json', import.meta.url), 'utf8'),
) as { components: unknown };

export type OpenAISchemaName =
  | 'CreateChatCompletionResponse'
  | 'CreateChatCompletionStreamResponse'
  | 'ErrorResponse'
  | 'ListModelsResponse'
  | 'Model'
  | 'ResponseErrorEvent'
  | 'CreateTranslationResponseJson';

/** What in `value` breaks the named schema: empty when it conforms. */
export function schemaErrors(name: OpenAISchemaName, value: unknown): string[] {
  const schema = { $ref: `#/components/schemas/${name}`, components: document.components } as Schema;
  const result = new Validator(schema, '2020-12', false).validate(value);
  return result.valid ? [] : result.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}
