import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { periodOf } from '../../functions/gateway/budget';
import { completion, sendJson, sleep, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { createVirtualKey, waitForLog } from '../support/gateway';

// 100k prompt + 50k completion tokens of gpt-4o-mini: 0.015 + 0.03 = 0.045 USD per request.
const USAGE = { prompt_tokens: 100_000, completion_tokens: 50_000 };
const COST = 0.045;

const { gw, fake } = useGateway({ fake: startFakeOpenAI });
beforeEach(() => {
  fake.use(async (req, res) => {
    const last = (req.body.messages as Array<{ content: string }>).at(-1)?.content;
    if (last === 'slow') await sleep(600);
    sendJson(res, 200, completion(String(req.body.model), 'ok', USAGE));
  });
});

const createKey = (slug: string, body: Record<string, unknown>) => createVirtualKey(gw, fake.url, slug, body);

const ask = (slug: string, content = 'hi') =>
  gw
    .client({ headers: { 'x-gateway-provider': `@${slug}` } })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
    .withResponse()
    .then(
      (r) => ({ status: 200, id: r.response.headers.get('x-gateway-request-id') as string }),
      (e: unknown) => {
        if (!(e instanceof OpenAI.APIError)) throw e;
        return { status: e.status ?? 0, id: e.headers?.get('x-gateway-request-id') as string, error: e };
      },
    );

/** Polls the key until its spend equals `expected`; the charge lands just after the reply's last byte. */
async function spentSettlesAt(slug: string, expected: number) {
  let spent = Number.NaN;
  for (let i = 0; i < 100; i++) {
    spent = (await gw.api('GET', `/virtual-keys/${slug}`)).body.spent;
    if (Math.abs(spent - expected) < 1e-9) return spent;
    await sleep(20);
  }
  return spent;
}

describe('budgets', () => {
  it('refuses with 412 once spend reaches the limit, logs the refusal, and reopens when raised', async () => {
    await createKey('small-budget', { budget_limit: 0.1 });
    const first = await Promise.all([ask('small-budget'), ask('small-budget')].map((p) => p));
    expect(first.map((r) => r.status)).toEqual([200, 200]);
    expect(await spentSettlesAt('small-budget', 2 * COST)).toBeCloseTo(2 * COST, 10);
    expect((await ask('small-budget')).status).toBe(200);
    expect(await spentSettlesAt('small-budget', 3 * COST)).toBeCloseTo(3 * COST, 10);

    const refused = await ask('small-budget');
    expect(refused.status).toBe(412);
    const error = (refused as { error: InstanceType<typeof OpenAI.APIError> }).error;
    expect(error.type).toBe('budget_exceeded');
    expect(error.code).toBe('budget_exceeded');
    expect(error.param).toBe('virtual_key');
    expect(error.headers?.get('x-gateway-error-origin')).toBe('gateway');
    const entry = await waitForLog(gw, refused.id);
    expect(entry).toMatchObject({ status: 412, virtual_key: 'small-budget', cost: null });
    const view = (await gw.api('GET', '/virtual-keys/small-budget')).body;
    expect(view).toMatchObject({ budget_limit: 0.1, remaining: 0 });

    await gw.api('PATCH', '/virtual-keys/small-budget', { budget_limit: 1 });
    expect((await ask('small-budget')).status).toBe(200);
  });

  it('adds exactly the sum of concurrent costs, and lets nothing through once exhausted', async () => {
    await createKey('concurrent', { budget_limit: 0.2 });
    // Waves of concurrent requests until the key refuses; each wave starts after the last one's charges.
    const served: string[] = [];
    let refusedInWave = 0;
    for (let wave = 0; wave < 5 && refusedInWave === 0; wave++) {
      const results = await Promise.all(Array.from({ length: 8 }, () => ask('concurrent')));
      for (const r of results) if (r.status === 200) served.push(r.id);
      refusedInWave = results.filter((r) => r.status === 412).length;
      expect(results.every((r) => r.status === 200 || r.status === 412)).toBe(true);
      await spentSettlesAt('concurrent', served.length * COST);
    }
    const entries = await Promise.all(served.map((id) => waitForLog(gw, id)));
    const loggedCost = entries.reduce((sum, e) => sum + e.cost, 0);
    expect(loggedCost).toBeCloseTo(served.length * COST, 10);
    // No lost update: the counter holds every concurrent ADD.
    expect(await spentSettlesAt('concurrent', loggedCost)).toBeCloseTo(loggedCost, 10);
    expect(loggedCost).toBeGreaterThanOrEqual(0.2);

    fake.reset();
    const after = await Promise.all(Array.from({ length: 20 }, () => ask('concurrent')));
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(412));
    expect(fake.requests).toHaveLength(0);
  });

  it('lets a request in flight when the limit is crossed complete, and charges it', async () => {
    await createKey('in-flight', { budget_limit: 0.04 });
    const slow = ask('in-flight', 'slow');
    await sleep(100);
    expect((await ask('in-flight')).status).toBe(200);
    await spentSettlesAt('in-flight', COST);
    expect((await ask('in-flight')).status).toBe(412);
    expect((await slow).status).toBe(200);
    expect(await spentSettlesAt('in-flight', 2 * COST)).toBeCloseTo(2 * COST, 10);
  });

  it('records one alert when spend crosses the alert threshold (a fraction of the limit)', async () => {
    await createKey('alerting', { budget_limit: 1, budget_alert_threshold: 0.1 });
    expect((await ask('alerting')).status).toBe(200);
    await spentSettlesAt('alerting', COST);
    expect((await gw.api('GET', '/virtual-keys/alerting')).body.alerts).toEqual([]);
    await Promise.all([ask('alerting'), ask('alerting'), ask('alerting')]);
    await spentSettlesAt('alerting', 4 * COST);
    const view = (await gw.api('GET', '/virtual-keys/alerting')).body;
    expect(view.budget_alert_threshold_usd).toBe(0.1);
    expect(view.alerts).toHaveLength(1);
    expect(view.alerts[0]).toMatchObject({ period: 'all', threshold_usd: 0.1 });
    expect(view.alerts[0].spent).toBeGreaterThanOrEqual(0.1);
  });

  it('keeps monthly spend per calendar month', async () => {
    await createKey('monthly', { budget_limit: 1, budget_period: 'monthly' });
    expect((await ask('monthly')).status).toBe(200);
    await spentSettlesAt('monthly', COST);
    const view = (await gw.api('GET', '/virtual-keys/monthly')).body;
    expect(view).toMatchObject({ budget_period: 'monthly', period: new Date().toISOString().slice(0, 7) });
    expect(periodOf({ budget_period: 'monthly' }, new Date('2030-02-01T00:00:00Z'))).toBe('2030-02');
    expect(periodOf({ budget_period: 'monthly' }, new Date('2030-01-31T23:59:59Z'))).toBe('2030-01');
    expect(periodOf({ budget_period: 'none' }, new Date('2030-01-31T23:59:59Z'))).toBe('all');
  });
});

describe('rate limits', () => {
  /** Keeps a test inside one minute window: counting straddling two windows would allow twice the limit. */
  async function awayFromWindowEdge() {
    const intoMinute = (Date.now() / 1000) % 60;
    if (intoMinute > 50) await sleep((60 - intoMinute) * 1000 + 50);
  }

  it('refuses the requests over the limit in a minute with 429 and Retry-After, and logs them', async () => {
    await awayFromWindowEdge();
    await createKey('limited', { rate_limit: { requests_per_minute: 3 } });
    const results = await Promise.all(Array.from({ length: 10 }, () => ask('limited')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    const error = (refused[0] as { error: InstanceType<typeof OpenAI.APIError> }).error;
    const retryAfter = Number(error.headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(error.code).toBe('rate_limit_exceeded');
    const entry = await waitForLog(gw, refused[0]?.id as string);
    expect(entry).toMatchObject({ status: 429, virtual_key: 'limited' });
    expect(fake.requests).toHaveLength(3);
  });
});
