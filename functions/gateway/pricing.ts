import { logger } from './logger';
import { type ModelPrice, PRICES } from './pricing-data';
import type { Usage } from './usage-log';

const DATED_SNAPSHOT = /-\d{4}-\d{2}-\d{2}$/;
const warned = new Set<string>();

/** The price of a model, by exact name or by its dated snapshot's base name; undefined when unknown. */
export function priceOf(provider: string, model: string): ModelPrice | undefined {
  const models = PRICES[provider]?.models;
  if (!models) return undefined;
  return models[model] ?? models[model.replace(DATED_SNAPSHOT, '')];
}

/** Cost in USD, or null when the model has no price: never a guessed number. */
export function costOf(provider: string, model: string | null, usage: Usage | null): number | null {
  if (!usage || !model) return null;
  const price = priceOf(provider, model);
  if (!price) {
    const key = `${provider}/${model}`;
    if (!warned.has(key)) {
      warned.add(key);
      logger.warn('no price for model; cost is logged as null', { provider, model });
    }
    return null;
  }
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  const fresh = usage.prompt_tokens - cached;
  const usd =
    (fresh * price.input +
      cached * (price.cached_input ?? price.input) +
      usage.completion_tokens * price.output) /
    1_000_000;
  // Twelve decimals keep sub-micro-dollar requests exact enough to sum without float noise.
  return Math.round(usd * 1e12) / 1e12;
}

/** Reads an OpenAI-style usage object; null when absent or malformed. */
export function readUsage(value: unknown): Usage | null {
  if (!value || typeof value !== 'object') return null;
  const u = value as Record<string, unknown>;
  const prompt = u.prompt_tokens;
  const completion = u.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return null;
  const total = typeof u.total_tokens === 'number' ? u.total_tokens : prompt + completion;
  const details = u.prompt_tokens_details as Record<string, unknown> | undefined;
  const cached = typeof details?.cached_tokens === 'number' ? details.cached_tokens : undefined;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    ...(cached !== undefined ? { cached_tokens: cached } : {}),
  };
}
