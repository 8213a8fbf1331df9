import { beforeEach, describe, expect, it } from 'vitest';
import { startFakeRealtime } from '../support/fake-realtime';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';
import { finalLog as finalLogOf, openRealtime, refusal } from '../support/realtime-client';

// gpt-realtime: 100 text + 1000 audio in, 100 text + 200 audio out =
// (100 * 4 + 1000 * 32 + 100 * 16 + 200 * 64) / 1e6 USD.
const RESPONSE_COST = 0.0468;

const { gw, fake } = useGateway({ fake: startFakeRealtime });

const open = (options?: Parameters<typeof openRealtime>[2]) => openRealtime(gw, fake.url, options);
const finalLog = (id: string) => finalLogOf(gw, id);

async function createKey(slug: string, body: Record<string, unknown> = {}) {
  const res = await gw.api('POST', '/virtual-keys', {
    name: slug,
    slug,
    provider: 'openai',
    key: `sk-${slug}`,
    custom_host: fake.url,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

describe('realtime relay', () => {
  it('relays a session both ways in order, and logs its usage, cost and configuration', async () => {
    const s = await open({
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.url,
        authorization: 'Bearer sk-upstream',
        'x-gateway-metadata': JSON.stringify({ _user: 'alice', team: 'voice' }),
      },
    });
    expect(s.requestId).toMatch(/^[0-9A-Z]{26}$/);
    await s.next('session.created');
    const upstream = fake.sessions[0];
    expect(upstream?.url).toBe('/v1/realtime?model=gpt-realtime');
    expect(upstream?.headers.authorization).toBe('Bearer sk-upstream');
    expect(upstream?.headers['x-gateway-api-key']).toBeUndefined();

    const session = { instructions: 'Be brief.', voice: 'alloy', modalities: ['text', 'audio'] };
    s.send({ type: 'session.update', session });
    expect((await s.next('session.updated')).session).toMatchObject(session);

    // Fifty appends, each a distinct base64 chunk: the provider must hear them in this order.
    const chunks = Array.from({ length: 50 }, (_, i) =>
      Buffer.from(`chunk-${i}-`.padEnd(3000, '.')).toString('base64'),
    );
    for (const audio of chunks) s.send({ type: 'input_audio_buffer.append', audio });
    s.send({ type: 'input_audio_buffer.commit' });
    await s.next('input_audio_buffer.committed');
    expect(upstream?.audio).toBe(chunks.join(''));

    s.send({ type: 'response.create' });
    await s.next('response.done');
    expect(s.events.map((e) => e.type)).toEqual([
      'session.created',
      'session.updated',
      'input_audio_buffer.committed',
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.done',
    ]);
    expect(s.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).toEqual([
      'Hello',
      ' there',
      '!',
    ]);

    s.ws.close(1000);
    expect((await s.closed).code).toBe(1000);
    expect((await upstream?.closed)?.code).toBe(1000);
    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({
      id: s.requestId,
      operation: 'realtime',
      provider: 'openai',
      model: 'gpt-realtime',
      status: 200,
      stream: true,
      user: 'alice',
      metadata: { _user: 'alice', team: 'voice' },
      usage: { prompt_tokens: 1_100, completion_tokens: 300, total_tokens: 1_400, cached_tokens: 0 },
      request: { model: 'gpt-realtime', session },
      response: {
        events: { client: 53, upstream: 8 },
        responses: 1,
        usage: {
          input_token_details: { text_tokens: 100, audio_tokens: 1_000 },
          output_token_details: { text_tokens: 100, audio_tokens: 200 },
        },
        close: { code: 1000, reason: 'client_closed', initiator: 'client' },
      },
      error: null,
    });
    expect(entry.cost).toBeCloseTo(RESPONSE_COST, 10);
    expect(entry.latency_ms).toBeGreaterThan(0);
  });

  it('passes provider error events through as they are', async () => {
    const s = await open();
    await s.next('session.created');
    s.send({ type: 'no.such.event' });
    const error = await s.next('error');
    expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'unknown_event' });
    s.ws.close(1000);
    await s.closed;
  });

  it('takes the gateway key, provider and virtual key from subprotocols, and echoes only "realtime"', async () => {
    await createKey('rt-browser');
    const s = await open({
      headers: {},
      protocols: ['realtime', `gateway-key.${ADMIN_KEY}`, 'gateway-virtual-key.rt-browser'],
    });
    expect(s.ws.protocol).toBe('realtime');
    await s.next('session.created');
    expect(fake.sessions[0]?.headers.authorization).toBe('Bearer sk-rt-browser');
    s.ws.close(1000);
    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({ virtual_key: 'rt-browser', status: 200 });
  });

  it("accepts the gateway key in OpenAI's own browser subprotocol", async () => {
    await createKey('rt-openai-form');
    const s = await open({
      headers: {},
      protocols: ['realtime', `openai-insecure-api-key.${ADMIN_KEY}`, 'gateway-virtual-key.rt-openai-form'],
    });
    expect(s.ws.protocol).toBe('realtime');
    await s.next('session.created');
    s.ws.close(1000);
    await s.closed;
  });

  it('refuses before the upgrade: 401 without a key, and never takes one from the query string', async () => {
    const missing = await refusal(open({ headers: { 'x-gateway-provider': 'openai' } }));
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('invalid_api_key');

    const inQuery = await refusal(
      open({ query: `model=gpt-realtime&api_key=${ADMIN_KEY}`, headers: { 'x-gateway-provider': 'openai' } }),
    );
    expect(inQuery.status).toBe(401);
    expect(inQuery.body.error.message).toMatch(/URL/);

    const wrong = await refusal(
      open({ headers: {}, protocols: ['realtime', 'gateway-key.gwk_not_a_key_000000000000'] }),
    );
    expect(wrong.status).toBe(401);
  });

  it('refuses with 403 a key without completions.write, and 400 an unknown provider, virtual key or no model', async () => {
    const created = await gw.api('POST', '/api-keys', {
      name: 'logs only',
      type: 'workspace',
      scopes: ['logs.view'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const forbidden = await refusal(open({ headers: { 'x-gateway-api-key': created.body.key } }));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({ type: 'permission_error', code: 'insufficient_scope' });

    const provider = await refusal(
      open({ headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'nope' } }),
    );
    expect(provider.status).toBe(400);
    expect(provider.body.error.code).toBe('unknown_provider');

    const vk = await refusal(
      open({ headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': '@missing' } }),
    );
    expect(vk.status).toBe(400);
    expect(vk.body.error.code).toBe('unknown_virtual_key');

    const model = await refusal(open({ query: '', headers: { 'x-gateway-api-key': ADMIN_KEY } }));
    expect(model.status).toBe(400);
    expect(fake.sessions).toHaveLength(0);
  });

  it('closes the session with 4001 when a response costs more than it reserved and spends the budget, then refuses 412', async () => {
    // The fake reports 1,000 audio input tokens the client never sent: the actual cost passes the reservation.
    await createKey('rt-budget', { budget_limit: 0.04 });
    const s = await open({ headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': '@rt-budget' } });
    await s.next('session.created');
    s.send({ type: 'response.create', response: { max_output_tokens: 300 } });
    await s.next('response.done');

    const closed = await s.closed;
    expect(closed.code).toBe(4001);
    const error = s.events.at(-1);
    expect(error).toMatchObject({
      type: 'error',
      error: { type: 'budget_exceeded', code: 'budget_exceeded' },
    });
    expect(s.events.filter((e) => e.type === 'response.done')).toHaveLength(1);
    expect((await fake.sessions[0]?.closed)?.code).toBe(1000);

    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({
      status: 412,
      virtual_key: 'rt-budget',
      error: { type: 'budget_exceeded', code: 'budget_exceeded' },
      response: { responses: 1, close: { code: 4001, reason: 'budget_exceeded', initiator: 'gateway' } },
    });
    expect(entry.cost).toBeCloseTo(RESPONSE_COST, 10);
    expect((await gw.api('GET', '/virtual-keys/rt-budget')).body.spent).toBeCloseTo(RESPONSE_COST, 10);

    const refused = await refusal(
      open({ headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': '@rt-budget' } }),
    );
    expect(refused.status).toBe(412);
    expect(refused.body.error).toMatchObject({ type: 'budget_exceeded', code: 'budget_exceeded' });
  });

  it('tells the client and closes with 1011 when the provider drops the connection', async () => {
    const s = await open();
    await s.next('session.created');
    fake.sessions[0]?.socket.terminate();
    const closed = await s.closed;
    expect(closed.code).toBe(1011);
    expect(s.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream_closed' } });
    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({
      status: 502,
      error: { code: 'upstream_closed', origin: 'provider' },
      response: { close: { code: 1011, initiator: 'upstream' } },
    });
  });

  it('tells the client and closes with 1011 when the provider refuses the connection', async () => {
    fake.refuseWith = 401;
    const s = await open();
    const closed = await s.closed;
    expect(closed.code).toBe(1011);
    expect(s.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream_unreachable' } });
    expect((await finalLog(s.requestId)).status).toBe(401);
  });

  it('closes the provider socket and finishes the log when the client drops', async () => {
    const s = await open();
    await s.next('session.created');
    s.send({ type: 'response.create' });
    await s.next('response.done');
    s.ws.terminate();
    expect((await fake.sessions[0]?.closed)?.code).toBe(1000);
    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({
      status: 200,
      response: { responses: 1, close: { reason: 'client_closed', initiator: 'client' } },
    });
    expect(entry.cost).toBeCloseTo(RESPONSE_COST, 10);
  });

  it('enforces API Gateway limits locally: 128 KB per message (1009) and no binary frames (1003)', async () => {
    const big = await open();
    await big.next('session.created');
    big.send({ type: 'input_audio_buffer.append', audio: 'A'.repeat(200_000) });
    expect((await big.closed).code).toBe(1009);
    expect(big.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'message_too_large' } });
    expect(fake.sessions[0]?.received.some((e) => e.type === 'input_audio_buffer.append')).toBe(false);

    const binary = await open();
    await binary.next('session.created');
    binary.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await binary.closed).code).toBe(1003);
  });
});

describe('realtime budget reservations', () => {
  // Each response reserves about 0.066 USD (up to 0.098 once an earlier one is done) and costs 0.0644:
  // a budget of 0.17 takes exactly two, however the reservations and settlements interleave.
  const LIMIT = 0.17;
  const COST = (100 * 4 + 1_000 * 64) / 1e6;

  beforeEach(() => {
    fake.usage = {
      input_tokens: 100,
      output_tokens: 1_000,
      input_token_details: { text_tokens: 100, audio_tokens: 0, cached_tokens: 0 },
      output_token_details: { text_tokens: 0, audio_tokens: 1_000 },
    };
  });

  /** Sends `n` response.create without waiting, then a session.update whose answer comes after all of them. */
  async function flood(s: Awaited<ReturnType<typeof open>>, n: number) {
    await s.next('session.created');
    for (let i = 0; i < n; i++) s.send({ type: 'response.create', response: { max_output_tokens: 1_000 } });
    s.send({ type: 'session.update', session: { instructions: 'Be brief.' } });
    await s.next('session.updated');
    return {
      done: s.events.filter((e) => e.type === 'response.done'),
      refused: s.events.filter((e) => e.type === 'error'),
    };
  }

  it('a virtual key budget worth two responses serves two of six sent back to back; the others never reach the provider', async () => {
    await createKey('rt-two', { budget_limit: LIMIT });
    const s = await open({ headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': '@rt-two' } });
    const { done, refused } = await flood(s, 6);
    expect(done).toHaveLength(2);
    expect(refused).toHaveLength(4);
    for (const e of refused) {
      expect(e.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'budget_exceeded',
        param: 'virtual_key',
      });
    }
    expect(fake.sessions[0]?.received.filter((e) => e.type === 'response.create')).toHaveLength(2);
    // A refusal leaves the session open.
    expect(s.ws.readyState).toBe(s.ws.OPEN);

    s.ws.close(1000);
    const entry = await finalLog(s.requestId);
    expect(entry).toMatchObject({ status: 200, response: { responses: 2 } });
    expect(entry.cost).toBeCloseTo(2 * COST, 10);
    const spent = (await gw.api('GET', '/virtual-keys/rt-two')).body.spent;
    expect(spent).toBeCloseTo(entry.cost, 10);
    expect(spent).toBeLessThanOrEqual(LIMIT);
  });

  it('a workspace budget holds the same way, settles each response to its actual cost, and keeps nothing reserved', async () => {
    const slug = 'ws-rt-two';
    expect((await gw.api('POST', '/workspaces', { name: slug, slug })).status).toBe(201);
    const patched = await gw.api('PATCH', `/workspaces/${slug}`, { policy: { budget_limit: LIMIT } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const created = await gw.api('POST', '/api-keys', {
      name: 'rt-key',
      type: 'workspace',
      workspace: slug,
      scopes: ['completions.write'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const s = await open({
      headers: {
        'x-gateway-api-key': created.body.key,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.url,
        authorization: 'Bearer sk-upstream',
      },
    });
    const { done, refused } = await flood(s, 5);
    expect(done).toHaveLength(2);
    expect(refused.map((e) => (e.error as { param: string }).param)).toEqual([
      'workspace',
      'workspace',
      'workspace',
    ]);
    expect(fake.sessions[0]?.received.filter((e) => e.type === 'response.create')).toHaveLength(2);

    s.ws.close(1000);
    const entry = await finalLog(s.requestId);
    expect(entry.cost).toBeCloseTo(2 * COST, 10);
    const budget = (await gw.api('GET', `/workspaces/${slug}`)).body.budget;
    expect(budget.spent).toBeCloseTo(entry.cost, 10);
    expect(budget.spent).toBeLessThanOrEqual(LIMIT);
    expect(budget.reserved).toBe(0);
  });

  it('refuses a response of a model without realtime prices under a budget, before the provider', async () => {
    await createKey('rt-unpriced', { budget_limit: LIMIT });
    const s = await open({
      query: 'model=gpt-4o',
      headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': '@rt-unpriced' },
    });
    await s.next('session.created');
    s.send({ type: 'response.create' });
    expect((await s.next('error')).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_priced',
      param: 'model',
    });
    expect(fake.sessions[0]?.received.filter((e) => e.type === 'response.create')).toHaveLength(0);
    s.ws.close(1000);
    await finalLog(s.requestId);
  });

  it('releases the reservation of a response still running when the session ends', async () => {
    const slug = 'ws-rt-release';
    expect((await gw.api('POST', '/workspaces', { name: slug, slug })).status).toBe(201);
    expect((await gw.api('PATCH', `/workspaces/${slug}`, { policy: { budget_limit: LIMIT } })).status).toBe(
      200,
    );
    const created = await gw.api('POST', '/api-keys', {
      name: 'rt-release',
      type: 'workspace',
      workspace: slug,
      scopes: ['completions.write'],
    });
    fake.holdResponses = true;
    const s = await open({
      headers: {
        'x-gateway-api-key': created.body.key,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.url,
        authorization: 'Bearer sk-upstream',
      },
    });
    await s.next('session.created');
    s.send({ type: 'response.create', response: { max_output_tokens: 1_000 } });
    await s.next('response.created');
    const during = (await gw.api('GET', `/workspaces/${slug}`)).body.budget;
    expect(during.reserved).toBeGreaterThan(0);

    s.ws.close(1000);
    await finalLog(s.requestId);
    const after = (await gw.api('GET', `/workspaces/${slug}`)).body.budget;
    expect(after).toMatchObject({ spent: 0, reserved: 0 });
  });
});
