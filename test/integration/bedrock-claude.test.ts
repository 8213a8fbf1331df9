import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_KEY, type TestGateway, waitForLog } from '../support/gateway';
import { AWS_KEYS, type ProviderFakes, startProviderFakes } from '../support/provider-fakes';

// Claude on Bedrock through the real server: Anthropic's model names, thinking and prompt caching as
// Converse takes them, driven by `@anthropic-ai/sdk` and `openai` against the fake Bedrock Runtime.

let fakes: ProviderFakes;
let gw: TestGateway;

beforeAll(async () => {
  fakes = await startProviderFakes();
  gw = fakes.gw;
});
afterAll(async () => {
  await fakes?.stop();
});
beforeEach(() => {
  fakes.reset();
});

const config = (region: string) =>
  JSON.stringify({ provider: 'bedrock', api_key: AWS_KEYS, custom_host: fakes.bedrock.url, region });

const claude = (region = 'eu-west-1') =>
  new Anthropic({
    baseURL: gw.url.replace(/\/v1$/, ''),
    authToken: ADMIN_KEY,
    apiKey: null,
    defaultHeaders: { 'x-gateway-config': config(region) },
    maxRetries: 0,
  });

const pathModel = (i = 0) =>
  decodeURIComponent(/\/model\/([^/]+)\//.exec(fakes.bedrock.requests[i]?.path ?? '')?.[1] ?? '');

describe("Anthropic's model names on Bedrock", () => {
  it('maps a name to the inference profile of the region, streamed and not, and prices it', async () => {
    const ask = {
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user' as const, content: 'Hi' }],
    };
    const { data, response } = await claude('eu-west-1').messages.create(ask).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect(pathModel(0)).toBe('eu.anthropic.claude-sonnet-4-5-20250929-v1:0');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.cost).toBeGreaterThan(0);

    const streamed = await claude('ap-southeast-2')
      .messages.stream({ ...ask, model: 'claude-opus-4-1-20250805' })
      .finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect(pathModel(1)).toBe('apac.anthropic.claude-opus-4-1-20250805-v1:0');
  });

  it('maps dated names on the chat route too, and passes Bedrock ids through as given', async () => {
    const client = gw.client({ headers: { 'x-gateway-config': config('us-east-1') } });
    await client.chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(pathModel(0)).toBe('us.anthropic.claude-3-5-haiku-20241022-v1:0');
    await client.chat.completions.create({
      model: 'anthropic.claude-3-haiku-20240307-v1:0',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(pathModel(1)).toBe('anthropic.claude-3-haiku-20240307-v1:0');
  });
});
