import type { ProviderAdapter } from '../types';
import { anthropicChat } from './chat-completions';
import { anthropicModels } from './models';

export const anthropic: ProviderAdapter = {
  name: 'anthropic',
  // A custom host replaces this whole base, version path included, as it does for OpenAI.
  baseUrl: 'https://api.anthropic.com/v1',
  headers(target) {
    const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' };
    if (target.apiKey) headers['x-api-key'] = target.apiKey;
    return headers;
  },
  paths: { 'chat.completions': '/messages' },
  requestIdHeader: 'request-id',
  chat: anthropicChat,
  models: anthropicModels,
};
