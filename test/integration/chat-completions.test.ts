import { beforeAll, describe, expect, it } from 'vitest';
import { completion, sendJson, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

beforeAll(async () => {
  // Metadata filters on their own are served by the workspace's metadata indexes.
  const indexed = await gw.api('PATCH', '/workspaces/default', { indexed_metadata: ['team', 'batch'] });
  expect(indexed.status, JSON.stringify(indexed.body)).toBe(200);
});

const viaFake = (extra: Record<string, string> = {}) =>
  gw.client({ headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.url, ...extra } });

describe('chat completions through the gateway', () => {
  it('relays a completion and logs tokens, latency and cost', async () => {
    const { data, response } = await viaFake()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: Hello there');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    const id = response.headers.get('x-gateway-request-id');
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();

    const log = await waitForLog(gw, id as string);
    expect(log).toMatchObject({
      id,
      operation: 'chat.completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      status: 200,
      stream: false,
      workspace: 'default',
      organisation_id: gw.organisationId,
      auth: { type: 'api_key' },
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      error: null,
    });
    // gpt-4o-mini: $0.15 in, $0.60 out per million tokens.
    expect(log.cost).toBeCloseTo((12 * 0.15 + 5 * 0.6) / 1e6, 12);
    expect(log.latency_ms).toBeGreaterThan(0);
    expect(log.upstream_latency_ms).toBeGreaterThan(0);
    expect(log.latency_ms).toBeGreaterThanOrEqual(log.upstream_latency_ms);
    expect(log.request.messages[0].content).toBe('Hello there');
    expect(log.response.choices[0].message.content).toBe('Echo: Hello there');
    expect(new Date(log.timestamp).toISOString()).toBe(log.timestamp);
  });

  it('passes every request field and role through, and returns tool calls untouched', async () => {
    const toolCalls = [
      { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ];
    fake.use((req, res) => {
      const reply = completion(String(req.body.model), '');
      reply.choices[0] = {
        index: 0,
        message: {
          role: 'assistant',
          content: null as unknown as string,
          refusal: null,
          annotations: [],
          tool_calls: toolCalls,
        } as never,
        logprobs: null,
        finish_reason: 'tool_calls',
      };
      sendJson(res, 200, reply);
    });
    const request = {
      model: 'gpt-4.1',
      messages: [
        { role: 'system' as const, content: 'Be brief.' },
        { role: 'developer' as const, content: 'Use tools.' },
        { role: 'user' as const, content: 'Weather in Paris?' },
        {
          role: 'assistant' as const,
          content: null,
          tool_calls: [
            { id: 'call_0', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
        { role: 'tool' as const, tool_call_id: 'call_0', content: '{"temp":21}' },
      ],
      tools: [
        {
          type: 'function' as const,
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string', description: 'City', enum: ['Paris', 'Rome'] } },
              required: ['city'],
            },
          },
        },
      ],
      tool_choice: 'auto' as const,
      user: 'user-42',
      max_tokens: 50,
      max_completion_tokens: 60,
      presence_penalty: 0.5,
      temperature: 0.2,
      seed: 7,
    };
    const data = await viaFake().chat.completions.create(request);
    expect(data.choices[0]?.finish_reason).toBe('tool_calls');
    expect(data.choices[0]?.message.tool_calls).toEqual(toolCalls);
    expect(fake.requests[0]?.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]?.body).toEqual(request);
  });

  it('uses the Authorization header as the provider key and never forwards the gateway key', async () => {
    await viaFake().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    const headers = fake.requests[0]?.headers ?? {};
    expect(headers.authorization).toBe('Bearer sk-provider-key');
    expect(JSON.stringify(headers)).not.toContain(ADMIN_KEY);
    expect(Object.keys(headers).some((h) => h.startsWith('x-gateway-'))).toBe(false);
  });

  it('maps vendor organization and project headers to OpenAI-Organization and OpenAI-Project', async () => {
    await viaFake({
      'x-gateway-vendor-organization': 'org-123',
      'x-gateway-vendor-project': 'proj_456',
    }).chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(fake.requests[0]?.headers['openai-organization']).toBe('org-123');
    expect(fake.requests[0]?.headers['openai-project']).toBe('proj_456');
  });

  it('takes custom_host, api_key and vendor ids from a JSON x-gateway-config, headers winning over config', async () => {
    const config = {
      provider: 'openai',
      custom_host: fake.url,
      api_key: 'sk-from-config',
      vendor_organization: 'org-config',
      vendor_project: 'proj-config',
    };
    await gw
      .client({
        headers: { 'x-gateway-config': JSON.stringify(config), 'x-gateway-vendor-project': 'proj-header' },
      })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    const headers = fake.requests[0]?.headers ?? {};
    expect(headers.authorization).toBe('Bearer sk-from-config');
    expect(headers['openai-organization']).toBe('org-config');
    expect(headers['openai-project']).toBe('proj-header');
  });

  it('applies override_params from the config', async () => {
    const config = { custom_host: fake.url, override_params: { model: 'gpt-4o-mini', temperature: 0 } };
    const { response } = await gw
      .client({ headers: { 'x-gateway-config': JSON.stringify(config) } })
      .chat.completions.create({
        model: 'gpt-4o',
        temperature: 1,
        messages: [{ role: 'user', content: 'x' }],
      })
      .withResponse();
    expect(fake.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0 });
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.model).toBe('gpt-4o-mini');
  });

  it('records user from the body and metadata from x-gateway-metadata, both filterable', async () => {
    const trace = `trace-${Date.now()}`;
    const { response } = await viaFake({
      'x-gateway-metadata': JSON.stringify({ team: 'search', env: 'prod' }),
      'x-gateway-trace-id': trace,
    })
      .chat.completions.create({
        model: 'gpt-4o',
        user: 'alice@example.com',
        messages: [{ role: 'user', content: 'x' }],
      })
      .withResponse();
    expect(response.headers.get('x-gateway-trace-id')).toBe(trace);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.user).toBe('alice@example.com');
    expect(log.metadata).toEqual({ team: 'search', env: 'prod' });
    expect(log.trace_id).toBe(trace);

    const byUser = await gw.api('GET', `/logs?user=${encodeURIComponent('alice@example.com')}`);
    expect(byUser.body.data.map((l: { id: string }) => l.id)).toContain(log.id);
    const byMeta = await gw.api('GET', '/logs?metadata.team=search&metadata.env=prod');
    expect(byMeta.body.data.map((l: { id: string }) => l.id)).toEqual([log.id]);
    const byTrace = await gw.api('GET', `/logs?trace_id=${trace}`);
    expect(byTrace.body.data).toHaveLength(1);
    const none = await gw.api('GET', '/logs?metadata.team=other');
    expect(none.body.data).toEqual([]);
    // A key the workspace does not index cannot be the only filter: no index serves it.
    const unindexed = await gw.api('GET', '/logs?metadata.env=prod');
    expect(unindexed.status).toBe(400);
    expect(unindexed.body.error).toMatchObject({ code: 'unindexed_filter', param: 'metadata' });
  });

  it('logs cost null, never a guess, for a model without a price', async () => {
    const { response } = await viaFake()
      .chat.completions.create({ model: 'my-own-llama-3', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
    expect(log.cost).toBeNull();
  });

  it('prices a dated snapshot by its base model and counts cached prompt tokens at the cached price', async () => {
    fake.use((req, res) => {
      const reply = completion('gpt-4o-2024-08-06', 'ok', { prompt_tokens: 1000, completion_tokens: 100 });
      reply.usage.prompt_tokens_details.cached_tokens = 400;
      sendJson(res, 200, reply);
      void req;
    });
    const { response } = await viaFake()
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    // gpt-4o: $2.50 input, $1.25 cached input, $10 output per million.
    expect(log.cost).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 12);
    expect(log.usage.cached_tokens).toBe(400);
  });

  it('pages logs newest first with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { response } = await viaFake({ 'x-gateway-metadata': '{"batch":"paging"}' })
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `m${i}` }] })
        .withResponse();
      ids.push(response.headers.get('x-gateway-request-id') as string);
    }
    await waitForLog(gw, ids[4] as string);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { object: string; data: Array<{ id: string }>; next_cursor: string | null } } =
        await gw.api('GET', `/logs?metadata.batch=paging&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.object).toBe('list');
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((l) => l.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });
});
