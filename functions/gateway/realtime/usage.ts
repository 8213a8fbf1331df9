import type { Usage } from '../../core/log-entry';
import type { ModelPrice } from '../../core/prices';
import { priceOf } from '../pricing';

/** Token counts of realtime responses, as `response.done` reports them in `response.usage`, summed. */
export interface RealtimeUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_token_details: {
    text_tokens: number;
    audio_tokens: number;
    cached_tokens: number;
    cached_tokens_details: { text_tokens: number; audio_tokens: number };
  };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

export function emptyRealtimeUsage(): RealtimeUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    input_token_details: {
      text_tokens: 0,
      audio_tokens: 0,
      cached_tokens: 0,
      cached_tokens_details: { text_tokens: 0, audio_tokens: 0 },
    },
    output_token_details: { text_tokens: 0, audio_tokens: 0 },
  };
}

const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * Reads `response.usage` of a `response.done` event; null when it holds no counts. Missing details are
 * filled so that every token has a modality: unsplit input or output counts as text, and cached tokens
 * without their split count as text first (cached text and audio cost the same on current models).
 */
export function readRealtimeUsage(value: unknown): RealtimeUsage | null {
  const u = record(value);
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined && output === undefined) return null;
  const inputTokens = input ?? 0;
  const outputTokens = output ?? 0;
  const inDetails = record(u.input_token_details);
  const outDetails = record(u.output_token_details);
  const inAudio = Math.min(count(inDetails.audio_tokens) ?? 0, inputTokens);
  const inText = count(inDetails.text_tokens) ?? inputTokens - inAudio;
  const cached = Math.min(count(inDetails.cached_tokens) ?? 0, inputTokens);
  const cachedDetails = record(inDetails.cached_tokens_details);
  const cachedAudio = Math.min(count(cachedDetails.audio_tokens) ?? Math.max(0, cached - inText), inAudio);
  const cachedText = Math.min(count(cachedDetails.text_tokens) ?? cached - cachedAudio, inText);
  const outAudio = Math.min(count(outDetails.audio_tokens) ?? 0, outputTokens);
  const outText = count(outDetails.text_tokens) ?? outputTokens - outAudio;
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: count(u.total_tokens) ?? inputTokens + outputTokens,
    input_token_details: {
      text_tokens: inText,
      audio_tokens: inAudio,
      cached_tokens: cachedText + cachedAudio,
      cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio },
    },
    output_token_details: { text_tokens: outText, audio_tokens: outAudio },
  };
}

export function addRealtimeUsage(a: RealtimeUsage, b: RealtimeUsage): RealtimeUsage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    input_token_details: {
      text_tokens: a.input_token_details.text_tokens + b.input_token_details.text_tokens,
      audio_tokens: a.input_token_details.audio_tokens + b.input_token_details.audio_tokens,
      cached_tokens: a.input_token_details.cached_tokens + b.input_token_details.cached_tokens,
      cached_tokens_details: {
        text_tokens:
          a.input_token_details.cached_tokens_details.text_tokens +
          b.input_token_details.cached_tokens_details.text_tokens,
        audio_tokens:
          a.input_token_details.cached_tokens_details.audio_tokens +
          b.input_token_details.cached_tokens_details.audio_tokens,
      },
    },
    output_token_details: {
      text_tokens: a.output_token_details.text_tokens + b.output_token_details.text_tokens,
      audio_tokens: a.output_token_details.audio_tokens + b.output_token_details.audio_tokens,
    },
  };
}

/** The log entry's `usage`: input and output as prompt and completion, as for every other operation. */
export function asLogUsage(u: RealtimeUsage): Usage {
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.total_tokens,
    cached_tokens: u.input_token_details.cached_tokens,
  };
}

/** Cost in USD from the model's text and audio prices; null when a needed price is unknown. */
export function realtimeCost(provider: string, model: string, usage: RealtimeUsage): number | null {
  const price = priceOf(provider, model);
  if (!price) return null;
  const inD = usage.input_token_details;
  const outD = usage.output_token_details;
  const cachedText = inD.cached_tokens_details.text_tokens;
  const cachedAudio = inD.cached_tokens_details.audio_tokens;
  let usd =
    (inD.text_tokens - cachedText) * price.input +
    cachedText * (price.cached_input ?? price.input) +
    outD.text_tokens * price.output;
  if (inD.audio_tokens > 0 || outD.audio_tokens > 0) {
    if (!price.audio) return null;
    usd +=
      (inD.audio_tokens - cachedAudio) * price.audio.input +
      cachedAudio * (price.audio.cached_input ?? price.audio.input) +
      outD.audio_tokens * price.audio.output;
  }
  // Twelve decimals, as for every other cost, so sums stay free of float noise.
  return Math.round((usd / 1_000_000) * 1e12) / 1e12;
}

/**
 * The most a response can cost: its input bound at the text and audio input prices, and every output
 * token at the dearer of the text and audio output prices.
 */
export function realtimeMaxCost(
  price: ModelPrice,
  bound: { textTokens: number; audioTokens: number; outputTokens: number },
): number {
  const usd =
    bound.textTokens * price.input +
    bound.audioTokens * (price.audio?.input ?? price.input) +
    bound.outputTokens * Math.max(price.output, price.audio?.output ?? 0);
  return Math.round((usd / 1_000_000) * 1e12) / 1e12;
}
