import type { ProviderAdapter } from '../types';
import { googleChat } from './chat-completions';
import { googleModels } from './models';

export const google: ProviderAdapter = {
  name: 'google',
  // A custom host replaces exactly this; the `/v1beta/models/...` path is added to it.
  baseUrl: 'https://generativelanguage.googleapis.com',
  headers(target): Record<string, string> {
    return target.apiKey ? { 'x-goog-api-key': target.apiKey } : {};
  },
  paths: { 'chat.completions': '/v1beta/models/{model}:generateContent' },
  chat: googleChat,
  models: googleModels,
};
