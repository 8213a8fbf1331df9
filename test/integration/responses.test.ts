import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { openSse, sendJson, sleep } from '../support/fake-openai';
import { responseEvents, startFakeApi } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeApi });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
// gpt-4o-mini: $0.15 in, $0.075 cached in, $0.60 out per million tokens.
const COST = (16 * 0.15 + 4 * 0.075 + 10 * 0.6) / 1e6;

describe('Responses API', () => {
  it('creates a response with tools, instructions, image input and reasoning, and logs usage and cost', async () => {
    const tools = [
      {
        type: 'function' as const,
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
      {
        type: 'web_search_preview' as const,
        search_context_size: 'low' as const,
        user_location: { type: 'approximate' as const, country: 'FR', city: 'Paris' },
      },
      {
        type: 'file_search' as const,
        vector_store_ids: ['vs_1'],
        max_num_results: 5,
        filters: { type: 'eq' as const, key: 'k', value: 'v' },
      },
      {
        type: 'mcp' as const,
        server_label: 'docs',
        server_url: 'https://mcp.example.com/sse',
        require_approval: 'never' as const,
      },
    ];
    const input = [
      {
        role: 'user' as const,
        content: [
          { type: 'input_text' as const, text: 'What is in this image?' },
          { type: 'input_image' as const, image_url: 'https://example.com/cat.png', detail: 'auto' as const },
        ],
      },
    ];
    const { data, response } = await client()
      .responses.create({
        model: 'gpt-4o-mini',
        input,
        instructions: 'Be brief.',
        tools,
        tool_choice: 'auto',
        reasoning: { effort: 'low' },
        user: 'alice',
      })
      .withResponse();
    expect(data.output_text).toBe('Hello');
    expect(fake.requests[0]?.pathname).toBe('/v1/responses');
    expect(fake.requests[0]?.json).toMatchObject({
      model: 'gpt-4o-mini',
      input,
      instructions: 'Be brief.',
      tools,
      reasoning: { effort: 'low' },
    });
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      operation: 'responses.create',
      provider: 'openai',
      model: 'gpt-4o-mini',
      user: 'alice',
      status: 200,
      stream: false,
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30, cached_tokens: 4 },
    });
    expect(log.cost).toBeCloseTo(COST, 12);
    expect(log.response.output[0].content[0].annotations[0].url).toBe('https://example.com');
  });

  it('accepts a plain string input', async () => {
    const res = await client().responses.create({ model: 'gpt-4o-mini', input: 'Hello' });
    expect(res.id).toBe('resp_fake123');
    expect(fake.requests[0]?.json.input).toBe('Hello');
  });

  it('refuses a reasoning effort it does not know, naming reasoning.effort', async () => {
    const failure = await client()
      .responses.create({ model: 'o3', input: 'x', reasoning: { effort: 'extreme' as 'low' } })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).status).toBe(400);
    expect((failure as APIError).param).toBe('reasoning.effort');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses an unknown search_context_size and a file_search tool without vector stores', async () => {
    for (const tool of [
      { type: 'web_search_preview', search_context_size: 'huge' },
      { type: 'file_search', vector_store_ids: [] },
    ]) {
      const failure = (await client()
        .responses.create({ model: 'gpt-4o-mini', input: 'x', tools: [tool as never] })
        .catch((e: unknown) => e)) as APIError;
      expect(failure.status).toBe(400);
      expect(failure.param).toMatch(/^tools\[0\]\./);
    }
  });

  it('streams every event in order as it arrives and logs the final response from response.completed', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let winner = '';
    fake.on('POST /v1/responses', async (req, res) => {
      const events = responseEvents(String(req.json.model), ['Hel', 'lo']);
      openSse(res);
      res.write(events[0]);
      winner = await Promise.race([released.then(() => 'client'), sleep(3000).then(() => 'timeout')]);
      for (const e of events.slice(1)) res.write(e);
      res.end();
    });
    const { data: stream, response } = await client()
      .responses.create({ model: 'gpt-4o-mini', input: 'Hi', stream: true })
      .withResponse();
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.created') release();
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(winner).toBe('client');
    expect(text).toBe('Hello');
    expect(types).toEqual(responseEvents('m', ['Hel', 'lo']).map((e) => /^event: (.*)$/m.exec(e)?.[1]));
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      stream: true,
      status: 200,
      usage: { prompt_tokens: 20, completion_tokens: 10, cached_tokens: 4 },
    });
    expect(log.cost).toBeCloseTo(COST, 12);
    expect(log.response.output[0].content[0].text).toBe('Hello');
  });

  it('ends a stream cut before response.completed with an SSE error event, and logs it', async () => {
    fake.on('POST /v1/responses', async (req, res) => {
      openSse(res);
      for (const e of responseEvents(String(req.json.model), ['a']).slice(0, 4)) res.write(e);
      await sleep(20);
      res.socket?.destroy();
    });
    const { data: stream, response } = await client()
      .responses.create({ model: 'gpt-4o-mini', input: 'Hi', stream: true })
      .withResponse();
    const failure = await (async () => {
      try {
        for await (const _ of stream) {
          // drain
        }
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(APIError);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(502);
    expect(log.error.message).toMatch(/connection was reset|stream/);
  });

  it('keeps a provider error status and shape', async () => {
    fake.on('POST /v1/responses', (_req, res) =>
      sendJson(res, 404, {
        error: {
          message: 'The model `nope` does not exist',
          type: 'invalid_request_error',
          code: 'model_not_found',
          param: 'model',
        },
      }),
    );
    const failure = (await client()
      .responses.create({ model: 'nope', input: 'x' })
      .catch((e: unknown) => e)) as APIError;
    expect(failure.status).toBe(404);
    expect(failure.code).toBe('model_not_found');
    expect(failure.headers?.get('x-gateway-error-origin')).toBe('provider');
  });

  it('retrieves, lists input items, cancels and deletes a stored response, each logged', async () => {
    const c = client();
    const { data: got, response } = await c.responses.retrieve('resp_abc').withResponse();
    expect(got).toMatchObject({ id: 'resp_abc', status: 'completed' });
    const items = await c.responses.inputItems.list('resp_abc');
    expect(items.data[0]).toMatchObject({ type: 'message', role: 'user' });
    expect((await c.responses.cancel('resp_abc')).status).toBe('cancelled');
    await c.responses.delete('resp_abc');
    expect(fake.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual([
      'GET /v1/responses/resp_abc',
      'GET /v1/responses/resp_abc/input_items',
      'POST /v1/responses/resp_abc/cancel',
      'DELETE /v1/responses/resp_abc',
    ]);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ operation: 'responses.get', model: 'gpt-4o-mini', status: 200, cost: null });
  });

  it('routes through a virtual key and charges its budget', async () => {
    const vk = await gw.api('POST', '/virtual-keys', {
      name: 'resp',
      slug: 'resp-key',
      provider: 'openai',
      key: 'sk-vk-secret',
      custom_host: fake.url,
      budget_limit: 1,
    });
    expect(vk.status).toBe(201);
    const { response } = await gw
      .client({ headers: { 'x-gateway-provider': '@resp-key' } })
      .responses.create({ model: 'gpt-4o-mini', input: 'Hi' })
      .withResponse();
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-vk-secret');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.virtual_key).toBe('resp-key');
    for (let i = 0; i < 50; i++) {
      const read = await gw.api('GET', '/virtual-keys/resp-key');
      if (read.body.spent > 0) {
        expect(read.body.spent).toBeCloseTo(COST, 12);
        return;
      }
      await sleep(20);
    }
    throw new Error('the virtual key was not charged');
  });
});
