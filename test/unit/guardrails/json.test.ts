import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

const schema = {
  type: 'object',
  properties: { answer: { type: 'string' }, score: { type: 'number' } },
  required: ['answer'],
};

describe('JSON checks', () => {
  it('valid_json accepts JSON, also inside a Markdown fence', async () => {
    expect((await verdict({ type: 'valid_json' }, '{"a": 1}')).passed).toBe(true);
    expect((await verdict({ type: 'valid_json' }, '```json\n{"a": 1}\n```')).passed).toBe(true);
    expect((await verdict({ type: 'valid_json' }, '{"a": ')).passed).toBe(false);
  });

  it('json_schema validates against the schema', async () => {
    expect((await verdict({ type: 'json_schema', schema }, '{"answer": "yes", "score": 1}')).passed).toBe(
      true,
    );
    const bad = await verdict({ type: 'json_schema', schema }, '{"score": "high"}');
    expect(bad.passed).toBe(false);
    expect(bad.message).toContain('schema');
    expect((await verdict({ type: 'json_schema', schema }, 'plain text')).message).toBe('not valid JSON');
  });

  it('json_schema needs a schema object', () => {
    expect(problemsOf({ type: 'json_schema' }).join()).toContain('schema');
    expect(problemsOf({ type: 'json_schema', schema: 'x' }).join()).toContain('schema');
  });
});
