import { readFileSync } from 'node:fs';
import type { Usage } from '../core/log-entry';
import { logger } from '../core/logger';
import type { ModelPrice } from '../core/prices';
import { type Settings, settings } from '../core/settings';
import { guardedFetch } from './address-guard';
import { DEFAULT_MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS, PRICES } from './pricing-data';

const DATED_SNAPSHOT = /-\d{4}-\d{2}-\d{2}$/;
// Anthropic-style snapshots: `claude-sonnet-4-5-20250929`.
const DATED_COMPACT = /-\d{8}$/;
// Bedrock cross-region inference profiles: `us.`, `eu.`, `apac.`, `global.` before the model id.
const BEDROCK_GEO = /^(?:us|eu|apac|jp|au|ca|us-gov|global)\./;
const warned = new Set<string>();

/** Prices from a deployment's pricing file or URL, by provider then model; they win over built-ins. */
const overrides = new Map<string, Record<string, ModelPrice>>();

// LiteLLM's `litellm_provider` names, as this gateway names the providers.
const LITELLM_PROVIDERS: Record<string, string> = {
  openai: 'openai',
  text_completion_openai: 'openai',
  azure: 'azure-openai',
  azure_ai: 'azure-openai',
  anthropic: 'anthropic',
  bedrock: 'bedrock',
  bedrock_converse: 'bedrock',
  gemini: 'google',
  groq: 'groq',
  mistral: 'mistral-ai',
  together_ai: 'together-ai',
  fireworks_ai: 'fireworks-ai',
  deepseek: 'deepseek',
  openrouter: 'openrouter',
  perplexity: 'perplexity-ai',
  xai: 'x-ai',
  cerebras: 'cerebras',
  deepinfra: 'deepinfra',
  ollama: 'ollama',
  ollama_chat: 'ollama',
  hosted_vllm: 'vllm',
};

/**
 * Reads a pricing file in LiteLLM's `model_prices_and_context_window.json` format: a map of model name
 * to `input_cost_per_token`, `output_cost_per_token`, `cache_read_input_token_cost` (USD per token) and
 * `litellm_provider`. Returns how many prices it took; entries without both token prices are skipped.
 */
export function applyPricingFile(value: unknown): number {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 0;
  let taken = 0;
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!raw || typeof raw !== 'object') continue;
    const e = raw as Record<string, unknown>;
    const litellm = typeof e.litellm_provider === 'string' ? e.litellm_provider : '';
    const provider = LITELLM_PROVIDERS[litellm] ?? litellm;
    if (
      !provider ||
      typeof e.input_cost_per_token !== 'number' ||
      typeof e.output_cost_per_token !== 'number'
    ) {
      continue;
    }
    // LiteLLM often prefixes a model with its provider (`groq/llama-3.3-70b-versatile`).
    const model = key.startsWith(`${litellm}/`) ? key.slice(litellm.length + 1) : key;
    const price: ModelPrice = {
      input: e.input_cost_per_token * 1_000_000,
      output: e.output_cost_per_token * 1_000_000,
    };
    if (typeof e.cache_read_input_token_cost === 'number') {
      price.cached_input = e.cache_read_input_token_cost * 1_000_000;
    }
    if (typeof e.max_output_tokens === 'number' && e.max_output_tokens > 0) {
      price.max_output_tokens = e.max_output_tokens;
    }
    let models = overrides.get(provider);
    if (!models) {
      models = {};
      overrides.set(provider, models);
    }
    models[model] = price;
    taken++;
  }
  return taken;
}

/** Drops every override (tests). */
export function clearPricingOverrides(): void {
  overrides.clear();
}

/**
 * Loads `GATEWAY_PRICING_FILE` (a path) and `GATEWAY_PRICING_URL` (fetched once, with a timeout) at
 * container start. A failure is logged and the built-in prices stay: a price list never blocks requests.
 */
export async function loadPricingOverrides(
  {
    pricingFile: file,
    pricingUrl: url,
    pricingTimeoutMs: timeout,
  }: Pick<Settings, 'pricingFile' | 'pricingUrl' | 'pricingTimeoutMs'> = settings(),
): Promise<void> {
  if (file) {
    try {
      const n = applyPricingFile(JSON.parse(readFileSync(file, 'utf8')));
      logger.info('pricing file loaded', { file, prices: n });
    } catch (error) {
      logger.warn('pricing file not loaded; built-in prices apply', { file, error: String(error) });
    }
  }
  if (url) {
    try {
      // Through the address guard like every outbound call; a price list is never larger than this.
      const res = await guardedFetch(url, { timeoutMs: timeout, maxBytes: 32 * 1024 * 1024 });
      if (res.status < 200 || res.status > 299) throw new Error(`status ${res.status}`);
      const n = applyPricingFile(JSON.parse(res.body.toString('utf8')));
      logger.info('pricing URL loaded', { url, prices: n });
    } catch (error) {
      logger.warn('pricing URL not loaded; built-in prices apply', { url, error: String(error) });
    }
  }
}

/** Settles once the deployment's price overrides are loaded (at once when there are none). */
export const pricingReady: Promise<void> =
  settings().pricingFile || settings().pricingUrl ? loadPricingOverrides() : Promise.resolve();

function lookup(models: Record<string, ModelPrice> | undefined, model: string): ModelPrice | undefined {
  if (!models) return undefined;
  // Own properties only: a model named `constructor` or `__proto__` must not find Object's members.
  const own = (name: string) => (Object.hasOwn(models, name) ? models[name] : undefined);
  return own(model) ?? own(model.replace(DATED_SNAPSHOT, '')) ?? own(model.replace(DATED_COMPACT, ''));
}

/** Prices an operator set on a virtual key or a workspace, by model name; the first that names the model wins. */
export type OperatorPrices = Array<Record<string, ModelPrice> | undefined>;

/**
 * The price of a model, by exact name or by its dated snapshot's base name; undefined when unknown.
 * Operator prices (virtual key, then workspace) win over the pricing file and the built-in table.
 */
export function priceOf(
  provider: string,
  model: string,
  operator: OperatorPrices = [],
): ModelPrice | undefined {
  for (const prices of operator) {
    const price = lookup(prices, model);
    if (price) return price;
  }
  const names =
    provider === 'bedrock' && BEDROCK_GEO.test(model) ? [model, model.replace(BEDROCK_GEO, '')] : [model];
  for (const name of names) {
    const price =
      lookup(overrides.get(provider), name) ??
      lookup(Object.hasOwn(PRICES, provider) ? PRICES[provider]?.models : undefined, name);
    if (price) return price;
  }
  return undefined;
}

/** Cost in USD, or null when the model has no price: never a guessed number. */
export function costOf(
  provider: string,
  model: string | null,
  usage: Usage | null,
  operator: OperatorPrices = [],
): number | null {
  if (!usage || !model) return null;
  const price = priceOf(provider, model, operator);
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

/** The most tokens one reply of a model can hold, for a reservation when the request sets no limit. */
export function maxOutputTokens(provider: string, model: string, operator: OperatorPrices = []): number {
  const price = priceOf(provider, model, operator);
  return (
    price?.max_output_tokens ??
    MAX_OUTPUT_TOKENS[model] ??
    MAX_OUTPUT_TOKENS[model.replace(DATED_SNAPSHOT, '').replace(DATED_COMPACT, '')] ??
    DEFAULT_MAX_OUTPUT_TOKENS
  );
}

/** The most a request can cost: every input token bound and output token at the model's prices. */
export function maxCostOf(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  const usd = (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
  return Math.round(usd * 1e12) / 1e12;
}

/**
 * An upper bound of the tokens a text holds: its UTF-8 byte count, which no BPE tokenizer exceeds
 * (every token covers at least one byte).
 */
export const tokenBound = (text: string): number => Buffer.byteLength(text, 'utf8');

// More tokens than any one request can use: a provider reporting more is wrong, not expensive.
const ABSURD_TOKENS = 100_000_000;

/** A token count as reported, clamped to 0..ABSURD_TOKENS; `bad` says it had to be. */
function clampTokens(value: number): { n: number; bad: boolean } {
  if (!Number.isFinite(value) || value < 0) return { n: 0, bad: true };
  if (value > ABSURD_TOKENS) return { n: ABSURD_TOKENS, bad: true };
  return { n: Math.round(value), bad: false };
}

/**
 * Reads an OpenAI-style usage object; null when absent or malformed. Negative, non-finite or absurd
 * counts are clamped and the usage is flagged `clamped`, so it is never charged negatively.
 */
export function readUsage(value: unknown): Usage | null {
  if (!value || typeof value !== 'object') return null;
  const u = value as Record<string, unknown>;
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  const prompt = clampTokens(u.prompt_tokens);
  const completion = clampTokens(u.completion_tokens);
  const total = clampTokens(typeof u.total_tokens === 'number' ? u.total_tokens : prompt.n + completion.n);
  const details = u.prompt_tokens_details as Record<string, unknown> | undefined;
  const cached = typeof details?.cached_tokens === 'number' ? clampTokens(details.cached_tokens) : undefined;
  const clamped = prompt.bad || completion.bad || total.bad || !!cached?.bad;
  return {
    prompt_tokens: prompt.n,
    completion_tokens: completion.n,
    total_tokens: total.n,
    ...(cached !== undefined ? { cached_tokens: cached.n } : {}),
    ...(clamped ? { clamped: true } : {}),
  };
}
