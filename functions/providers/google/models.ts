import { isObject, type Json } from '../shared/openai-shapes';
import type { ModelsTranslation } from '../types';

// Gemini's model listing (`GET /v1beta/models`: `{models: [{name: "models/...", ...}]}`) as OpenAI's
// `model` objects. Gemini gives no creation date: `created` is 0.

// The most Gemini gives in one page.
const PAGE = 1000;

function model(entry: unknown): Json {
  const m = isObject(entry) ? entry : {};
  return {
    id: String(m.name ?? '').replace(/^models\//, ''),
    object: 'model',
    created: 0,
    owned_by: 'google',
  };
}

export const googleModels: ModelsTranslation = {
  call: (baseUrl, _target, id) => ({
    url: id
      ? `${baseUrl}/v1beta/models/${encodeURIComponent(id.replace(/^models\//, ''))}`
      : `${baseUrl}/v1beta/models?pageSize=${PAGE}`,
    headers: {},
  }),
  list: (reply) => (isObject(reply) && Array.isArray(reply.models) ? reply.models.map(model) : []),
  one: model,
};
