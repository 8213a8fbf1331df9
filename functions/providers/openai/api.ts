import type { ProviderAdapter, ProviderTarget } from '../types';

/** Headers of the OpenAI wire format, shared by every OpenAI-compatible provider. */
export function openAIHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  if (target.organization) headers['openai-organization'] = target.organization;
  if (target.project) headers['openai-project'] = target.project;
  return headers;
}

export const openai: ProviderAdapter = {
  name: 'openai',
  baseUrl: 'https://api.openai.com/v1',
  headers: openAIHeaders,
  paths: { 'chat.completions': '/chat/completions' },
};
