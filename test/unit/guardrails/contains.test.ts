import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

describe('contains check', () => {
  const words = ['confidential', 'internal only'];
  it('none (default): fails when a listed word is present, on whole words', async () => {
    expect((await verdict({ type: 'contains', words }, 'This is CONFIDENTIAL.')).passed).toBe(false);
    expect((await verdict({ type: 'contains', words }, 'nonconfidentiality')).passed).toBe(true);
    expect(
      (await verdict({ type: 'contains', words, whole_words: false }, 'nonconfidentiality')).passed,
    ).toBe(false);
  });

  it('any and all', async () => {
    expect(
      (await verdict({ type: 'contains', words, operator: 'any' }, 'internal only, please')).passed,
    ).toBe(true);
    expect((await verdict({ type: 'contains', words, operator: 'any' }, 'public')).passed).toBe(false);
    expect(
      (await verdict({ type: 'contains', words, operator: 'all' }, 'internal only and confidential')).passed,
    ).toBe(true);
    expect((await verdict({ type: 'contains', words, operator: 'all' }, 'confidential')).passed).toBe(false);
  });

  it('case_sensitive', async () => {
    expect(
      (await verdict({ type: 'contains', words: ['ACME'], case_sensitive: true }, 'acme corp')).passed,
    ).toBe(true);
  });

  it('validates its parameters', () => {
    expect(problemsOf({ type: 'contains', words: [] }).join()).toContain('words');
    expect(problemsOf({ type: 'contains', words: ['a'], operator: 'some' }).join()).toContain('operator');
  });
});
