import type { Validator } from '@cfworker/json-schema';
import type { GuardrailCheck } from '../types';
import { noOtherFields } from './param';

// The validator is imported when a config first names a json_schema check, not at cold start.
let ValidatorClass: typeof Validator | undefined;

function newValidator(...args: ConstructorParameters<typeof Validator>): Validator {
  if (!ValidatorClass)
    throw new Error('the JSON Schema validator is not loaded: prepareChecks must run first');
  return new ValidatorClass(...args);
}

/** Models often wrap JSON in a Markdown code fence; the JSON inside is what is checked. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced?.[1] ?? text) };
  } catch {
    return { ok: false };
  }
}

export const validJsonCheck: GuardrailCheck<Record<string, never>> = {
  type: 'valid_json',
  redacts: false,
  parse(params, problems, at) {
    noOtherFields(params, [], problems, at);
    return {};
  },
  run(text) {
    return parseJson(text).ok ? { passed: true } : { passed: false, message: 'not valid JSON' };
  },
};

export const jsonSchemaCheck: GuardrailCheck<{ validator: Validator }> = {
  type: 'json_schema',
  redacts: false,
  async load() {
    ValidatorClass ??= (await import('@cfworker/json-schema')).Validator;
  },
  parse(params, problems, at) {
    noOtherFields(params, ['schema'], problems, at);
    const schema = params.schema;
    if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
      problems.push(`${at}.schema must be a JSON Schema object`);
      return { validator: newValidator({}) };
    }
    try {
      return { validator: newValidator(schema as Record<string, unknown>, '2020-12', false) };
    } catch (error) {
      problems.push(`${at}.schema is not a usable JSON Schema: ${(error as Error).message}`);
      return { validator: newValidator({}) };
    }
  },
  run(text, { validator }) {
    const parsed = parseJson(text);
    if (!parsed.ok) return { passed: false, message: 'not valid JSON' };
    const result = validator.validate(parsed.value);
    if (result.valid) return { passed: true };
    const first = result.errors[0];
    return {
      passed: false,
      message: `does not match the schema${first ? ` at ${first.instanceLocation}: ${first.error}` : ''}`,
    };
  },
};
