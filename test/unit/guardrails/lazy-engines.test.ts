import { describe, expect, it } from 'vitest';
import { compileChecks, prepareChecks } from '../../../functions/guardrails/engine';

// RE2 and the JSON Schema validator stay out of the cold start: a check loads its engine when a config
// first names it. This file must not import ./helpers, which loads every engine.

function compile(check: Record<string, unknown>): string[] {
  const problems: string[] = [];
  compileChecks([check], 'input_guardrails', problems);
  return problems;
}

describe('lazily loaded check engines', () => {
  it('loads RE2 only for a config that names a regex check', async () => {
    const regex = { type: 'regex', pattern: 'secret-\\d+' };
    expect(() => compile(regex)).toThrow(/RE2 is not loaded/);
    await prepareChecks({ input_guardrails: [{ type: 'contains', words: ['secret'] }] });
    expect(() => compile(regex)).toThrow(/RE2 is not loaded/);
    // Contains needs no engine, even for letters whose lower case changes length.
    expect(compile({ type: 'contains', words: ['İstanbul'] })).toEqual([]);
    await prepareChecks({ targets: [{ output_guardrails: [regex] }] });
    expect(compile(regex)).toEqual([]);
    expect(compile({ type: 'regex', pattern: '(?=x)' }).join()).toMatch(/RE2/);
  });

  it('loads the JSON Schema validator only for a config that names a json_schema check', async () => {
    const schema = { type: 'json_schema', schema: { type: 'object', required: ['a'] } };
    expect(() => compile(schema)).toThrow(/not loaded/);
    await prepareChecks([{ type: 'valid_json' }]);
    expect(() => compile(schema)).toThrow(/not loaded/);
    await prepareChecks([schema]);
    expect(compile(schema)).toEqual([]);
  });
});
