import { describe, expect, it } from 'vitest';
import { problemsOf, verdict } from './helpers';

describe('character, word and sentence counts', () => {
  it('character_count counts characters, not bytes', async () => {
    expect((await verdict({ type: 'character_count', max: 5 }, 'héllo')).passed).toBe(true);
    expect((await verdict({ type: 'character_count', max: 4 }, 'héllo')).passed).toBe(false);
    expect((await verdict({ type: 'character_count', min: 6 }, 'héllo')).message).toContain('fewer than 6');
  });

  it('word_count', async () => {
    expect((await verdict({ type: 'word_count', min: 3, max: 4 }, "it's a fine day")).passed).toBe(true);
    expect((await verdict({ type: 'word_count', max: 2 }, 'one two three')).passed).toBe(false);
  });

  it('sentence_count', async () => {
    expect((await verdict({ type: 'sentence_count', max: 2 }, 'One. Two! Three?')).passed).toBe(false);
    expect((await verdict({ type: 'sentence_count', min: 1, max: 3 }, 'One. Two! Three?')).passed).toBe(true);
  });

  it('needs a bound, and min not above max', () => {
    expect(problemsOf({ type: 'word_count' }).join()).toContain('needs min, max or both');
    expect(problemsOf({ type: 'word_count', min: 5, max: 2 }).join()).toContain('above max');
    expect(problemsOf({ type: 'word_count', max: -1 }).join()).toContain('max');
  });
});
