import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completion, type FakeOpenAI, sendJson, sleep, startFakeOpenAI } from '../support/fake-openai';
import { startTestGateway, type TestGateway, waitForLog } from '../support/gateway';

let gw: TestGateway;
let fake: FakeOpenAI;

beforeAll(async () => {
  [gw, fake] = await Promise.all([startTestGateway(), startFakeOpenAI()]);
  // Usage grows with each request so that users differ in cost and tokens.
  let n = 0;
  fake.use((req, res) => {
    n += 1;
    sendJson(
      res,
      200,
      completion(String(req.body.model), 'ok', { prompt_tokens: 1000 * n, completion_tokens: 10 * n }),
    );
  });
});
afterAll(async () => {
  await Promise.all([gw.stop(), fake.close()]);
});

interface Row {
  user: string;
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

describe('GET /v1/analytics/users', () => {
  it('agrees with the sum of the log entries, per user, sorted by cost or requests', async () => {
    const ask = (user: string | undefined, metadataUser?: string) =>
      gw
        .client({
          headers: {
            'x-gateway-custom-host': fake.url,
            ...(metadataUser ? { 'x-gateway-metadata': JSON.stringify({ _user: metadataUser }) } : {}),
          },
        })
        .chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hi' }],
          ...(user ? { user } : {}),
        })
        .withResponse()
        .then((r) => r.response.headers.get('x-gateway-request-id') as string);
    const ids: string[] = [];
    for (const user of ['alice', 'alice', 'bob', 'alice']) ids.push(await ask(user));
    ids.push(await ask(undefined, 'carol'));
    ids.push(...(await Promise.all([ask('bob'), ask('bob'), ask('dave')])));
    ids.push(await ask(undefined));
    const entries = await Promise.all(ids.map((id) => waitForLog(gw, id)));

    const expected = new Map<string, Row>();
    for (const e of entries) {
      if (!e.user) continue;
      const row = expected.get(e.user) ?? {
        user: e.user,
        requests: 0,
        cost: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
      };
      row.requests += 1;
      row.cost += e.cost ?? 0;
      row.prompt_tokens += e.usage?.prompt_tokens ?? 0;
      row.completion_tokens += e.usage?.completion_tokens ?? 0;
      expected.set(e.user, row);
    }
    expect([...expected.keys()].sort()).toEqual(['alice', 'bob', 'carol', 'dave']);

    let rows: Row[] = [];
    for (let i = 0; i < 50; i++) {
      rows = (await gw.api('GET', '/analytics/users')).body.data;
      if (rows.reduce((s, r) => s + r.requests, 0) === 8) break;
      await sleep(20);
    }
    const res = await gw.api('GET', '/analytics/users');
    expect(res.body).toMatchObject({ object: 'list', next_cursor: null });
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      const want = expected.get(row.user) as Row;
      expect(row.requests).toBe(want.requests);
      expect(row.prompt_tokens).toBe(want.prompt_tokens);
      expect(row.completion_tokens).toBe(want.completion_tokens);
      expect(row.cost).toBeCloseTo(want.cost, 10);
    }
    const costs = rows.map((r) => r.cost);
    expect(costs).toEqual([...costs].sort((a, b) => b - a));

    const byRequests: Row[] = (await gw.api('GET', '/analytics/users?order=requests')).body.data;
    expect(byRequests.map((r) => r.requests)).toEqual([3, 3, 1, 1].sort((a, b) => b - a));

    const past = await gw.api('GET', '/analytics/users?from=2020-01-01&to=2020-01-31');
    expect(past.body.data).toEqual([]);
    const epoch = await gw.api('GET', `/analytics/users?from=${Date.now() - 3_600_000}&to=${Date.now()}`);
    expect(epoch.body.data).toHaveLength(4);
    expect((await gw.api('GET', '/analytics/users?order=colour')).status).toBe(400);
  });

  it('needs the logs.view scope', async () => {
    const key = await gw.api('POST', '/api-keys', { name: 'no logs', scopes: ['completions.write'] });
    expect((await gw.api('GET', '/analytics/users', undefined, key.body.key)).status).toBe(403);
  });
});
