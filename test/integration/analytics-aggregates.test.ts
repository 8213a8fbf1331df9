import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completion, type FakeOpenAI, sendJson, startFakeOpenAI } from '../support/fake-openai';
import { ADMIN_KEY, startTestGateway, type TestGateway, waitForLog } from '../support/gateway';

// GET /v1/analytics/usage reads per-hour and per-day counters written after each logged request: after a
// mix of users, models, keys, a virtual key and failures, its figures must equal the sums of the entries.

let gw: TestGateway;
let fake: FakeOpenAI;
// biome-ignore lint/suspicious/noExplicitAny: log entries, asserted field by field
let entries: any[] = [];
let writerKey: string;
let readerKey: string;

beforeAll(async () => {
  [gw, fake] = await Promise.all([startTestGateway(), startFakeOpenAI()]);
  let n = 0;
  fake.use((req, res) => {
    n += 1;
    // Every fifth call fails at the provider: an error in the counters.
    if (n % 5 === 0) {
      sendJson(res, 500, { error: { message: 'boom', type: 'server_error', code: null, param: null } });
      return;
    }
    sendJson(
      res,
      200,
      completion(String(req.body.model), 'ok', { prompt_tokens: 100 * n, completion_tokens: 7 * n }),
    );
  });
  const writer = await gw.api('POST', '/api-keys', {
    name: 'writer',
    type: 'workspace',
    workspace: 'default',
    scopes: ['completions.write'],
  });
  writerKey = writer.body.key;
  const reader = await gw.api('POST', '/api-keys', {
    name: 'reader',
    type: 'workspace',
    workspace: 'default',
    scopes: ['logs.view'],
  });
  readerKey = reader.body.key;
  const vk = await gw.api('POST', '/virtual-keys', {
    name: 'Team OpenAI',
    slug: 'team-openai',
    provider: 'openai',
    key: 'sk-vk',
    custom_host: fake.url,
    budget_limit: 100,
  });
  expect(vk.status, JSON.stringify(vk.body)).toBe(201);

  const ids: string[] = [];
  const ask = async (opts: { user?: string; model: string; key?: string; virtualKey?: boolean }) => {
    const headers: Record<string, string> = opts.virtualKey
      ? { 'x-gateway-provider': '@team-openai' }
      : { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.url };
    const res = await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': opts.key ?? writerKey,
        authorization: 'Bearer sk-provider',
        ...headers,
      },
      body: JSON.stringify({
        model: opts.model,
        messages: [{ role: 'user', content: 'hi' }],
        ...(opts.user ? { user: opts.user } : {}),
      }),
    });
    await res.text();
    ids.push(res.headers.get('x-gateway-request-id') as string);
  };
  const plan = [
    { user: 'alice', model: 'gpt-4o' },
    { user: 'alice', model: 'gpt-4o-mini' },
    { user: 'bob', model: 'gpt-4o-mini', virtualKey: true },
    { model: 'gpt-4o-mini' },
    { user: 'bob', model: 'gpt-4o' },
    { user: 'carol', model: 'gpt-4o-mini', virtualKey: true },
    { user: 'alice', model: 'gpt-4o' },
    { model: 'gpt-4o' },
    { user: 'bob', model: 'gpt-4o-mini' },
    { user: 'carol', model: 'gpt-4o' },
    { user: 'alice', model: 'gpt-4o-mini', virtualKey: true },
  ];
  for (const step of plan) await ask(step);
  // A few through the admin key too: another API key in the counters.
  await ask({ user: 'dave', model: 'gpt-4o', key: ADMIN_KEY });
  await ask({ model: 'gpt-4o-mini', key: ADMIN_KEY });
  entries = await Promise.all(ids.map((id) => waitForLog(gw, id)));
  // Counters are written with the log entry, after the reply; give the last writes their moment.
  for (let i = 0; i < 50; i++) {
    const res = await gw.api('GET', '/analytics/usage?interval=day');
    if (res.body.data?.[0]?.requests === entries.length) break;
    await new Promise((r) => setTimeout(r, 20));
  }
}, 60_000);
afterAll(async () => {
  await Promise.all([gw?.stop(), fake?.close()]);
});

// biome-ignore lint/suspicious/noExplicitAny: log entries
function expectedBy(key: (e: any) => string | null) {
  const groups = new Map<
    string | null,
    { requests: number; prompt: number; completion: number; cost: number; errors: number }
  >();
  for (const e of entries) {
    const k = key(e);
    const g = groups.get(k) ?? { requests: 0, prompt: 0, completion: 0, cost: 0, errors: 0 };
    g.requests += 1;
    g.prompt += e.usage?.prompt_tokens ?? 0;
    g.completion += e.usage?.completion_tokens ?? 0;
    g.cost += e.cost ?? 0;
    g.errors += e.status >= 400 ? 1 : 0;
    groups.set(k, g);
  }
  return groups;
}

// biome-ignore lint/suspicious/noExplicitAny: reply rows
function expectRowsMatch(rows: any[], expected: ReturnType<typeof expectedBy>) {
  expect(rows).toHaveLength(expected.size);
  for (const row of rows) {
    const want = expected.get(row.group ?? null);
    expect(want, `group ${row.group}`).toBeDefined();
    expect(row).toMatchObject({
      requests: want?.requests,
      prompt_tokens: want?.prompt,
      completion_tokens: want?.completion,
      total_tokens: (want?.prompt ?? 0) + (want?.completion ?? 0),
      errors: want?.errors,
    });
    expect(row.cost).toBeCloseTo(want?.cost ?? 0, 10);
  }
}

describe('GET /v1/analytics/usage', () => {
  it('the totals of the hour and the day equal the sums of the log entries', async () => {
    expect(entries.some((e) => e.status >= 400)).toBe(true);
    expect(entries.some((e) => e.virtual_key === 'team-openai')).toBe(true);
    for (const interval of ['hour', 'day']) {
      const res = await gw.api('GET', `/analytics/usage?interval=${interval}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.object).toBe('list');
      // All requests ran within one hour unless the test straddled an hour boundary.
      const rows = res.body.data;
      const sum = (f: string) => rows.reduce((a: number, r: Record<string, number>) => a + (r[f] ?? 0), 0);
      const all = expectedBy(() => null).get(null);
      expect(sum('requests')).toBe(all?.requests);
      expect(sum('prompt_tokens')).toBe(all?.prompt);
      expect(sum('completion_tokens')).toBe(all?.completion);
      expect(sum('errors')).toBe(all?.errors);
      expect(sum('cost')).toBeCloseTo(all?.cost ?? 0, 10);
      expect(rows[0].bucket_start).toMatch(interval === 'hour' ? /T\d\d:00:00.000Z$/ : /T00:00:00.000Z$/);
      expect(rows[0].latency_ms.p50).toEqual(expect.any(Number));
      expect(rows[0].latency_ms.p95).toBeGreaterThanOrEqual(rows[0].latency_ms.p50);
    }
  });

  it.each([
    ['user', (e: { user: string | null }) => e.user],
    ['model', (e: { model: string | null }) => e.model],
    ['provider', (e: { provider: string | null }) => e.provider],
    ['virtual_key', (e: { virtual_key: string | null }) => e.virtual_key],
    ['api_key', (e: { auth: { key_id?: string } }) => e.auth.key_id ?? null],
    ['status_class', (e: { status: number }) => `${Math.floor(e.status / 100)}xx`],
  ])('group_by=%s equals the entries grouped the same way', async (dimension, key) => {
    const res = await gw.api('GET', `/analytics/usage?interval=day&group_by=${dimension}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.every((r: { group_by: string }) => r.group_by === dimension)).toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: entries
    expectRowsMatch(res.body.data, expectedBy(key as (e: any) => string | null));
  });

  it('a logs.view key reads its workspace; bad parameters are 400s naming them', async () => {
    const res = await gw.api('GET', '/analytics/usage?interval=day', undefined, readerKey);
    expect(res.status).toBe(200);
    expect(res.body.data[0].requests).toBe(entries.length);
    const bad = await gw.api('GET', '/analytics/usage?interval=week');
    expect(bad.body.error).toMatchObject({ param: 'interval' });
    expect((await gw.api('GET', '/analytics/usage?group_by=colour')).body.error).toMatchObject({
      param: 'group_by',
    });
    const long = await gw.api('GET', '/analytics/usage?interval=hour&from=2020-01-01T00:00:00Z');
    expect(long.body.error).toMatchObject({ param: 'from' });
    expect((await gw.api('GET', '/analytics/usage', undefined, writerKey)).status).toBe(403);
  });

  it('a range before the requests holds no buckets', async () => {
    const res = await gw.api(
      'GET',
      '/analytics/usage?interval=day&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z',
    );
    expect(res.body.data).toEqual([]);
  });
});

describe('budgets for a logs.view key', () => {
  it('GET /v1/analytics/budgets shows the workspace’s virtual keys’ spend and what remains', async () => {
    const res = await gw.api('GET', '/analytics/budgets', undefined, readerKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const spent = entries
      .filter((e) => e.virtual_key === 'team-openai')
      .reduce((a, e) => a + (e.cost ?? 0), 0);
    const [vk] = res.body.virtual_keys;
    expect(vk).toMatchObject({ slug: 'team-openai', budget_limit: 100 });
    expect(vk.spent).toBeCloseTo(spent, 10);
    expect(vk.remaining).toBeCloseTo(100 - spent, 10);
    expect(res.body.workspace).toMatchObject({ slug: 'default' });
  });

  it('GET /v1/analytics/users adds each user’s budget when the workspace sets user_limits', async () => {
    const policy = await gw.api('PATCH', '/workspaces/default', {
      policy: { user_limits: { budget_limit: 5 } },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': writerKey,
        authorization: 'Bearer sk-provider',
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.url,
      },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        user: 'erin',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    }).then((r) => r.text());
    let erin: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !erin?.spent; i++) {
      const res = await gw.api('GET', '/analytics/users', undefined, readerKey);
      erin = res.body.data.find((r: { user: string }) => r.user === 'erin');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(erin).toMatchObject({ budget_limit: 5, period_start: null });
    expect(erin?.spent).toBeGreaterThan(0);
    expect(erin?.remaining).toBeCloseTo(5 - Number(erin?.spent), 10);
  });
});
