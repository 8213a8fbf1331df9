import type { ModelPrice } from '../core/prices';
// Built-in prices, USD per million tokens (standard tier, short context). Data only: one block per
// provider, each with its source and the date it was read. Deployments override them with a pricing
// file in LiteLLM's format (GATEWAY_PRICING_FILE or GATEWAY_PRICING_URL, see pricing.ts).

export interface ProviderPrices {
  source: string;
  checked: string;
  models: Record<string, ModelPrice>;
}

const OPENAI_MODELS: Record<string, ModelPrice> = {
  'gpt-5.5': { input: 5.0, cached_input: 0.5, output: 30.0 },
  'gpt-5.5-pro': { input: 30.0, output: 180.0 },
  'gpt-5.4': { input: 2.5, cached_input: 0.25, output: 15.0 },
  'gpt-5.4-mini': { input: 0.75, cached_input: 0.075, output: 4.5 },
  'gpt-5.4-nano': { input: 0.2, cached_input: 0.02, output: 1.25 },
  'gpt-5.4-pro': { input: 30.0, output: 180.0 },
  'gpt-5.2': { input: 1.75, cached_input: 0.175, output: 14.0 },
  'gpt-5.2-pro': { input: 21.0, output: 168.0 },
  'gpt-5.1': { input: 1.25, cached_input: 0.125, output: 10.0 },
  'gpt-5': { input: 1.25, cached_input: 0.125, output: 10.0 },
  'gpt-5-mini': { input: 0.25, cached_input: 0.025, output: 2.0 },
  'gpt-5-nano': { input: 0.05, cached_input: 0.005, output: 0.4 },
  'gpt-5-pro': { input: 15.0, output: 120.0 },
  'gpt-4.1': { input: 2.0, cached_input: 0.5, output: 8.0 },
  'gpt-4.1-mini': { input: 0.4, cached_input: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cached_input: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cached_input: 1.25, output: 10.0 },
  'gpt-4o-mini': { input: 0.15, cached_input: 0.075, output: 0.6 },
  o3: { input: 2.0, cached_input: 0.5, output: 8.0 },
  'o3-pro': { input: 20.0, output: 80.0 },
  'o3-mini': { input: 1.1, cached_input: 0.55, output: 4.4 },
  'o4-mini': { input: 1.1, cached_input: 0.275, output: 4.4 },
  o1: { input: 15.0, cached_input: 7.5, output: 60.0 },
  'gpt-4-turbo': { input: 10.0, output: 30.0 },
  'gpt-4': { input: 30.0, output: 60.0 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  // Realtime models (developers.openai.com/api/docs/models/<model>, read 2026-11-20): text, then audio.
  'gpt-realtime': {
    input: 4.0,
    cached_input: 0.4,
    output: 16.0,
    audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
  },
  'gpt-realtime-1.5': {
    input: 4.0,
    cached_input: 0.4,
    output: 16.0,
    audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
  },
  'gpt-realtime-2': {
    input: 4.0,
    cached_input: 0.4,
    output: 24.0,
    audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
  },
  'gpt-realtime-mini': {
    input: 0.6,
    cached_input: 0.06,
    output: 2.4,
    audio: { input: 10.0, cached_input: 0.3, output: 20.0 },
  },
  'gpt-4o-realtime-preview': {
    input: 5.0,
    cached_input: 2.5,
    output: 20.0,
    audio: { input: 40.0, cached_input: 2.5, output: 80.0 },
  },
  'gpt-4o-mini-realtime-preview': {
    input: 0.6,
    cached_input: 0.3,
    output: 2.4,
    audio: { input: 10.0, cached_input: 0.3, output: 20.0 },
  },
};

export const PRICES: Record<string, ProviderPrices> = {
  openai: {
    source: 'https://openai.com/api/pricing (standard processing)',
    checked: '2026-11-20',
    models: OPENAI_MODELS,
  },
  'azure-openai': {
    // Global Standard deployments list OpenAI's prices; regional and data-zone deployments cost more
    // (override with a pricing file). Replies name the model, not the deployment, so lookups work.
    source: 'https://azure.microsoft.com/en-us/pricing/details/cognitive-services/openai-service/ (Global)',
    checked: '2026-11-20',
    models: OPENAI_MODELS,
  },
  anthropic: {
    // Cache writes (1.25x input for 5 minutes) are charged here at the input price.
    source: 'https://docs.claude.com/en/docs/about-claude/pricing',
    checked: '2026-11-20',
    models: {
      'claude-opus-4-7': { input: 5.0, cached_input: 0.5, output: 25.0 },
      'claude-opus-4-6': { input: 5.0, cached_input: 0.5, output: 25.0 },
      'claude-opus-4-5': { input: 5.0, cached_input: 0.5, output: 25.0 },
      'claude-opus-4-1': { input: 15.0, cached_input: 1.5, output: 75.0 },
      'claude-opus-4-0': { input: 15.0, cached_input: 1.5, output: 75.0 },
      'claude-opus-4': { input: 15.0, cached_input: 1.5, output: 75.0 },
      'claude-sonnet-4-6': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-sonnet-4-5': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-sonnet-4-0': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-sonnet-4': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-3-7-sonnet': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-3-7-sonnet-latest': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'claude-haiku-4-5': { input: 1.0, cached_input: 0.1, output: 5.0 },
      'claude-3-5-haiku': { input: 0.8, cached_input: 0.08, output: 4.0 },
      'claude-3-5-haiku-latest': { input: 0.8, cached_input: 0.08, output: 4.0 },
      'claude-3-haiku': { input: 0.25, cached_input: 0.03, output: 1.25 },
    },
  },
  bedrock: {
    // On-demand, us-east-1, standard tier; cross-region profile prefixes (`us.`, `eu.`, `global.`) are
    // looked up without the prefix. Other regions can differ: override with a pricing file.
    source: 'https://aws.amazon.com/bedrock/pricing/ (on-demand, us-east-1)',
    checked: '2026-11-20',
    models: {
      'anthropic.claude-opus-4-5-20251101-v1:0': { input: 5.0, cached_input: 0.5, output: 25.0 },
      'anthropic.claude-opus-4-1-20250805-v1:0': { input: 15.0, cached_input: 1.5, output: 75.0 },
      'anthropic.claude-sonnet-4-5-20250929-v1:0': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'anthropic.claude-sonnet-4-20250514-v1:0': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'anthropic.claude-3-7-sonnet-20250219-v1:0': { input: 3.0, cached_input: 0.3, output: 15.0 },
      'anthropic.claude-haiku-4-5-20251001-v1:0': { input: 1.0, cached_input: 0.1, output: 5.0 },
      'anthropic.claude-3-5-haiku-20241022-v1:0': { input: 0.8, cached_input: 0.08, output: 4.0 },
      'anthropic.claude-3-haiku-20240307-v1:0': { input: 0.25, output: 1.25 },
      'amazon.nova-premier-v1:0': { input: 2.5, cached_input: 0.625, output: 12.5 },
      'amazon.nova-pro-v1:0': { input: 0.8, cached_input: 0.2, output: 3.2 },
      'amazon.nova-lite-v1:0': { input: 0.06, cached_input: 0.015, output: 0.24 },
      'amazon.nova-micro-v1:0': { input: 0.035, cached_input: 0.00875, output: 0.14 },
      'meta.llama3-3-70b-instruct-v1:0': { input: 0.72, output: 0.72 },
      'meta.llama4-maverick-17b-instruct-v1:0': { input: 0.24, output: 0.97 },
      'mistral.mistral-large-2407-v1:0': { input: 2.0, output: 6.0 },
      'deepseek.r1-v1:0': { input: 1.35, output: 5.4 },
      'openai.gpt-oss-120b-1:0': { input: 0.15, output: 0.6 },
    },
  },
  google: {
    // Paid tier, prompts up to 200k tokens; longer prompts cost more on the Pro models.
    source: 'https://ai.google.dev/gemini-api/docs/pricing',
    checked: '2026-11-20',
    models: {
      'gemini-3-pro-preview': { input: 2.0, cached_input: 0.2, output: 12.0 },
      'gemini-3-flash-preview': { input: 0.5, cached_input: 0.05, output: 3.0 },
      'gemini-2.5-pro': { input: 1.25, cached_input: 0.125, output: 10.0 },
      'gemini-2.5-flash': { input: 0.3, cached_input: 0.03, output: 2.5 },
      'gemini-2.5-flash-lite': { input: 0.1, cached_input: 0.01, output: 0.4 },
      'gemini-2.0-flash': { input: 0.1, cached_input: 0.025, output: 0.4 },
      'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
    },
  },
  groq: {
    // Only models whose price a dated public source confirms; others log cost null.
    source: 'https://groq.com/pricing',
    checked: '2026-11-20',
    models: {
      'openai/gpt-oss-120b': { input: 0.15, cached_input: 0.075, output: 0.6 },
      'moonshotai/kimi-k2-instruct-0905': { input: 1.0, output: 3.0 },
    },
  },
  'mistral-ai': {
    // `-latest` aliases follow Mistral's current model of each line (Medium latest is Medium 3.5).
    source: 'https://mistral.ai/pricing#api-pricing',
    checked: '2026-11-20',
    models: {
      'mistral-large-latest': { input: 0.5, output: 1.5 },
      'mistral-medium-latest': { input: 1.5, output: 7.5 },
      'mistral-small-latest': { input: 0.1, output: 0.3 },
      'magistral-medium-latest': { input: 2.0, output: 5.0 },
      'magistral-small-latest': { input: 0.5, output: 1.5 },
      'codestral-latest': { input: 0.3, output: 0.9 },
      'devstral-medium-latest': { input: 0.4, output: 2.0 },
      'ministral-8b-latest': { input: 0.15, output: 0.15 },
      'ministral-3b-latest': { input: 0.1, output: 0.1 },
    },
  },
  'together-ai': {
    source: 'https://www.together.ai/pricing (serverless inference)',
    checked: '2026-11-20',
    models: {
      'meta-llama/Llama-3.3-70B-Instruct-Turbo': { input: 0.88, output: 0.88 },
    },
  },
  'fireworks-ai': {
    // Named rows of the serverless table; the Llama models are priced by size (4B-16B, over 16B).
    source: 'https://docs.fireworks.ai/serverless/pricing (standard tier)',
    checked: '2026-11-20',
    models: {
      'accounts/fireworks/models/llama-v3p3-70b-instruct': { input: 0.9, output: 0.9 },
      'accounts/fireworks/models/llama-v3p1-8b-instruct': { input: 0.2, output: 0.2 },
      'accounts/fireworks/models/deepseek-v3': { input: 0.56, cached_input: 0.28, output: 1.68 },
      'accounts/fireworks/models/gpt-oss-120b': { input: 0.15, cached_input: 0.015, output: 0.6 },
    },
  },
  deepseek: {
    // One price for both aliases since DeepSeek-V3.2; "cache hit" is the cached input price.
    source: 'https://api-docs.deepseek.com/quick_start/pricing',
    checked: '2026-11-20',
    models: {
      'deepseek-chat': { input: 0.28, cached_input: 0.028, output: 0.42 },
      'deepseek-reasoner': { input: 0.28, cached_input: 0.028, output: 0.42 },
    },
  },
  openrouter: {
    // OpenRouter passes the underlying provider's price through; only routes read on a model page.
    source: 'https://openrouter.ai/openai/gpt-5',
    checked: '2026-11-20',
    models: {
      'openai/gpt-5': { input: 1.25, cached_input: 0.125, output: 10.0 },
    },
  },
  'perplexity-ai': {
    // Token prices only: Perplexity also bills a per-request search fee that is not counted here.
    source: 'https://docs.perplexity.ai/getting-started/pricing',
    checked: '2026-11-20',
    models: {
      sonar: { input: 1.0, output: 1.0 },
      'sonar-pro': { input: 3.0, output: 15.0 },
      'sonar-reasoning': { input: 1.0, output: 5.0 },
      'sonar-reasoning-pro': { input: 2.0, output: 8.0 },
      'sonar-deep-research': { input: 2.0, output: 8.0 },
    },
  },
  'x-ai': {
    source: 'https://docs.x.ai/developers/pricing',
    checked: '2026-11-20',
    models: {
      'grok-4.3': { input: 1.25, cached_input: 0.2, output: 2.5 },
      'grok-4.20-0309-reasoning': { input: 1.25, cached_input: 0.2, output: 2.5 },
      'grok-4.20-0309-non-reasoning': { input: 1.25, cached_input: 0.2, output: 2.5 },
      'grok-4-1-fast-reasoning': { input: 0.2, cached_input: 0.05, output: 0.5 },
      'grok-4-1-fast-non-reasoning': { input: 0.2, cached_input: 0.05, output: 0.5 },
      'grok-4-0709': { input: 3.0, cached_input: 0.75, output: 15.0 },
      'grok-code-fast-1': { input: 0.2, cached_input: 0.02, output: 1.5 },
      'grok-3': { input: 3.0, cached_input: 0.75, output: 15.0 },
      'grok-3-mini': { input: 0.3, cached_input: 0.075, output: 0.5 },
    },
  },
  cerebras: {
    // No price confirmed by a dated public source yet; the Llama and Qwen models listed before are
    // retired. Cost is logged as null until a pricing file supplies one.
    source: 'https://www.cerebras.ai/pricing (developer tier)',
    checked: '2026-11-20',
    models: {},
  },
  deepinfra: {
    source: 'https://deepinfra.com/pricing',
    checked: '2026-11-20',
    models: {
      'meta-llama/Llama-3.3-70B-Instruct-Turbo': { input: 0.1, output: 0.32 },
    },
  },
  // ollama and vllm run on the deployment's own hardware: no token price, so cost is logged as null.
};

/**
 * The max output tokens column of the built-in models (providers' model pages and LiteLLM's
 * `max_output_tokens`, read 2026-11-22), by model name whatever the provider. A priced model missing
 * here reserves DEFAULT_MAX_OUTPUT_TOKENS.
 */
export const MAX_OUTPUT_TOKENS: Record<string, number> = {
  'gpt-5.5': 128_000,
  'gpt-5.5-pro': 272_000,
  'gpt-5.4': 128_000,
  'gpt-5.4-mini': 128_000,
  'gpt-5.4-nano': 128_000,
  'gpt-5.4-pro': 272_000,
  'gpt-5.2': 128_000,
  'gpt-5.2-pro': 272_000,
  'gpt-5.1': 128_000,
  'gpt-5': 128_000,
  'gpt-5-mini': 128_000,
  'gpt-5-nano': 128_000,
  'gpt-5-pro': 272_000,
  'gpt-4.1': 32_768,
  'gpt-4.1-mini': 32_768,
  'gpt-4.1-nano': 32_768,
  'gpt-4o': 16_384,
  'gpt-4o-mini': 16_384,
  o3: 100_000,
  'o3-pro': 100_000,
  'o3-mini': 100_000,
  'o4-mini': 100_000,
  o1: 100_000,
  'gpt-4-turbo': 4_096,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 4_096,
  'gpt-realtime': 32_000,
  'gpt-realtime-mini': 32_000,
  'claude-opus-4-7': 128_000,
  'claude-opus-4-6': 128_000,
  'claude-opus-4-5': 64_000,
  'claude-opus-4-1': 32_000,
  'claude-opus-4-0': 32_000,
  'claude-opus-4': 32_000,
  'claude-sonnet-4-6': 64_000,
  'claude-sonnet-4-5': 64_000,
  'claude-sonnet-4-0': 64_000,
  'claude-sonnet-4': 64_000,
  'claude-3-7-sonnet': 128_000,
  'claude-3-7-sonnet-latest': 128_000,
  'claude-haiku-4-5': 64_000,
  'claude-3-5-haiku': 8_192,
  'claude-3-5-haiku-latest': 8_192,
  'claude-3-haiku': 4_096,
  'gemini-3-pro-preview': 65_536,
  'gemini-3-flash-preview': 65_536,
  'gemini-2.5-pro': 65_536,
  'gemini-2.5-flash': 65_536,
  'gemini-2.5-flash-lite': 65_536,
  'gemini-2.0-flash': 8_192,
  'gemini-2.0-flash-lite': 8_192,
  'deepseek-chat': 8_192,
  'deepseek-reasoner': 65_536,
};

/** What a priced model without a max output tokens entry reserves. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;
