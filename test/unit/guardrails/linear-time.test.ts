import { describe, expect, it } from 'vitest';
import { findEmails } from '../../../functions/guardrails/checks/pii';
import { findWord, LinearPattern } from '../../../functions/guardrails/linear-pattern';
import { problemsOf, verdict } from './helpers';

// Inputs that take a backtracking engine exponential or quadratic time. On the old engines each of
// these blocked the event loop for seconds to hours (the test timeout then fails them); here they
// are linear. Nothing asserts on time itself.

describe('caller patterns run on a linear-time engine', () => {
  it('(a+)+$ on 34 characters and a mismatch finishes', async () => {
    const text = `${'a'.repeat(34)}!`;
    expect((await verdict({ type: 'regex', pattern: '(a+)+$' }, text)).passed).toBe(true);
    expect((await verdict({ type: 'regex', pattern: '(a+)+!$' }, text)).passed).toBe(false);
  });

  it('(a|aa)+b and (\\w+\\s?)+$ on long inputs finish', async () => {
    expect((await verdict({ type: 'regex', pattern: '(a|aa)+b' }, 'a'.repeat(50))).passed).toBe(true);
    expect((await verdict({ type: 'regex', pattern: '(\\w+\\s?)+$' }, `${'ab '.repeat(12)}!`)).passed).toBe(
      true,
    );
  });

  it.each([
    ['a back-reference', '(a)\\1'],
    ['a look-ahead', 'x(?=y)'],
    ['a negative look-ahead', 'x(?!y)'],
    ['a look-behind', '(?<=a)b'],
  ])('a pattern with %s is refused when saved, naming the engine', (_what, pattern) => {
    expect(problemsOf({ type: 'regex', pattern }).join()).toMatch(/RE2/);
  });

  it('finds every match with UTF-16 offsets, flags honoured', () => {
    const spans = LinearPattern.compile('b+', 'i').spans('€aBb😀bb');
    expect(spans).toEqual([
      { start: 2, end: 4 },
      { start: 6, end: 8 },
    ]);
    expect(LinearPattern.compile('^x.y$', 'ms').test('a\nx\ny')).toBe(true);
    expect(LinearPattern.compile('^x.y$', '').test('a\nx\ny')).toBe(false);
  });

  it('redacts the matches of a regex check', async () => {
    const outcome = await verdict({ type: 'regex', pattern: 'secret\\d+' }, 'a secret42 and SECRET7');
    expect(outcome.findings).toBe(2);
  });
});

describe('contains: a substring search', () => {
  it('keeps whole-word, case and Unicode semantics', () => {
    expect(findWord('Confidential, nonconfidential', 'confidential', false, true)).toEqual([
      { start: 0, end: 12 },
    ]);
    expect(findWord('aa aaa aa', 'aa', false, true)).toEqual([
      { start: 0, end: 2 },
      { start: 7, end: 9 },
    ]);
    expect(findWord('ACME acme', 'ACME', true, true)).toEqual([{ start: 0, end: 4 }]);
    expect(findWord('x😀secret y', 'secret', false, true)).toHaveLength(1);
    expect(findWord('ésecret', 'secret', false, true)).toHaveLength(0);
    // Lower-casing İ changes the length: the RE2 fallback keeps offsets right.
    expect(findWord('İ secret', 'SECRET', false, true)).toEqual([{ start: 2, end: 8 }]);
  });

  it('a word over 1000 characters is refused when saved', () => {
    expect(problemsOf({ type: 'contains', words: ['x'.repeat(1001)] }).join()).toContain('words');
  });

  it('a long text of repeated near-misses finishes', async () => {
    const text = 'confidentia'.repeat(20_000);
    expect((await verdict({ type: 'contains', words: ['confidential'] }, text)).passed).toBe(true);
  });
});

describe('built-in patterns are linear', () => {
  it('the email pattern on 80 KB of letters finishes and finds nothing', async () => {
    expect((await verdict({ type: 'pii', kinds: ['email'] }, 'a'.repeat(80_000))).passed).toBe(true);
  });

  it('finds emails from their @ outwards, as the pattern did', () => {
    const text = 'to jane.doe+x@example.co.uk, x@a.com.y@b.com and @nobody and bob@host';
    expect(findEmails(text).map((s) => text.slice(s.start, s.end))).toEqual([
      'jane.doe+x@example.co.uk',
      'x@a.com',
      '.y@b.com',
    ]);
    expect(findEmails('名前@例え.日本')).toEqual([{ start: 0, end: 8 }]);
  });

  it('the phone pattern on a long run of digits and spaces finishes', async () => {
    // Every candidate holds more than 15 digits: none is a phone number.
    const outcome = await verdict({ type: 'pii', kinds: ['phone'] }, `${'1 '.repeat(40_000)}x`);
    expect(outcome.passed).toBe(true);
    expect(
      (await verdict({ type: 'pii', kinds: ['phone'] }, `${'1 '.repeat(40_000)}x +1 555 123 4567`)).passed,
    ).toBe(false);
  });
});

describe('strict types in check parameters', () => {
  it('null is not "absent": a null action or flags is refused', () => {
    expect(problemsOf({ type: 'regex', pattern: 'a', flags: null }).join()).toContain('flags');
    expect(problemsOf({ type: 'regex', pattern: 'a', action: null }).join()).toContain('action');
  });
});
