import { openAIHeaders } from './openai/api';
import type { ProviderAdapter } from './types';

// Providers that speak the OpenAI Chat Completions wire format. Adding one is one row: its name, its
// base URL (null when it is self-hosted and needs a custom host) and, if not `Authorization: Bearer`,
// the header that carries its key.

interface CompatibleProvider {
  name: string;
  baseUrl: string | null;
  authHeader?: string;
  /** Self-hosted servers: the custom host is the server root, and `/v1` is added when missing. */
  addV1?: boolean;
}

export const OPENAI_COMPATIBLE: CompatibleProvider[] = [
  { name: 'groq', baseUrl: 'https://api.groq.com/openai/v1' },
  { name: 'mistral-ai', baseUrl: 'https://api.mistral.ai/v1' },
  { name: 'together-ai', baseUrl: 'https://api.together.xyz/v1' },
  { name: 'fireworks-ai', baseUrl: 'https://api.fireworks.ai/inference/v1' },
  { name: 'deepseek', baseUrl: 'https://api.deepseek.com' },
  { name: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' },
  { name: 'perplexity-ai', baseUrl: 'https://api.perplexity.ai' },
  { name: 'x-ai', baseUrl: 'https://api.x.ai/v1' },
  { name: 'cerebras', baseUrl: 'https://api.cerebras.ai/v1' },
  { name: 'deepinfra', baseUrl: 'https://api.deepinfra.com/v1/openai' },
  { name: 'ollama', baseUrl: null, addV1: true },
  { name: 'vllm', baseUrl: null, addV1: true },
];

const withV1 = (host: string) => (/\/v1$/.test(host) ? host : `${host}/v1`);

export function compatibleAdapter(row: CompatibleProvider): ProviderAdapter {
  return {
    name: row.name,
    baseUrl: row.baseUrl ?? undefined,
    ...(row.addV1 ? { hostBase: withV1 } : {}),
    headers(target) {
      if (!row.authHeader) return openAIHeaders(target);
      return target.apiKey ? { [row.authHeader]: target.apiKey } : {};
    },
    paths: { 'chat.completions': '/chat/completions' },
  };
}
