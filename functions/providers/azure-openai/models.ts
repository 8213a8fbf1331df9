import { isObject, type Json } from '../shared/openai-shapes';
import type { ModelsTranslation } from '../types';

// Azure OpenAI's model listing (`GET /openai/models?api-version=`: items with `created_at`, no
// `owned_by`) as OpenAI's `model` objects.

function model(entry: unknown): Json {
  const m = isObject(entry) ? entry : {};
  const created =
    typeof m.created_at === 'number' ? m.created_at : typeof m.created === 'number' ? m.created : 0;
  return {
    id: String(m.id ?? ''),
    object: 'model',
    created,
    owned_by: typeof m.owned_by === 'string' ? m.owned_by : 'azure-openai',
  };
}

export function azureModels(defaultVersion: string): ModelsTranslation {
  return {
    call: (baseUrl, target, id) => ({
      url: `${baseUrl}/openai/models${id ? `/${encodeURIComponent(id)}` : ''}?api-version=${encodeURIComponent(target.apiVersion ?? defaultVersion)}`,
      headers: {},
    }),
    list: (reply) => (isObject(reply) && Array.isArray(reply.data) ? reply.data.map(model) : []),
    one: model,
  };
}
