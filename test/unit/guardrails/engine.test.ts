import { beforeAll, describe, expect, it } from 'vitest';
import { compileChecks, prepareChecks, runChecks } from '../../../functions/guardrails/engine';

describe('guardrail engine', () => {
  beforeAll(() => prepareChecks([{ type: 'regex' }]));

  it('lists every config problem at once', () => {
    const problems: string[] = [];
    compileChecks(
      [
        { type: 'nope' },
        { type: 'regex', action: 'block' },
        { type: 'word_count', action: 'redact', max: 1 },
        5,
      ],
      'input_guardrails',
      problems,
    );
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(
      /input_guardrails\[0\]\.type[\s\S]*\[1\]\.action[\s\S]*\[2\][\s\S]*\[3\]/,
    );
    const notList: string[] = [];
    compileChecks({}, 'output_guardrails', notList);
    expect(notList).toEqual(['output_guardrails must be an array of checks']);
  });

  it('deny fails the report, log does not, and later checks see redacted text', async () => {
    const problems: string[] = [];
    const checks = compileChecks(
      [
        { type: 'pii', action: 'redact', kinds: ['email'] },
        { type: 'regex', id: 'no-emails-left', pattern: '@', action: 'deny' },
        { type: 'word_count', max: 2, action: 'log' },
      ],
      'g',
      problems,
    );
    expect(problems).toEqual([]);
    const report = await runChecks(checks, ['write to a@b.io', 'thanks'], { direction: 'input' });
    expect(report.segments).toEqual(['write to [REDACTED_EMAIL]', 'thanks']);
    expect(report.outcomes.map((o) => [o.id, o.passed])).toEqual([
      ['pii-0', false],
      ['no-emails-left', true],
      ['word_count-2', false],
    ]);
    expect(report.passed).toBe(true);

    const denied = await runChecks(
      compileChecks([{ type: 'contains', words: ['thanks'] }], 'g', []),
      ['thanks'],
      { direction: 'output' },
    );
    expect(denied.passed).toBe(false);
    expect(denied.outcomes[0]?.message).toContain('listed word');
  });
});
