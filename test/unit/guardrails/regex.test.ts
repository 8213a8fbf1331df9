import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

describe('regex check', () => {
  it('fails when the pattern matches, case-insensitive by default', async () => {
    expect(
      (await verdict({ type: 'regex', pattern: 'secret\\s+project' }, 'about the SECRET  project')).passed,
    ).toBe(false);
    expect((await verdict({ type: 'regex', pattern: 'secret' }, 'nothing here')).passed).toBe(true);
  });

  it('with must_match, fails when the pattern is absent', async () => {
    expect(
      (await verdict({ type: 'regex', pattern: '^ticket-\\d+', must_match: true }, 'ticket-42: help')).passed,
    ).toBe(true);
    expect((await verdict({ type: 'regex', pattern: '^ticket-\\d+', must_match: true }, 'help')).passed).toBe(
      false,
    );
  });

  it('honours flags', async () => {
    expect((await verdict({ type: 'regex', pattern: 'Secret', flags: '' }, 'secret')).passed).toBe(true);
  });

  it('rejects invalid patterns and flags', () => {
    expect(problemsOf({ type: 'regex', pattern: '(' }).join()).toContain('not a valid regular expression');
    expect(problemsOf({ type: 'regex', pattern: 'a', flags: 'g' }).join()).toContain('flags');
    expect(problemsOf({ type: 'regex' }).join()).toContain('pattern');
    expect(problemsOf({ type: 'regex', pattern: 'a', colour: 1 }).join()).toContain('colour');
  });
});
