import { isObject, type Json } from '../shared/openai-shapes';
import type { ModelsTranslation } from '../types';

// Anthropic's model listing (`GET /v1/models`: `{data: [{type, id, display_name, created_at}]}`) as
// OpenAI's `model` objects.

// The most Anthropic gives in one page.
const PAGE = 1000;

function model(entry: unknown): Json {
  const m = isObject(entry) ? entry : {};
  const created = typeof m.created_at === 'string' ? Date.parse(m.created_at) : Number.NaN;
  return {
    id: String(m.id ?? ''),
    object: 'model',
    created: Number.isFinite(created) ? Math.floor(created / 1000) : 0,
    owned_by: 'anthropic',
  };
}

export const anthropicModels: ModelsTranslation = {
  call: (baseUrl, _target, id) => ({
    url: id ? `${baseUrl}/models/${encodeURIComponent(id)}` : `${baseUrl}/models?limit=${PAGE}`,
    headers: {},
  }),
  list: (reply) => (isObject(reply) && Array.isArray(reply.data) ? reply.data.map(model) : []),
  one: model,
};
