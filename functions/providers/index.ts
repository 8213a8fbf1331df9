import { openai } from './openai/api';
import type { ProviderAdapter } from './types';

const PROVIDERS: Record<string, ProviderAdapter> = { openai };

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

export function findProvider(name: string): ProviderAdapter | undefined {
  return Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
}
