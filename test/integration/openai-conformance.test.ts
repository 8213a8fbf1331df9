import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../support/fake-anthropic';
import { startFakeBedrock } from '../support/fake-bedrock';
import { GEMINI_USAGE, startFakeGoogle } from '../support/fake-google';
import { responseEvents, startFakeApi } from '../support/fake-openai-api';
import { sendJson } from '../support/fake-upstream';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';
import { schemaErrors } from '../support/openai-schema';
import { AWS_KEYS } from '../support/provider-fakes';

// The bodies the gateway writes itself (translated replies and chunks, its errors, its stream events),
// checked against OpenAI's published OpenAPI schemas, and the smaller OpenAI conformance points.

const { gw, anthropic, bedrock, google, api } = useGateway({
  anthropic: startFakeAnthropic,
  bedrock: startFakeBedrock,
  google: startFakeGoogle,
  api: startFakeApi,
});

const routes: Array<{ provider: string; model: string; headers: () => Record<string, string> }> = [
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    headers: () => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${anthropic.url}/v1` }),
  },
  {
    provider: 'bedrock',
    model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
    headers: () => ({
      'x-gateway-config': JSON.stringify({
        provider: 'bedrock',
        api_key: AWS_KEYS,
        custom_host: bedrock.url,
        region: 'eu-west-1',
      }),
    }),
  },
  {
    provider: 'google',
    model: 'gemini-2.5-flash',
    headers: () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url }),
  },
];

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe.each(routes)('translated $provider bodies conform to OpenAI schemas', (r) => {
  it('a whole reply, with and without tool calls', async () => {
    const client = gw.client({ headers: r.headers() });
    for (const tools of [undefined, [weatherTool]]) {
      const reply = await client.chat.completions.create({
        model: r.model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        ...(tools ? { tools } : {}),
      });
      expect(schemaErrors('CreateChatCompletionResponse', reply)).toEqual([]);
    }
  });

  it('every streamed chunk, usage chunk included', async () => {
    const stream = await gw.client({ headers: r.headers() }).chat.completions.create({
      model: r.model,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      expect(schemaErrors('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    }
    expect(chunks).toBeGreaterThan(2);
  });
});

describe("the gateway's own errors conform to ErrorResponse", () => {
  it.each([
    ['a bad key', { 'x-gateway-api-key': 'gwk_nope' }, '/chat/completions', 401],
    ['an unknown route', { 'x-gateway-api-key': ADMIN_KEY }, '/nowhere', 404],
    ['a bad body', { 'x-gateway-api-key': ADMIN_KEY }, '/chat/completions', 400],
  ])('%s', async (_name, headers, path, status) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini' }),
    });
    expect(res.status).toBe(status);
    expect(schemaErrors('ErrorResponse', await res.json())).toEqual([]);
  });
});

describe('a Gemini safety block', () => {
  const blocked = {
    promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
    usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'blocked1',
  };
  const headers = () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url });

  it('is one choice with finish_reason content_filter, whole or streamed', async () => {
    google.use((req, res) => {
      if (!req.path.includes(':streamGenerateContent')) return sendJson(res, 200, blocked);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
    });
    const client = gw.client({ headers: headers() });
    const ask = {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user' as const, content: 'Something bad' }],
    };
    const reply = await client.chat.completions.create(ask);
    expect(reply.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
    expect(schemaErrors('CreateChatCompletionResponse', reply)).toEqual([]);

    const finishes: unknown[] = [];
    for await (const chunk of await client.chat.completions.create({ ...ask, stream: true })) {
      for (const c of chunk.choices) if (c.finish_reason) finishes.push(c.finish_reason);
    }
    expect(finishes).toEqual(['content_filter']);

    const message = await new Anthropic({
      baseURL: gw.url.replace(/\/v1$/, ''),
      authToken: ADMIN_KEY,
      apiKey: null,
      defaultHeaders: headers(),
    }).messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Something bad' }],
    });
    expect(message).toMatchObject({ content: [], stop_reason: 'refusal' });
  });

  it('keeps normal replies as they were', async () => {
    const reply = await gw.client({ headers: headers() }).chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(reply.usage?.prompt_tokens).toBe(GEMINI_USAGE.promptTokenCount);
  });
});

describe('OpenAI-Organization and OpenAI-Project', () => {
  const ask = (client: OpenAI) => client.responses.create({ model: 'gpt-4o-mini', input: 'Hi' });
  const client = (
    options: { organization?: string; project?: string },
    headers: Record<string, string> = {},
  ) =>
    new OpenAI({
      baseURL: gw.url,
      apiKey: 'sk-provider',
      maxRetries: 0,
      ...options,
      defaultHeaders: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': api.url,
        ...headers,
      },
    });

  it("the openai client's organization and project reach the provider", async () => {
    await ask(client({ organization: 'org-client', project: 'proj-client' }));
    expect(api.requests[0]?.headers['openai-organization']).toBe('org-client');
    expect(api.requests[0]?.headers['openai-project']).toBe('proj-client');
  });

  it('x-gateway-vendor-* wins over them, and they win over a config', async () => {
    await ask(
      client(
        { organization: 'org-client', project: 'proj-client' },
        {
          'x-gateway-vendor-organization': 'org-gateway',
          'x-gateway-config': JSON.stringify({ vendor_project: 'proj-config' }),
        },
      ),
    );
    expect(api.requests[0]?.headers['openai-organization']).toBe('org-gateway');
    expect(api.requests[0]?.headers['openai-project']).toBe('proj-client');
  });
});

describe('Responses stream events', () => {
  it('the error event the gateway writes carries the next sequence_number, as ResponseErrorEvent', async () => {
    api.on('POST /v1/responses', async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const e of responseEvents(String(req.json.model), ['a']).slice(0, 4)) res.write(e);
      res.end();
    });
    const res = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': api.url,
        authorization: 'Bearer sk-x',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Hi', stream: true }),
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.includes('data: '))
      .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4]);
    const last = events[4];
    expect(last.type).toBe('error');
    expect(schemaErrors('ResponseErrorEvent', last)).toEqual([]);
  });
});
