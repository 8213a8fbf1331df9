import { anthropic } from './anthropic/api';
import { azureOpenAI } from './azure-openai/api';
import { bedrock } from './bedrock/api';
import { google } from './google/api';
import { openai } from './openai/api';
import { compatibleAdapter, OPENAI_COMPATIBLE } from './openai-compatible';
import type { ProviderAdapter } from './types';

const PROVIDERS: Record<string, ProviderAdapter> = {
  openai,
  'azure-openai': azureOpenAI,
  anthropic,
  bedrock,
  google,
  ...Object.fromEntries(OPENAI_COMPATIBLE.map((row) => [row.name, compatibleAdapter(row)])),
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export function findProvider(name: string): ProviderAdapter | undefined {
  return Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
}
