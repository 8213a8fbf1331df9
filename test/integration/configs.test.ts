import { createServer } from 'node:net';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, sendJson, sleep, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const messages = [{ role: 'user' as const, content: 'hi' }];
const { gw, primary, secondary } = useGateway({ primary: startFakeOpenAI, secondary: startFakeOpenAI });
let closedPort: string;

/** A port nothing listens on: connecting to it is refused. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}/v1`;
}

beforeAll(async () => {
  closedPort = await refusedUrl();
});

const failWith = (status: number, headers: Record<string, string> = {}) =>
  ((_req, res) =>
    sendJson(
      res,
      status,
      { error: { message: `failed ${status}`, type: 'server_error' } },
      headers,
    )) as Parameters<FakeOpenAI['use']>[0];

function withConfig(config: unknown, extra: Record<string, string> = {}) {
  return gw.client({
    headers: { 'x-gateway-config': typeof config === 'string' ? config : JSON.stringify(config), ...extra },
  });
}

describe('fallback', () => {
  it('moves to the next target on a 5xx and says which target served', async () => {
    primary.use(failWith(503));
    const config = {
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: primary.url }, { custom_host: secondary.url }],
    };
    const { data, response } = await withConfig(config)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: hi');
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
    expect(response.headers.get('x-gateway-retry-count')).toBe('0');
    expect(primary.requests).toHaveLength(1);
    expect(secondary.requests).toHaveLength(1);
    const entry = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(entry.status).toBe(200);
    expect(entry.attempts).toEqual([
      expect.objectContaining({ target_index: '0', provider: 'openai', status: 503, error: 'failed 503' }),
      expect.objectContaining({ target_index: '1', provider: 'openai', status: 200, error: null }),
    ]);
    for (const a of entry.attempts) expect(a.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('moves on when the connection is refused', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: closedPort }, { custom_host: secondary.url }],
    };
    const { response } = await withConfig(config)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
    const entry = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(entry.attempts[0]).toMatchObject({ target_index: '0', status: 502 });
    expect(entry.attempts[0].error).toMatch(/connection refused/);
  });

  it('keeps a 4xx from the provider without falling back, unless the status is listed', async () => {
    primary.use(failWith(400));
    const targets = [{ custom_host: primary.url }, { custom_host: secondary.url }];
    const err = await withConfig({ strategy: { mode: 'fallback' }, targets })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(secondary.requests).toHaveLength(0);
    const { response } = await withConfig({ strategy: { mode: 'fallback', on_status_codes: [400] }, targets })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
  });

  it('falls back for a stream that fails before its first byte, with nested targets inheriting fields', async () => {
    primary.use(failWith(500));
    const config = {
      custom_host: secondary.url,
      vendor_organization: 'org-root',
      strategy: { mode: 'fallback' },
      targets: [
        { custom_host: primary.url },
        { strategy: { mode: 'fallback' }, targets: [{ custom_host: closedPort }, {}] },
      ],
    };
    const stream = await withConfig(config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: hi');
    expect(secondary.requests).toHaveLength(1);
    expect(secondary.requests[0]?.headers['openai-organization']).toBe('org-root');
    const { response } = await withConfig(config)
      .chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true })
      .withResponse();
    expect(response.headers.get('x-gateway-target-index')).toBe('1.1');
    await response.text();
  });

  it('returns the last error when every target fails', async () => {
    primary.use(failWith(502));
    secondary.use(failWith(503));
    const err = await withConfig({
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: primary.url }, { custom_host: secondary.url }],
    })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-gateway-target-index')).toBe('1');
  });
});

describe('retries', () => {
  it('retries listed statuses with growing backoff, then serves', async () => {
    const times: number[] = [];
    primary.use((req, res) => {
      times.push(Date.now());
      if (times.length < 3) return failWith(503)(req, res);
      return sendJson(res, 200, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'third time' }, finish_reason: 'stop' }],
      });
    });
    const { data, response } = await withConfig({ custom_host: primary.url, retry: { attempts: 3 } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('third time');
    expect(primary.requests).toHaveLength(3);
    expect(response.headers.get('x-gateway-retry-count')).toBe('2');
    expect(response.headers.get('x-gateway-target-index')).toBe('0');
    // Base 200 ms with jitter between half and all of it: 100-200 ms, then 200-400 ms.
    const [a = 0, b = 0, c = 0] = times;
    expect(b - a).toBeGreaterThanOrEqual(90);
    expect(c - b).toBeGreaterThanOrEqual(190);
    const entry = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(entry.attempts.map((x: { status: number }) => x.status)).toEqual([503, 503, 200]);
  });

  it('honours Retry-After, and gives up after the allowed attempts', async () => {
    const times: number[] = [];
    primary.use((req, res) => {
      times.push(Date.now());
      failWith(429, { 'retry-after': '1' })(req, res);
    });
    const err = await withConfig({ custom_host: primary.url, retry: { attempts: 1 } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect(times).toHaveLength(2);
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('does not retry a status it was not told to', async () => {
    primary.use(failWith(500));
    await withConfig({ custom_host: primary.url, retry: { attempts: 2, on_status_codes: [503] } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch(() => undefined);
    expect(primary.requests).toHaveLength(1);
  });
});

describe('loadbalance', () => {
  it('splits requests by weight', async () => {
    const config = JSON.stringify({
      strategy: { mode: 'loadbalance' },
      targets: [
        { custom_host: primary.url, weight: 3 },
        { custom_host: secondary.url, weight: 1 },
      ],
    });
    const client = withConfig(config);
    for (let i = 0; i < 20; i++) {
      await Promise.all(
        Array.from({ length: 10 }, () => client.chat.completions.create({ model: 'gpt-4o-mini', messages })),
      );
    }
    // Expected 150 / 50; the standard deviation is about 6, so 25 is four of them.
    expect(primary.requests.length + secondary.requests.length).toBe(200);
    expect(Math.abs(primary.requests.length - 150)).toBeLessThanOrEqual(25);
  });

  it('never picks a target of weight 0', async () => {
    const client = withConfig({
      strategy: { mode: 'loadbalance' },
      targets: [
        { custom_host: primary.url, weight: 0 },
        { custom_host: secondary.url, weight: 2 },
      ],
    });
    for (let i = 0; i < 10; i++) await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(primary.requests).toHaveLength(0);
  });
});

describe('config validation and saved configs', () => {
  it('lists every bad field of an inline config in one 400', async () => {
    const err = await withConfig({
      strategy: { mode: 'sideways' },
      retry: { attempts: 99 },
      request_timeout: -1,
      colour: 'red',
      targets: [{ weight: -2 }],
    })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const message = (err as Error).message;
    for (const field of [
      'strategy.mode',
      'retry.attempts',
      'request_timeout',
      'colour',
      'targets[0].weight',
    ]) {
      expect(message).toContain(field);
    }
  });

  it('saves, uses, replaces and deletes a config, validated on save', async () => {
    const bad = await gw.api('POST', '/configs', {
      config: { api_key: 'sk-plain', strategy: { mode: 'x' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('api_key');
    expect(bad.body.error.message).toContain('strategy.mode');
    expect(JSON.stringify(bad.body)).not.toContain('sk-plain');

    const created = await gw.api('POST', '/configs', {
      name: 'primary first',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ custom_host: closedPort }, { custom_host: primary.url }],
      },
    });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect((await gw.api('GET', `/configs/${id}`)).body.config.strategy.mode).toBe('fallback');
    expect((await gw.api('GET', '/configs')).body.data.map((c: { id: string }) => c.id)).toContain(id);

    const { response } = await withConfig(id)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
    expect(primary.requests).toHaveLength(1);

    const replaced = await gw.api('PUT', `/configs/${id}`, { config: { custom_host: secondary.url } });
    expect(replaced.status).toBe(200);
    await withConfig(id).chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(secondary.requests).toHaveLength(1);

    expect((await gw.api('DELETE', `/configs/${id}`)).status).toBe(200);
    const gone = await withConfig(id)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect((gone as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unknown_config');
  });

  it('needs the configs scopes', async () => {
    const key = await gw.api('POST', '/api-keys', {
      name: 'no config scopes',
      scopes: ['completions.write'],
    });
    expect((await gw.api('GET', '/configs', undefined, key.body.key)).status).toBe(403);
    expect((await gw.api('POST', '/configs', { config: {} }, key.body.key)).status).toBe(403);
  });

  it('falls back from a virtual key whose budget is exhausted to the next target', async () => {
    primary.use(async (req, res) => {
      await sleep(0);
      sendJson(res, 200, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: String(req.body.model),
        choices: [{ index: 0, message: { role: 'assistant', content: 'vk' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1_000_000 },
      });
    });
    const vk = await gw.api('POST', '/virtual-keys', {
      name: 'tiny',
      slug: 'tiny',
      provider: 'openai',
      key: 'sk-tiny',
      custom_host: primary.url,
      budget_limit: 0.01,
    });
    expect(vk.status).toBe(201);
    const client = withConfig({
      strategy: { mode: 'fallback' },
      targets: [{ virtual_key: 'tiny' }, { custom_host: secondary.url }],
    });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    for (let i = 0; i < 50 && (await gw.api('GET', '/virtual-keys/tiny')).body.spent < 0.01; i++)
      await sleep(20);
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(response.headers.get('x-gateway-target-index')).toBe('1');
    const entry = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(entry.attempts[0]).toMatchObject({ virtual_key: 'tiny', status: 412 });
    expect(entry.virtual_key).toBeNull();
  });
});
