import { describe, expect, it } from 'vitest';
import {
  addRealtimeUsage,
  asLogUsage,
  emptyRealtimeUsage,
  readRealtimeUsage,
  realtimeCost,
  realtimeMaxCost,
} from '../../functions/gateway/realtime/usage';

const done = {
  total_tokens: 821,
  input_tokens: 789,
  output_tokens: 32,
  input_token_details: {
    text_tokens: 313,
    audio_tokens: 476,
    cached_tokens: 640,
    cached_tokens_details: { text_tokens: 256, audio_tokens: 384 },
  },
  output_token_details: { text_tokens: 9, audio_tokens: 23 },
};

describe('realtime usage', () => {
  it('reads response.usage with every detail', () => {
    expect(readRealtimeUsage(done)).toEqual(done);
  });

  it('fills missing details: unsplit tokens count as text, unsplit cached tokens as text first', () => {
    expect(readRealtimeUsage({ input_tokens: 10, output_tokens: 5 })).toMatchObject({
      total_tokens: 15,
      input_token_details: { text_tokens: 10, audio_tokens: 0, cached_tokens: 0 },
      output_token_details: { text_tokens: 5, audio_tokens: 0 },
    });
    const u = readRealtimeUsage({
      input_tokens: 100,
      output_tokens: 0,
      input_token_details: { text_tokens: 20, audio_tokens: 80, cached_tokens: 50 },
    });
    expect(u?.input_token_details.cached_tokens_details).toEqual({ text_tokens: 20, audio_tokens: 30 });
    expect(readRealtimeUsage({})).toBeNull();
    expect(readRealtimeUsage(null)).toBeNull();
  });

  it('sums responses field by field', () => {
    const one = readRealtimeUsage(done);
    if (!one) throw new Error('no usage');
    const two = addRealtimeUsage(addRealtimeUsage(emptyRealtimeUsage(), one), one);
    expect(two.input_tokens).toBe(2 * 789);
    expect(two.input_token_details.cached_tokens_details.audio_tokens).toBe(768);
    expect(two.output_token_details.audio_tokens).toBe(46);
    expect(asLogUsage(two)).toEqual({
      prompt_tokens: 1578,
      completion_tokens: 64,
      total_tokens: 1642,
      cached_tokens: 1280,
    });
  });

  it('prices text and audio, fresh and cached, from the realtime prices', () => {
    const u = readRealtimeUsage(done);
    if (!u) throw new Error('no usage');
    // gpt-realtime: text 4 / 0.4 / 16, audio 32 / 0.4 / 64 USD per million.
    const expected = (57 * 4 + 256 * 0.4 + 9 * 16 + 92 * 32 + 384 * 0.4 + 23 * 64) / 1e6;
    expect(realtimeCost('openai', 'gpt-realtime', u)).toBeCloseTo(expected, 12);
    expect(realtimeCost('openai', 'gpt-4o-mini-realtime-preview-2024-12-17', u)).toBeGreaterThan(0);
  });

  it('has no cost for an unknown model, nor for audio on a model without audio prices', () => {
    const u = readRealtimeUsage(done);
    if (!u) throw new Error('no usage');
    expect(realtimeCost('openai', 'no-such-model', u)).toBeNull();
    expect(realtimeCost('openai', 'gpt-4o', u)).toBeNull();
    const textOnly = readRealtimeUsage({ input_tokens: 1_000_000, output_tokens: 0 });
    if (!textOnly) throw new Error('no usage');
    expect(realtimeCost('openai', 'gpt-4o', textOnly)).toBe(2.5);
  });
});

describe('realtimeMaxCost', () => {
  const price = { input: 4, output: 16, audio: { input: 32, output: 64 } };

  it('prices text and audio input at their own prices and every output token at the dearer output price', () => {
    const usd = realtimeMaxCost(price, { textTokens: 1_000, audioTokens: 500, outputTokens: 100 });
    expect(usd).toBeCloseTo((1_000 * 4 + 500 * 32 + 100 * 64) / 1e6, 12);
  });

  it('bounds every actual cost within the bound', () => {
    const actual = readRealtimeUsage({
      input_tokens: 1_500,
      output_tokens: 100,
      input_token_details: { text_tokens: 1_000, audio_tokens: 500 },
      output_token_details: { text_tokens: 40, audio_tokens: 60 },
    });
    if (!actual) throw new Error('no usage');
    const cost = realtimeCost('openai', 'gpt-realtime', actual) ?? Number.NaN;
    expect(cost).toBeLessThanOrEqual(
      realtimeMaxCost(price, { textTokens: 1_000, audioTokens: 500, outputTokens: 100 }),
    );
  });

  it('prices audio at the text prices when the model has no audio prices', () => {
    expect(
      realtimeMaxCost({ input: 1, output: 2 }, { textTokens: 10, audioTokens: 10, outputTokens: 10 }),
    ).toBeCloseTo((20 * 1 + 10 * 2) / 1e6, 12);
  });
});
