import { describe, expect, it } from 'vitest';
import { costOf, priceOf, readUsage } from '../../functions/gateway/pricing';
import { PRICES } from '../../functions/gateway/pricing-data';

describe('pricing', () => {
  it('prices by exact name and by dated snapshot', () => {
    expect(priceOf('openai', 'gpt-4o')).toEqual(PRICES.openai?.models['gpt-4o']);
    expect(priceOf('openai', 'gpt-4o-2024-08-06')).toEqual(PRICES.openai?.models['gpt-4o']);
    expect(priceOf('openai', 'gpt-4o-audio-preview')).toBeUndefined();
    expect(priceOf('nobody', 'gpt-4o')).toBeUndefined();
  });

  it('computes cost with cached tokens at the cached price', () => {
    const usage = {
      prompt_tokens: 1_000_000,
      completion_tokens: 1_000_000,
      total_tokens: 2_000_000,
      cached_tokens: 500_000,
    };
    expect(costOf('openai', 'gpt-5.4', usage)).toBeCloseTo(0.5 * 2.5 + 0.5 * 0.25 + 15, 9);
  });

  it('falls back to the input price for cached tokens when no cached price exists', () => {
    const usage = {
      prompt_tokens: 1_000_000,
      completion_tokens: 0,
      total_tokens: 1_000_000,
      cached_tokens: 1_000_000,
    };
    expect(costOf('openai', 'gpt-4', usage)).toBe(30);
  });

  it('returns null for unknown models and missing usage', () => {
    expect(
      costOf('openai', 'mystery', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }),
    ).toBeNull();
    expect(costOf('openai', 'gpt-4o', null)).toBeNull();
  });

  it('reads OpenAI usage, including cached tokens, and rejects malformed usage', () => {
    expect(
      readUsage({ prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 1 } }),
    ).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      cached_tokens: 1,
    });
    expect(readUsage({ prompt_tokens: '3' })).toBeNull();
    expect(readUsage(null)).toBeNull();
  });

  it('keeps every built-in price positive and dated', () => {
    for (const [provider, table] of Object.entries(PRICES)) {
      expect(table.source, provider).toMatch(/^https:\/\//);
      expect(table.checked, provider).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      for (const [model, p] of Object.entries(table.models)) {
        expect(p.input, model).toBeGreaterThan(0);
        expect(p.output, model).toBeGreaterThan(0);
        if (p.cached_input !== undefined) expect(p.cached_input, model).toBeLessThanOrEqual(p.input);
      }
    }
  });
});
