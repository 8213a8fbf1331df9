import { describe, expect, it } from 'vitest';
import { type Handler, sendJson, startFakeUpstream } from '../support/fake-upstream';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';
import { schemaErrors } from '../support/openai-schema';
import { AWS_KEYS } from '../support/provider-fakes';

// `GET /v1/models` and `GET /v1/models/{model}` through the `openai` client on providers whose listings
// are not OpenAI's, against fakes that answer in each provider's own shape.

const anthropicModel = {
  type: 'model',
  id: 'claude-sonnet-4-6',
  display_name: 'Claude Sonnet 4.6',
  created_at: '2026-02-17T00:00:00Z',
};
const geminiModel = {
  name: 'models/gemini-2.5-flash',
  version: '001',
  displayName: 'Gemini 2.5 Flash',
  inputTokenLimit: 1048576,
  outputTokenLimit: 65536,
  supportedGenerationMethods: ['generateContent', 'countTokens'],
};
const bedrockModel = {
  modelArn: 'arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0',
  modelId: 'anthropic.claude-haiku-4-5-20251001-v1:0',
  modelName: 'Claude Haiku 4.5',
  providerName: 'Anthropic',
  inputModalities: ['TEXT', 'IMAGE'],
  outputModalities: ['TEXT'],
  responseStreamingSupported: true,
  modelLifecycle: { status: 'ACTIVE' },
};

const anthropicListing: Handler = (req, res) =>
  req.path.startsWith('/v1/models/')
    ? sendJson(res, 200, anthropicModel)
    : sendJson(res, 200, {
        data: [anthropicModel],
        has_more: false,
        first_id: anthropicModel.id,
        last_id: anthropicModel.id,
      });
const geminiListing: Handler = (req, res) =>
  req.path.startsWith('/v1beta/models/')
    ? sendJson(res, 200, geminiModel)
    : sendJson(res, 200, { models: [geminiModel], nextPageToken: 'next' });
const azureModel = {
  id: 'gpt-4o-2024-08-06',
  object: 'model',
  created_at: 1722902400,
  status: 'succeeded',
  capabilities: { chat_completion: true },
  lifecycle_status: 'generally-available',
};
const azureListing: Handler = (req, res) =>
  req.path.startsWith('/openai/models/')
    ? sendJson(res, 200, azureModel)
    : sendJson(res, 200, { object: 'list', data: [azureModel] });
const bedrockListing: Handler = (req, res) =>
  req.path.startsWith('/foundation-models/')
    ? sendJson(res, 200, { modelDetails: bedrockModel })
    : sendJson(res, 200, { modelSummaries: [bedrockModel] });

// Each fake answers its provider's model listing (and nothing else is asked of them here).
const { gw, anthropic, bedrock, google, azure } = useGateway({
  anthropic: () => startFakeUpstream(anthropicListing),
  bedrock: () => startFakeUpstream(bedrockListing),
  google: () => startFakeUpstream(geminiListing),
  azure: () => startFakeUpstream(azureListing),
});

const cases = [
  {
    provider: 'anthropic',
    fake: () => anthropic,
    headers: () => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${anthropic.url}/v1` }),
    model: { id: 'claude-sonnet-4-6', object: 'model', created: 1771286400, owned_by: 'anthropic' },
    paths: ['/v1/models?limit=1000', '/v1/models/claude-sonnet-4-6'],
    auth: (h: Record<string, unknown>) => expect(h['x-api-key']).toBe('sk-provider-key'),
  },
  {
    provider: 'google',
    fake: () => google,
    headers: () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url }),
    model: { id: 'gemini-2.5-flash', object: 'model', created: 0, owned_by: 'google' },
    paths: ['/v1beta/models?pageSize=1000', '/v1beta/models/gemini-2.5-flash'],
    auth: (h: Record<string, unknown>) => expect(h['x-goog-api-key']).toBe('sk-provider-key'),
  },
  {
    provider: 'bedrock',
    fake: () => bedrock,
    headers: () => ({
      'x-gateway-config': JSON.stringify({
        provider: 'bedrock',
        api_key: AWS_KEYS,
        custom_host: bedrock.url,
        region: 'eu-west-1',
      }),
    }),
    model: {
      id: 'anthropic.claude-haiku-4-5-20251001-v1:0',
      object: 'model',
      created: 0,
      owned_by: 'anthropic',
    },
    paths: ['/foundation-models', '/foundation-models/anthropic.claude-haiku-4-5-20251001-v1%3A0'],
    auth: (h: Record<string, unknown>) =>
      expect(String(h.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d+\/eu-west-1\/bedrock\//,
      ),
  },
  {
    provider: 'azure-openai',
    fake: () => azure,
    headers: () => ({
      'x-gateway-config': JSON.stringify({
        provider: 'azure-openai',
        custom_host: azure.url,
        api_version: '2024-10-21',
      }),
    }),
    model: { id: 'gpt-4o-2024-08-06', object: 'model', created: 1722902400, owned_by: 'azure-openai' },
    paths: [
      '/openai/models?api-version=2024-10-21',
      '/openai/models/gpt-4o-2024-08-06?api-version=2024-10-21',
    ],
    auth: (h: Record<string, unknown>) => expect(h['api-key']).toBe('sk-provider-key'),
  },
];

describe.each(cases)('$provider', (c) => {
  it("lists and retrieves models in OpenAI's shapes", async () => {
    c.fake().requests.length = 0;
    const client = gw.client({ headers: c.headers() });
    const page = await client.models.list();
    expect(page.data).toEqual([c.model]);
    expect(schemaErrors('ListModelsResponse', { object: 'list', data: page.data })).toEqual([]);
    const { data, response } = await client.models.retrieve(c.model.id).withResponse();
    expect(data).toEqual(c.model);
    expect(schemaErrors('Model', data)).toEqual([]);
    expect(c.fake().requests.map((r) => r.path)).toEqual(c.paths);
    c.auth(c.fake().requests[0]?.headers as Record<string, unknown>);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ operation: 'models.get', provider: c.provider, status: 200 });
  });
});

it('the whole listing body is a ListModelsResponse', async () => {
  const res = await fetch(`${gw.url}/models`, {
    headers: {
      'x-gateway-api-key': 'gwk_test_admin_key_0123456789',
      'x-gateway-provider': 'google',
      'x-gateway-custom-host': google.url,
    },
  });
  expect(schemaErrors('ListModelsResponse', await res.json())).toEqual([]);
});
