import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import {
  chunk,
  completion,
  openSse,
  sendJson,
  sleep,
  sseData,
  startFakeOpenAI,
} from '../support/fake-openai';
import { startFakeRealtime } from '../support/fake-realtime';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, createVirtualKey, waitForLog } from '../support/gateway';
import { openRealtime, refusal } from '../support/realtime-client';

// Every request asks for at most 10,000 output tokens of gpt-4o-mini (0.60 USD per million): its
// reservation is 0.006 USD plus its input bound. The fake answers with 10 prompt and exactly
// `max_tokens` completion tokens, so each actual cost (0.0060015 USD) is within its reservation.
// A limit of 0.0605 USD therefore holds 10 reservations and never an 11th.
const MAX_TOKENS = 10_000;
const LIMIT = 0.0605;
const CONCURRENT = 100;

const { gw, fake } = useGateway({ fake: startFakeOpenAI });
beforeEach(() => {
  fake.use((req, res) => {
    const max = Number(req.body.max_tokens ?? req.body.max_completion_tokens ?? 5);
    sendJson(
      res,
      200,
      completion(String(req.body.model), 'ok', { prompt_tokens: 10, completion_tokens: max }),
    );
  });
});

interface Outcome {
  status: number;
  id: string;
  error?: InstanceType<typeof OpenAI.APIError>;
  headers?: Headers;
}

function ask(
  client: OpenAI,
  body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {},
  headers: Record<string, string> = {},
): Promise<Outcome> {
  return client.chat.completions
    .create(
      {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: MAX_TOKENS,
        ...body,
      },
      { headers },
    )
    .withResponse()
    .then(
      (r) => ({
        status: 200,
        id: r.response.headers.get('x-gateway-request-id') as string,
        headers: r.response.headers,
      }),
      (e: unknown) => {
        if (!(e instanceof OpenAI.APIError)) throw e;
        return { status: e.status ?? 0, id: e.headers?.get('x-gateway-request-id') as string, error: e };
      },
    );
}

async function createWorkspace(slug: string, policy?: unknown) {
  const res = await gw.api('POST', '/workspaces', { name: slug, slug });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  if (policy !== undefined) {
    const patched = await gw.api('PATCH', `/workspaces/${slug}`, { policy });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  }
}

async function createApiKey(workspace: string, policy?: unknown): Promise<{ id: string; key: string }> {
  const res = await gw.api('POST', '/api-keys', {
    name: `key-${workspace}`,
    type: 'workspace',
    workspace,
    scopes: ['completions.write', 'logs.view'],
    ...(policy === undefined ? {} : { policy }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const newKey = (slug: string, body: Record<string, unknown> = {}, workspace?: string) =>
  createVirtualKey(gw, fake.url, slug, body, workspace);

/** A client of `key` routed to the fake OpenAI with the caller's own provider key. */
const direct = (key: string) =>
  gw.client({ gatewayKey: key, headers: { 'x-gateway-custom-host': fake.url } });

/** Polls until `read` stops changing; settlements land just after each reply's last byte. */
async function settled(read: () => Promise<number>): Promise<number> {
  let last = await read();
  for (let i = 0; i < 100; i++) {
    await sleep(30);
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** 100 requests at once: at most 10 are served, the rest refused with 412 naming `param`. */
async function floodServesTen(send: () => Promise<Outcome>, param: string): Promise<Outcome[]> {
  fake.requests.length = 0;
  const results = await Promise.all(Array.from({ length: CONCURRENT }, send));
  const served = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status !== 200);
  expect(served.length).toBe(10);
  expect(fake.requests.length).toBe(10);
  for (const r of refused) {
    expect(r.status).toBe(412);
    expect(r.error?.code).toBe('budget_exceeded');
    expect(r.error?.type).toBe('budget_exceeded');
    expect(r.error?.param).toBe(param);
  }
  return served;
}

describe('budget reservations under concurrency', () => {
  it('a virtual key budget worth 10 requests serves 10 of 100 concurrent ones and never spends past it', async () => {
    await newKey('vk-ten', { budget_limit: LIMIT });
    const client = gw.client({ headers: { 'x-gateway-provider': '@vk-ten' } });
    await floodServesTen(() => ask(client), 'virtual_key');
    const spent = await settled(async () => (await gw.api('GET', '/virtual-keys/vk-ten')).body.spent);
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(LIMIT);
    expect((await gw.api('GET', '/virtual-keys/vk-ten')).body).toMatchObject({
      period: 'all',
      period_start: null,
    });
  });

  it('a workspace budget holds the same way, and its spend is readable on the workspace', async () => {
    await createWorkspace('ws-ten', { budget_limit: LIMIT, budget_period: 'daily' });
    const { key } = await createApiKey('ws-ten');
    await floodServesTen(() => ask(direct(key)), 'workspace');
    const view = async () => (await gw.api('GET', '/workspaces/ws-ten')).body.budget;
    const spent = await settled(async () => (await view()).spent);
    expect(spent).toBeLessThanOrEqual(LIMIT);
    const budget = await view();
    expect(budget).toMatchObject({
      limit: LIMIT,
      reserved: 0,
      period: new Date().toISOString().slice(0, 10),
      period_start: `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`,
    });
    expect(budget.remaining).toBeCloseTo(LIMIT - spent, 10);
  });

  it('an API key budget holds the same way', async () => {
    await createWorkspace('ws-key-budget');
    const { id, key } = await createApiKey('ws-key-budget', { budget_limit: LIMIT });
    await floodServesTen(() => ask(direct(key)), 'api_key');
    const read = async () =>
      (await gw.api('GET', '/api-keys')).body.data.find((k: { id: string }) => k.id === id).budget.spent;
    expect(await settled(read)).toBeLessThanOrEqual(LIMIT);
  });

  it('a per-user budget (user_limits) holds per user, and the user analytics show the spend', async () => {
    await createWorkspace('ws-users', { user_limits: { budget_limit: LIMIT } });
    const { key } = await createApiKey('ws-users');
    await floodServesTen(() => ask(direct(key), { user: 'alice' }), 'user');
    // Another user has a budget of their own.
    expect((await ask(direct(key), { user: 'bob' })).status).toBe(200);
    const aliceCost = async () => {
      const rows = (await gw.api('GET', '/analytics/users', undefined, key)).body.data;
      return rows.find((r: { user: string }) => r.user === 'alice')?.cost ?? 0;
    };
    const cost = await settled(aliceCost);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThanOrEqual(LIMIT);
  });
});

describe('nothing is free by accident', () => {
  it('an unpriced model is refused under a budget, served without one, and priced by a prices override', async () => {
    await newKey('unpriced-budget', { budget_limit: 5 });
    await newKey('unpriced-free');
    const refused = await ask(gw.client({ headers: { 'x-gateway-provider': '@unpriced-budget' } }), {
      model: 'o1-pro',
    });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('model_not_priced');
    expect(refused.error?.param).toBe('model');
    expect(refused.error?.message).toContain('o1-pro');

    const free = await ask(gw.client({ headers: { 'x-gateway-provider': '@unpriced-free' } }), {
      model: 'o1-pro',
    });
    expect(free.status).toBe(200);
    expect(free.headers?.get('x-gateway-cost')).toBeNull();
    expect((await waitForLog(gw, free.id)).cost).toBeNull();

    const patched = await gw.api('PATCH', '/virtual-keys/unpriced-budget', {
      prices: { 'o1-pro': { input: 150, output: 600 } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const priced = await ask(gw.client({ headers: { 'x-gateway-provider': '@unpriced-budget' } }), {
      model: 'o1-pro',
      max_tokens: 100,
    });
    expect(priced.status).toBe(200);
    // 10 prompt and 100 completion tokens at 150 and 600 USD per million.
    expect(Number(priced.headers?.get('x-gateway-cost'))).toBeCloseTo(0.0615, 10);
  });

  it('a stream the client abandons is charged for what it consumed, marked as an estimate', async () => {
    await newKey('abandoned', { budget_limit: 5 });
    fake.use(async (req, res) => {
      openSse(res);
      const model = String(req.body.model);
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(sseData(chunk(model, { content: `word${i} ` })));
        await sleep(20);
      }
      res.end(sseData('[DONE]'));
    });
    // The provider never sends usage: the gateway reads on for it only briefly, then estimates.
    process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS = '100';
    loadSettings();
    let entry: Awaited<ReturnType<typeof waitForLog>>;
    try {
      const stream = await gw
        .client({ headers: { 'x-gateway-provider': '@abandoned' } })
        .chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'go' }],
          stream: true,
        })
        .withResponse();
      const id = stream.response.headers.get('x-gateway-request-id') as string;
      let seen = 0;
      for await (const _ of stream.data) {
        if (++seen === 3) break;
      }
      entry = await waitForLog(gw, id);
    } finally {
      delete process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS;
      loadSettings();
    }
    expect(entry.status).toBe(499);
    expect(entry.usage.estimated).toBe(true);
    expect(entry.usage.prompt_tokens).toBeGreaterThan(0);
    expect(entry.usage.completion_tokens).toBeGreaterThan(0);
    expect(entry.cost).toBeGreaterThan(0);
    const spent = await settled(async () => (await gw.api('GET', '/virtual-keys/abandoned')).body.spent);
    expect(spent).toBeCloseTo(entry.cost, 10);
  });

  it('a stream ends with its cost in the usage chunk, a whole reply carries x-gateway-cost', async () => {
    fake.use((req, res) => {
      if (!req.body.stream) {
        sendJson(
          res,
          200,
          completion(String(req.body.model), 'ok', { prompt_tokens: 1000, completion_tokens: 1000 }),
        );
        return;
      }
      openSse(res);
      res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'ok' }, 'stop', null)));
      res.write(
        sseData({
          id: 'chatcmpl-fake123',
          object: 'chat.completion.chunk',
          created: 1,
          model: req.body.model,
          choices: [],
          usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
        }),
      );
      res.end(sseData('[DONE]'));
    });
    const client = direct(ADMIN_KEY);
    const whole = await ask(client, { max_tokens: 1000 });
    // 1000 tokens each way of gpt-4o-mini: 0.00015 + 0.0006.
    expect(Number(whole.headers?.get('x-gateway-cost'))).toBeCloseTo(0.00075, 12);
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let last: Record<string, unknown> | undefined;
    for await (const c of stream) last = c as unknown as Record<string, unknown>;
    expect(last?.usage).toMatchObject({ total_tokens: 2000 });
    expect((last?.['x-gateway'] as { cost: number } | undefined)?.cost).toBeCloseTo(0.00075, 12);
    // Without usage asked for, the cost still ends the stream, as an SSE comment clients skip.
    const raw = await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': fake.url,
        authorization: 'Bearer sk-provider-key',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
    });
    const text = await raw.text();
    expect(text).toContain(': x-gateway-cost 0.00075\n\n');
    expect(text).not.toContain('"usage":{"prompt_tokens"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);

    // A Responses stream: the cost follows response.completed.
    fake.use((_req, res) => {
      openSse(res);
      const response = {
        id: 'resp_1',
        object: 'response',
        model: 'gpt-4o-mini',
        status: 'completed',
        output: [],
        usage: { input_tokens: 1000, output_tokens: 1000, total_tokens: 2000 },
      };
      res.end(
        `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response })}\n\n`,
      );
    });
    const responses = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': fake.url,
        authorization: 'Bearer sk-provider-key',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream: true }),
    });
    const events = await responses.text();
    expect(events).toContain('"type":"response.completed"');
    expect(events).toContain(': x-gateway-cost 0.00075\n\n');
  });
});

describe('policies callers cannot skip', () => {
  let key: string;
  beforeAll(async () => {
    await createWorkspace('ws-policy');
    const saved = await gw.api('POST', '/configs', {
      name: 'pinned',
      workspace: 'ws-policy',
      config: { override_params: { temperature: 0.1 } },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const patched = await gw.api('PATCH', '/workspaces/ws-policy', {
      policy: {
        allowed_models: ['gpt-4o-mini', 'gpt-4.1*'],
        input_guardrails: [{ type: 'contains', words: ['forbidden'], id: 'ws-words', action: 'deny' }],
        config: saved.body.id,
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.policy).toMatchObject({ allowed_models: ['gpt-4o-mini', 'gpt-4.1*'] });
    ({ key } = await createApiKey('ws-policy', {
      allowed_providers: ['openai'],
      input_guardrails: [{ type: 'contains', words: ['classified'], id: 'key-words', action: 'deny' }],
    }));
  });

  it('applies the workspace and key policies to a request without x-gateway-config', async () => {
    const notAllowed = await ask(direct(key), { model: 'gpt-4o' });
    expect(notAllowed.status).toBe(403);
    expect(notAllowed.error?.code).toBe('model_not_allowed');

    const wsDenied = await ask(direct(key), { messages: [{ role: 'user', content: 'a forbidden word' }] });
    expect(wsDenied.status).toBe(446);
    expect(wsDenied.error?.code).toBe('guardrail_denied');
    const keyDenied = await ask(direct(key), { messages: [{ role: 'user', content: 'classified' }] });
    expect(keyDenied.status).toBe(446);

    const wrongProvider = await ask(
      gw.client({
        gatewayKey: key,
        headers: { 'x-gateway-provider': 'groq', 'x-gateway-custom-host': fake.url },
      }),
    );
    expect(wrongProvider.status).toBe(403);
    expect(wrongProvider.error?.code).toBe('provider_not_allowed');

    fake.reset();
    const served = await ask(direct(key), { model: 'gpt-4.1-mini', temperature: 0.9 });
    expect(served.status).toBe(200);
    expect(fake.requests[0]?.body.temperature).toBe(0.1);
  });

  it('a request config adds checks and cannot remove the policy guardrails or parameters', async () => {
    const config = JSON.stringify({ input_guardrails: [], override_params: { temperature: 0.7 } });
    const denied = await ask(
      direct(key),
      { messages: [{ role: 'user', content: 'forbidden' }] },
      {
        'x-gateway-config': config,
      },
    );
    expect(denied.status).toBe(446);
    fake.reset();
    const served = await ask(direct(key), {}, { 'x-gateway-config': config });
    expect(served.status).toBe(200);
    expect(fake.requests[0]?.body.temperature).toBe(0.1);
  });

  it('guardrails see tool definitions, tool results and tool-call arguments', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'lookup', description: 'Finds forbidden things', parameters: { type: 'object' } },
      },
    ];
    expect((await ask(direct(key), { tools })).status).toBe(446);
    const toolResult = await ask(direct(key), {
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"q":"ok"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'this is forbidden' },
      ],
    });
    expect(toolResult.status).toBe(446);
    const toolArgs = await ask(direct(key), {
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"q":"forbidden"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'fine' },
      ],
    });
    expect(toolArgs.status).toBe(446);
  });

  it('a key policy cannot loosen the workspace policy, and a JWT-less key reads its policy back', async () => {
    const looser = await gw.api('POST', '/api-keys', {
      name: 'looser',
      workspace: 'ws-policy',
      policy: { allowed_models: ['gpt-4o'] },
    });
    expect(looser.status).toBe(400);
    expect(looser.body.error.code).toBe('policy_loosens_workspace');
    const { id } = await createApiKey('ws-policy');
    const patched = await gw.api('PATCH', `/api-keys/${id}`, {
      policy: { allowed_models: ['gpt-4.1-mini'] },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.policy).toEqual({ allowed_models: ['gpt-4.1-mini'] });
    const ws = await gw.api('GET', '/workspaces/ws-policy');
    expect(ws.body.policy.input_guardrails).toHaveLength(1);
  });
});

describe('tokens per minute', () => {
  it('reserves the estimated tokens, settles to actual, and answers 429 with the limit headers', async () => {
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 45) await sleep((60 - intoMinute) * 1000 + 50);
    await createWorkspace('ws-tpm');
    const { key } = await createApiKey('ws-tpm', { rate_limit: { tokens_per_minute: 25_000 } });
    // Each request reserves its 10,000 output tokens plus its input bound, and uses 10,010.
    expect((await ask(direct(key))).status).toBe(200);
    expect((await ask(direct(key))).status).toBe(200);
    const refused = await ask(direct(key));
    expect(refused.status).toBe(429);
    expect(refused.error?.code).toBe('rate_limit_exceeded');
    expect(refused.error?.param).toBe('api_key');
    const retryAfter = Number(refused.error?.headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.error?.headers?.get('x-ratelimit-limit-tokens')).toBe('25000');
    expect(Number(refused.error?.headers?.get('x-ratelimit-remaining-tokens'))).toBeLessThan(10_100);
    // A smaller request still fits what the first two left.
    expect((await ask(direct(key), { max_tokens: 100 })).status).toBe(200);
  });

  it('counts requests per minute on a workspace policy', async () => {
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 50) await sleep((60 - intoMinute) * 1000 + 50);
    await createWorkspace('ws-rpm', { rate_limit: { requests_per_minute: 3 } });
    const { key } = await createApiKey('ws-rpm');
    const results = await Promise.all(Array.from({ length: 6 }, () => ask(direct(key), { max_tokens: 5 })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.find((r) => r.status === 429);
    expect(refused?.error?.headers?.get('x-ratelimit-limit-requests')).toBe('3');
    expect(refused?.error?.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
  });
});

describe('reservation expiry and alerts', () => {
  it('an expired reservation stops holding budget, and its late settlement still adds the actual cost', async () => {
    // 0.0125 USD holds two reservations of about 0.006 USD.
    await newKey('expiring', { budget_limit: 0.0125 });
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    fake.use(async (req, res) => {
      await gate;
      sendJson(
        res,
        200,
        completion(String(req.body.model), 'ok', { prompt_tokens: 10, completion_tokens: MAX_TOKENS }),
      );
    });
    const client = gw.client({ headers: { 'x-gateway-provider': '@expiring' } });
    const arrived = async (n: number) => {
      for (let i = 0; i < 200 && fake.requests.length < n; i++) await sleep(10);
      expect(fake.requests.length).toBe(n);
    };
    // As if the container holding them had died: these reservations are already past their expiry.
    process.env.GATEWAY_RESERVATION_TTL_SECONDS = '-1';
    loadSettings();
    try {
      const held = [ask(client), ask(client)];
      await arrived(2);
      process.env.GATEWAY_RESERVATION_TTL_SECONDS = '900';
      loadSettings();
      const third = ask(client);
      await arrived(3);
      open();
      expect((await Promise.all([...held, third])).map((r) => r.status)).toEqual([200, 200, 200]);
    } finally {
      delete process.env.GATEWAY_RESERVATION_TTL_SECONDS;
      loadSettings();
    }
    const spent = await settled(async () => (await gw.api('GET', '/virtual-keys/expiring')).body.spent);
    expect(spent).toBeCloseTo(3 * 0.0060015, 10);
    expect((await ask(client)).status).toBe(412);
  });

  it('posts one signed webhook when the threshold is crossed and one when the budget is exhausted', async () => {
    const received: Array<{ body: string; signature: string | undefined }> = [];
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push({ body, signature: req.headers['x-gateway-signature'] as string | undefined });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    const secret = 'whsec_0123456789abcdef';
    try {
      await createWorkspace('ws-alerts', {
        budget_limit: 0.0125,
        budget_alert_threshold: 0.4,
        budget_alert_webhook: {
          url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks`,
          secret,
        },
      });
      const view = await gw.api('GET', '/workspaces/ws-alerts');
      expect(view.body.policy.budget_alert_webhook).toEqual({
        url: expect.stringContaining('/hooks'),
        secret_set: true,
      });
      expect(JSON.stringify(view.body)).not.toContain(secret);
      const { key } = await createApiKey('ws-alerts');
      expect((await ask(direct(key))).status).toBe(200);
      expect((await ask(direct(key))).status).toBe(200);
      await settled(async () => (await gw.api('GET', '/workspaces/ws-alerts')).body.budget.spent);
      expect((await ask(direct(key))).status).toBe(412);
      expect((await ask(direct(key))).status).toBe(412);
      for (let i = 0; i < 100 && received.length < 2; i++) await sleep(20);
      await sleep(100);
      expect(received).toHaveLength(2);
      const alerts = received.map((r) => JSON.parse(r.body));
      expect(alerts.map((a) => a.kind).sort()).toEqual(['exhausted', 'threshold']);
      expect(alerts[0]).toMatchObject({ type: 'budget_alert', holder: 'workspace', name: 'ws-alerts' });
      for (const r of received) {
        expect(r.signature).toBe(`sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`);
      }
    } finally {
      await new Promise<void>((r) => hook.close(() => r()));
    }
  });
});

describe('policies on realtime', () => {
  it('refuses a session for a model outside the workspace allowlist, or under an exhausted budget', async () => {
    await createWorkspace('ws-realtime', { allowed_models: ['gpt-realtime-mini'] });
    const { key } = await createApiKey('ws-realtime');
    const headers = { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai' };
    const model = await refusal(openRealtime(gw, fake.url, { query: 'model=gpt-realtime', headers }));
    expect(model.status).toBe(403);
    expect(model.body.error.code).toBe('model_not_allowed');

    // A provider answering past max_tokens is the one way spend passes a limit: the key is then spent.
    const { id, key: spentKey } = await createApiKey('ws-realtime', { budget_limit: 0.0065 });
    fake.use((req, res) =>
      sendJson(
        res,
        200,
        completion(String(req.body.model), 'ok', { prompt_tokens: 10, completion_tokens: 5_000 }),
      ),
    );
    expect((await ask(direct(spentKey), { model: 'gpt-realtime-mini', max_tokens: 2_000 })).status).toBe(200);
    const spent = async () =>
      (await gw.api('GET', '/api-keys')).body.data.find((k: { id: string }) => k.id === id).budget.spent;
    expect(await settled(spent)).toBeGreaterThan(0.0065);
    const budget = await refusal(
      openRealtime(gw, fake.url, {
        query: 'model=gpt-realtime-mini',
        headers: { ...headers, 'x-gateway-api-key': spentKey },
      }),
    );
    expect(budget.status).toBe(412);
    expect(budget.body.error).toMatchObject({ code: 'budget_exceeded', param: 'api_key' });
  });
});

describe('realtime sessions under a workspace budget', () => {
  it('settles each response on the workspace, ends the session once spent, then refuses new ones', async () => {
    const upstream = await startFakeRealtime();
    try {
      // The fake's response costs 0.0468 USD (gpt-realtime), more than the 0.0215 it reserves for 300
      // output tokens (its audio input was never sent): settled, it spends the budget.
      await createWorkspace('ws-rt-budget', { budget_limit: 0.04 });
      const { key } = await createApiKey('ws-rt-budget');
      const headers = {
        'x-gateway-api-key': key,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': upstream.url,
        authorization: 'Bearer sk-upstream',
      };
      const s = await openRealtime(gw, upstream.url, { headers });
      await s.next('session.created');
      s.send({ type: 'response.create', response: { max_output_tokens: 300 } });
      await s.next('response.done');
      const closed = await s.closed;
      expect(closed.code).toBe(4001);
      expect(s.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'budget_exceeded' } });
      const spent = await settled(
        async () => (await gw.api('GET', '/workspaces/ws-rt-budget')).body.budget.spent,
      );
      expect(spent).toBeCloseTo(0.0468, 10);
      const refused = await refusal(openRealtime(gw, upstream.url, { headers }));
      expect(refused.status).toBe(412);
      expect(refused.body.error).toMatchObject({ code: 'budget_exceeded', param: 'workspace' });
    } finally {
      await upstream.close();
    }
  });
});
