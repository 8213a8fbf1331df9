import type { ProviderAdapter } from '../types';
import { bedrockChat } from './chat-completions';
import { bedrockModels } from './models';

export const bedrock: ProviderAdapter = {
  name: 'bedrock',
  // The region may come from the credential itself, so the default host is settled when signing; a
  // custom host replaces `https://bedrock-runtime.{region}.amazonaws.com`.
  baseUrl: () => '',
  // Signed per request in `chat.buildCall`: no static auth header.
  headers: () => ({}),
  paths: { 'chat.completions': '/model/{model}/converse' },
  requestIdHeader: 'x-amzn-requestid',
  chat: bedrockChat,
  models: bedrockModels,
};
