import type { Usage } from '../core/log-entry';
import type { OperatorPrices } from './pricing';

// Prices of the operations that are not priced by chat tokens: images per image (or by token usage when
// the reply reports it), video per second, speech per character, transcription per minute (or tokens),
// embeddings per input token. USD. Data first, then the functions that read it; unknown is null.

export const MEDIA_PRICES = {
  source: 'https://openai.com/api/pricing (standard processing)',
  checked: '2026-11-20',
  openai: {
    /** Per image, by quality then size. `standard` is DALL·E's default quality. */
    imagesPerImage: {
      'dall-e-2': { standard: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } },
      'dall-e-3': {
        standard: { '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 },
        hd: { '1024x1024': 0.08, '1024x1792': 0.12, '1792x1024': 0.12 },
      },
      'gpt-image-1': {
        low: { '1024x1024': 0.011, '1024x1536': 0.016, '1536x1024': 0.016 },
        medium: { '1024x1024': 0.042, '1024x1536': 0.063, '1536x1024': 0.063 },
        high: { '1024x1024': 0.167, '1024x1536': 0.25, '1536x1024': 0.25 },
      },
    } as Record<string, Record<string, Record<string, number>>>,
    /** Per million tokens, when an image model reports token usage. */
    imageTokens: {
      'gpt-image-1': { text_input: 5.0, image_input: 10.0, output: 40.0 },
      'gpt-image-1-mini': { text_input: 2.0, image_input: 2.5, output: 8.0 },
    } as Record<string, { text_input: number; image_input: number; output: number }>,
    /** Per second of video, by size; `*` for any size. */
    videoPerSecond: {
      'sora-2': { '*': 0.1 },
      'sora-2-pro': { '720x1280': 0.3, '1280x720': 0.3, '1024x1792': 0.5, '1792x1024': 0.5 },
    } as Record<string, Record<string, number>>,
    /** Per million characters of input text. */
    speechPerMillionCharacters: { 'tts-1': 15.0, 'tts-1-hd': 30.0 } as Record<string, number>,
    /** Per minute of audio. */
    transcriptionPerMinute: { 'whisper-1': 0.006 } as Record<string, number>,
    /** Per million tokens, when a transcription model reports token usage. */
    transcriptionTokens: {
      'gpt-4o-transcribe': { text_input: 2.5, audio_input: 6.0, output: 10.0 },
      'gpt-4o-mini-transcribe': { text_input: 1.25, audio_input: 3.0, output: 5.0 },
    } as Record<string, { text_input: number; audio_input: number; output: number }>,
    /** Per million input tokens. */
    embeddings: {
      'text-embedding-3-small': 0.02,
      'text-embedding-3-large': 0.13,
      'text-embedding-ada-002': 0.1,
    } as Record<string, number>,
  },
};

export interface Costing {
  usage: Usage | null;
  cost: number | null;
}

type Prices = typeof MEDIA_PRICES.openai;
const DATED_SNAPSHOT = /-\d{4}-\d{2}-\d{2}$/;

function pricesFor(provider: string): Prices | undefined {
  return provider === 'openai' ? MEDIA_PRICES.openai : undefined;
}

function lookup<T>(table: Record<string, T>, model: string | null): T | undefined {
  if (!model) return undefined;
  // Own properties only: a model named `constructor` must not find Object's members.
  const own = (name: string) => (Object.hasOwn(table, name) ? table[name] : undefined);
  return own(model) ?? own(model.replace(DATED_SNAPSHOT, ''));
}

const usd = (value: number) => Math.round(value * 1e12) / 1e12;
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const obj = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const tokens = (prompt: number, completion: number, cached?: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  ...(cached !== undefined ? { cached_tokens: cached } : {}),
});

/**
 * Images: by the token usage the reply reports (gpt-image-1), else per image by model, size and
 * quality as requested (DALL·E defaults: 1024x1024, standard).
 */
export function imageCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
  reply: unknown,
): Costing {
  const prices = pricesFor(provider);
  const body = obj(reply);
  const u = obj(body.usage);
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  if (input !== undefined && output !== undefined) {
    const details = obj(u.input_tokens_details);
    const image = num(details.image_tokens) ?? 0;
    const text = num(details.text_tokens) ?? input - image;
    const usage = tokens(input, output);
    const price = prices && lookup(prices.imageTokens, model);
    if (!price) return { usage, cost: null };
    return {
      usage,
      cost: usd((text * price.text_input + image * price.image_input + output * price.output) / 1e6),
    };
  }
  const images = Array.isArray(body.data) ? body.data.length : 0;
  const table = prices && lookup(prices.imagesPerImage, model);
  if (!table || images === 0) return { usage: null, cost: null };
  const quality = typeof request.quality === 'string' ? request.quality : 'standard';
  const size =
    typeof request.size === 'string' && request.size !== 'auto'
      ? request.size
      : typeof body.size === 'string'
        ? body.size
        : '1024x1024';
  const each = table[quality]?.[size];
  return { usage: null, cost: each === undefined ? null : usd(images * each) };
}

/** Speech: per character of the input text. */
export function speechCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
): Costing {
  const price = lookup(pricesFor(provider)?.speechPerMillionCharacters ?? {}, model);
  const input = typeof request.input === 'string' ? [...request.input].length : 0;
  return { usage: null, cost: price === undefined ? null : usd((input * price) / 1e6) };
}

/**
 * Transcription and translation: token usage when the reply reports it, else the audio's duration
 * (`usage.seconds`, or `duration` of the verbose format) at the per-minute price.
 */
export function transcriptionCost(provider: string, model: string | null, reply: unknown): Costing {
  const prices = pricesFor(provider);
  const body = obj(reply);
  const u = obj(body.usage);
  if (u.type === 'tokens' || num(u.input_tokens) !== undefined) {
    const input = num(u.input_tokens) ?? 0;
    const output = num(u.output_tokens) ?? 0;
    const details = obj(u.input_token_details);
    const audio = num(details.audio_tokens) ?? input;
    const text = num(details.text_tokens) ?? input - audio;
    const usage = tokens(input, output);
    const price = prices && lookup(prices.transcriptionTokens, model);
    if (!price) return { usage, cost: null };
    return {
      usage,
      cost: usd((text * price.text_input + audio * price.audio_input + output * price.output) / 1e6),
    };
  }
  const seconds = num(u.seconds) ?? num(body.duration);
  const perMinute = prices && lookup(prices.transcriptionPerMinute, model);
  if (seconds === undefined || perMinute === undefined) return { usage: null, cost: null };
  return { usage: null, cost: usd((seconds / 60) * perMinute) };
}

/** An embedding model's price per million input tokens: the operator's `input` price first. */
function embeddingPrice(
  provider: string,
  model: string | null,
  operator: OperatorPrices,
): number | undefined {
  for (const prices of operator) {
    const price = prices && lookup(prices, model);
    if (price) return price.input;
  }
  return lookup(pricesFor(provider)?.embeddings ?? {}, model);
}

/** Embeddings: per input token. */
export function embeddingCost(
  provider: string,
  model: string | null,
  reply: unknown,
  operator: OperatorPrices = [],
): Costing {
  const u = obj(obj(reply).usage);
  const prompt = num(u.prompt_tokens);
  if (prompt === undefined) return { usage: null, cost: null };
  const usage = tokens(prompt, 0);
  const price = embeddingPrice(provider, model, operator);
  return { usage, cost: price === undefined ? null : usd((prompt * price) / 1e6) };
}

/** A finished video: its length in seconds at the model's per-second price for its size. */
export function videoCost(provider: string, video: unknown): number | null {
  const v = obj(video);
  const model = typeof v.model === 'string' ? v.model : null;
  const table = lookup(pricesFor(provider)?.videoPerSecond ?? {}, model);
  const seconds = Number(v.seconds);
  if (!table || !Number.isFinite(seconds) || seconds <= 0) return null;
  const perSecond = table[String(v.size)] ?? table['*'];
  return perSecond === undefined ? null : usd(seconds * perSecond);
}

// The most each operation can cost, known before the call, for the budget reservation; null when the
// model has no price. Each is at least what the matching cost function above charges afterwards.

/**
 * Embeddings: every input token bound at the model's price. The bound is the UTF-8 bytes of the input's
 * JSON, which no tokenizer exceeds, and which is also at least the number of token ids of a token array.
 */
export function embeddingMaxCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
  operator: OperatorPrices = [],
): number | null {
  const price = embeddingPrice(provider, model, operator);
  if (price === undefined) return null;
  return usd((Buffer.byteLength(JSON.stringify(request.input ?? ''), 'utf8') * price) / 1e6);
}

// A video's length when the request names none (the API's default), and the longest it makes.
const DEFAULT_VIDEO_SECONDS = 4;
const MAX_VIDEO_SECONDS = 12;

/**
 * Videos: the seconds asked for (the default when none, the longest when unreadable) at the model's
 * per-second price for the size asked for, or its dearest size when that one has no price of its own.
 */
export function videoMaxCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
): number | null {
  const table = lookup(pricesFor(provider)?.videoPerSecond ?? {}, model);
  if (!table) return null;
  const asked = Number(request.seconds ?? DEFAULT_VIDEO_SECONDS);
  const seconds = Number.isFinite(asked) && asked > 0 ? asked : MAX_VIDEO_SECONDS;
  const size = typeof request.size === 'string' ? request.size : '';
  const perSecond = table[size] ?? table['*'] ?? largest(table) ?? 0;
  return usd(seconds * perSecond);
}

// Output tokens of gpt-image-1's largest, highest-quality image (1536x1024, high).
const MAX_IMAGE_OUTPUT_TOKENS = 6240;
// Input tokens one input image can count for a token-priced image model, with room to spare.
const MAX_IMAGE_INPUT_TOKENS = 10_000;

/** The largest number in a nested table of per-image prices. */
const largest = (table: Record<string, number> | undefined): number | undefined =>
  table ? Math.max(...Object.values(table)) : undefined;

/**
 * Images: `n` images at the per-image price of the quality and size asked for (the dearest the model has
 * when either is `auto` or absent and not a DALL·E default), plus, for a model that reports token usage,
 * the prompt's tokens and each input image's.
 */
export function imageMaxCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
  inputImages = 0,
): number | null {
  const prices = pricesFor(provider);
  const perImage = prices && lookup(prices.imagesPerImage, model);
  const perToken = prices && lookup(prices.imageTokens, model);
  if (!perImage && !perToken) return null;
  const n = Math.max(1, Math.floor(Number(request.n ?? 1)) || 1);
  const quality = typeof request.quality === 'string' ? request.quality : 'standard';
  const qualities = perImage?.[quality] ? [perImage[quality]] : Object.values(perImage ?? {});
  const size = typeof request.size === 'string' ? request.size : '';
  const each = Math.max(
    0,
    ...qualities.map((q) => q[size] ?? largest(q) ?? 0),
    perToken ? (MAX_IMAGE_OUTPUT_TOKENS * perToken.output) / 1e6 : 0,
  );
  const prompt = typeof request.prompt === 'string' ? Buffer.byteLength(request.prompt, 'utf8') : 0;
  const input = perToken
    ? (prompt * perToken.text_input + inputImages * MAX_IMAGE_INPUT_TOKENS * perToken.image_input) / 1e6
    : 0;
  return usd(n * each + input);
}

/** Speech: the input's characters are known before the call, so the bound is the cost itself. */
export function speechMaxCost(
  provider: string,
  model: string | null,
  request: Record<string, unknown>,
): number | null {
  return speechCost(provider, model, request).cost;
}

// The fewest bytes a second of audio takes in any format the API accepts (Opus at 6 kbit/s).
const MIN_AUDIO_BYTES_PER_SECOND = 750;
// Token rates of token-priced transcription models per second of audio, with room to spare.
const MAX_AUDIO_TOKENS_PER_SECOND = 25;
const MAX_TEXT_TOKENS_PER_SECOND = 10;

/**
 * Transcription and translation: the longest the uploaded audio can play (its bytes at the lowest
 * bitrate) at the per-minute price, or at the token rates of a token-priced model.
 */
export function transcriptionMaxCost(
  provider: string,
  model: string | null,
  audioBytes: number,
  request: Record<string, unknown>,
): number | null {
  const prices = pricesFor(provider);
  const seconds = audioBytes / MIN_AUDIO_BYTES_PER_SECOND;
  const perToken = prices && lookup(prices.transcriptionTokens, model);
  if (perToken) {
    const prompt = typeof request.prompt === 'string' ? Buffer.byteLength(request.prompt, 'utf8') : 0;
    return usd(
      (prompt * perToken.text_input +
        seconds * MAX_AUDIO_TOKENS_PER_SECOND * perToken.audio_input +
        seconds * MAX_TEXT_TOKENS_PER_SECOND * perToken.output) /
        1e6,
    );
  }
  const perMinute = prices && lookup(prices.transcriptionPerMinute, model);
  return perMinute === undefined ? null : usd((seconds / 60) * perMinute);
}
