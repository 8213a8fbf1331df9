import { isObject, type Json } from '../shared/openai-shapes';
import type { ModelsTranslation } from '../types';
import { bedrockAuth, signedHeaders } from './signing';

// Bedrock's foundation models (`GET /foundation-models` on the control-plane host `bedrock.{region}`,
// not `bedrock-runtime`) as OpenAI's `model` objects. Bedrock gives no creation date: `created` is 0.

function model(entry: unknown): Json {
  const m = isObject(entry) ? entry : {};
  return {
    id: String(m.modelId ?? ''),
    object: 'model',
    created: 0,
    owned_by: typeof m.providerName === 'string' ? m.providerName.toLowerCase() : 'bedrock',
  };
}

export const bedrockModels: ModelsTranslation = {
  async call(baseUrl, target, id) {
    const auth = await bedrockAuth(target);
    const base = baseUrl || `https://bedrock.${auth.region}.amazonaws.com`;
    const url = new URL(`${base}/foundation-models${id ? `/${encodeURIComponent(id)}` : ''}`);
    const headers = { accept: 'application/json' };
    if (auth.kind === 'bearer') {
      return { url: url.toString(), headers: { ...headers, authorization: `Bearer ${auth.token}` } };
    }
    return { url: url.toString(), headers: await signedHeaders(url, '', headers, auth, 'GET') };
  },
  list: (reply) =>
    isObject(reply) && Array.isArray(reply.modelSummaries) ? reply.modelSummaries.map(model) : [],
  one: (reply) => model(isObject(reply) ? reply.modelDetails : undefined),
};
