import { describe, expect, it } from 'vitest';
import { verdict } from './helpers';

describe('moderation check', () => {
  const moderate = async (text: string) => ({
    flagged: text.includes('bad'),
    categories: text.includes('bad') ? ['violence'] : [],
  });

  it('fails when the provider flags the text', async () => {
    const out = await verdict({ type: 'moderation' }, 'a bad thing', { moderate });
    expect(out.passed).toBe(false);
    expect(out.message).toContain('violence');
    expect((await verdict({ type: 'moderation' }, 'a good thing', { moderate })).passed).toBe(true);
  });

  it('only counts the listed categories', async () => {
    expect(
      (await verdict({ type: 'moderation', categories: ['hate'] }, 'a bad thing', { moderate })).passed,
    ).toBe(true);
  });

  it('fails closed when there is no moderation endpoint or it errors', async () => {
    expect((await verdict({ type: 'moderation' }, 'x')).passed).toBe(false);
    const broken = async () => {
      throw new Error('down');
    };
    expect((await verdict({ type: 'moderation' }, 'x', { moderate: broken })).message).toContain(
      'could not run',
    );
  });
});
