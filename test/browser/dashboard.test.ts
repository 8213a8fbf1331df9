import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latencyQuantile } from '../../functions/core/latency-histogram';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { echo, type FakeOpenAI, sendJson, startFakeOpenAI } from '../support/fake-openai';
import { ADMIN_KEY, startTestGateway, type TestGateway, waitForLog } from '../support/gateway';

// The dashboard driven in Debian's Chromium (see test/support/browser.ts).

let gw: TestGateway;
let fake: FakeOpenAI;
let browser: TestBrowser;
let context: BrowserContext;
let page: Page;
let base: string;
// biome-ignore lint/suspicious/noExplicitAny: log entries as the API returns them, read field by field
let entries: any[] = [];

const shot = (name: string) => browser.shot(name);

beforeAll(async () => {
  [gw, fake, browser] = await Promise.all([startTestGateway(), startFakeOpenAI(), launchBrowser()]);
  ({ context, page } = browser);
  base = gw.url.replace(/\/v1$/, '');

  const vk = await gw.api('POST', '/virtual-keys', {
    name: 'Team A',
    slug: 'team-a',
    provider: 'openai',
    key: 'sk-team-a',
    custom_host: fake.url,
    budget_limit: 5,
  });
  expect(vk.status).toBe(201);
  // The log page filters on metadata.team alone: the workspace indexes that key.
  expect((await gw.api('PATCH', '/workspaces/default', { indexed_metadata: ['team'] })).status).toBe(200);
  const ask = async (
    user: string,
    model: string,
    metadata: Record<string, string>,
    options: { stream?: boolean; virtualKey?: boolean } = {},
  ) => {
    const client = gw.client({
      headers: {
        'x-gateway-metadata': JSON.stringify(metadata),
        ...(options.virtualKey ? { 'x-gateway-provider': '@team-a' } : { 'x-gateway-custom-host': fake.url }),
      },
    });
    const messages = [{ role: 'user' as const, content: `hello from ${user}` }];
    if (options.stream) {
      const { data, response } = await client.chat.completions
        .create({ model, messages, user, stream: true })
        .withResponse();
      for await (const _ of data) {
        // drain the stream
      }
      return response.headers.get('x-gateway-request-id') as string;
    }
    const { response } = await client.chat.completions.create({ model, messages, user }).withResponse();
    return response.headers.get('x-gateway-request-id') as string;
  };
  // A retry and a fallback: the first target fails twice (a retry with its backoff wait), the second serves.
  fake.use((req, res) =>
    req.body.model === 'fail-me'
      ? sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error' } })
      : echo(req, res),
  );
  const fallback = async () => {
    const client = gw.client({
      headers: {
        'x-gateway-metadata': JSON.stringify({ team: 'search' }),
        'x-gateway-config': JSON.stringify({
          strategy: { mode: 'fallback' },
          targets: [
            {
              provider: 'openai',
              custom_host: fake.url,
              retry: { attempts: 1 },
              override_params: { model: 'fail-me' },
            },
            { provider: 'openai', custom_host: fake.url },
          ],
        }),
      },
    });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], user: 'alice' })
      .withResponse();
    return response.headers.get('x-gateway-request-id') as string;
  };
  const ids = [
    await ask('alice', 'gpt-4o-mini', { team: 'search' }),
    await ask('bob', 'gpt-4o', { team: 'ads' }),
    await ask('alice', 'gpt-4o', { team: 'search' }, { virtualKey: true }),
    await ask('carol', 'gpt-4o-mini', { team: 'ads' }),
    await fallback(),
    await ask('alice', 'gpt-4o-mini', { team: 'search' }, { stream: true }),
  ];
  entries = await Promise.all(ids.map((id) => waitForLog(gw, id)));
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([gw?.stop(), fake?.close()]);
});

const rows = () => page.locator('tr[data-log-id]');

async function signIn(key: string) {
  await page.locator('input[name="key"]').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('web dashboard', () => {
  it('serves the page and its files with their content types and cache headers', async () => {
    const res = await fetch(`${base}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    const script = html.match(/src="(\/dashboard\/main-\w+\.js)"/)?.[1];
    const style = html.match(/href="(\/dashboard\/main-\w+\.css)"/)?.[1];
    expect(script && style).toBeTruthy();
    const js = await fetch(`${base}${script}`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // The whole page stays small: under 150 KB of gzipped JavaScript.
    expect(gzipSync(Buffer.from(await js.clone().arrayBuffer())).byteLength).toBeLessThan(150_000);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = await fetch(`${base}${style}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await fetch(`${base}/dashboard/nothing.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.type).toBeDefined();
  });

  it('refuses a bad key with the 401 of the API', async () => {
    await page.goto(`${base}/dashboard`);
    await signIn('gwk_not_a_real_key');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('401');
    await shot('dashboard-sign-in-401');
    expect(await rows().count()).toBe(0);
  });

  it('signs in and shows the logs, newest first, with their columns', async () => {
    await signIn(ADMIN_KEY);
    await expect.poll(() => rows().count()).toBe(entries.length);
    const shown = await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-log-id')));
    expect(shown).toEqual(entries.map((e) => e.id).reverse());
    const first = rows().first();
    const cells = await first.locator('td').allTextContents();
    const newest = entries[entries.length - 1];
    expect(cells[1]).toBe('alice');
    expect(cells[2]).toBe('openai');
    expect(cells[3]).toBe(newest.model);
    expect(cells[4]).toContain('200');
    expect(cells[4]).toContain('stream');
    expect(cells[5]).toBe(String(newest.usage.total_tokens));
    expect(cells[8]).toContain('team=search');
    // The key stays in this tab: sessionStorage only, never localStorage or a cookie.
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await shot('dashboard-logs');
  });

  it('filters by user and by metadata', async () => {
    await page.locator('input[name="user"]').fill('alice');
    await page.getByRole('button', { name: 'Apply' }).click();
    const alice = entries.filter((e) => e.user === 'alice').length;
    await expect.poll(() => rows().count()).toBe(alice);
    const users = await rows().evaluateAll((trs) => trs.map((tr) => tr.children[1]?.textContent));
    expect(new Set(users)).toEqual(new Set(['alice']));

    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
    await page.locator('input[name="metadataKey"]').fill('team');
    await page.locator('input[name="metadataValue"]').fill('ads');
    await page.getByRole('button', { name: 'Apply' }).click();
    const ads = entries.filter((e) => e.metadata.team === 'ads').map((e) => e.id);
    await expect.poll(() => rows().count()).toBe(ads.length);
    const shown = await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-log-id')));
    expect(shown.sort()).toEqual([...ads].sort());
    await shot('dashboard-logs-filtered');
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
  });

  it('opens a streamed request: the reassembled response, timings and attempts', async () => {
    const streamed = entries.find((e) => e.stream);
    await page.locator(`tr[data-log-id="${streamed.id}"]`).click();
    const detail = page.locator(`[data-log-detail="${streamed.id}"]`);
    await detail.waitFor();
    const text = await detail.textContent();
    expect(text).toContain('reassembled from the stream');
    expect(text).toContain(streamed.response.choices[0].message.content);
    expect(text).toContain('First chunk');
    expect(text).toContain('Attempts (1)');
    expect(text).toContain(streamed.trace_id);
    expect(await detail.locator('table.attempts tbody tr').count()).toBe(streamed.attempts.length);
    await shot('dashboard-log-detail');
    await page.getByRole('button', { name: '← Logs' }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
  });

  it('charts the analytics from the server’s aggregates: its figures are the API’s', async () => {
    await page.getByRole('link', { name: 'Analytics' }).click();
    const cost = page.locator('[data-stat="total-cost"]');
    await cost.waitFor();
    const total = entries.reduce((sum, e) => sum + (e.cost ?? 0), 0);
    expect(total).toBeGreaterThan(0);
    // The figures of the API the page reads, over the page's range (the last 24 whole hours).
    const toMs = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
    const api = await gw.api(
      'GET',
      `/analytics/usage?interval=hour&from=${new Date(toMs - 86_400_000).toISOString()}&to=${new Date(toMs).toISOString()}`,
    );
    const rows: Array<{ requests: number; cost: number; errors: number; latency_histogram: number[] }> =
      api.body.data;
    const apiCost = rows.reduce((sum, r) => sum + r.cost, 0);
    expect(apiCost).toBeCloseTo(total, 10);
    expect(Number(await cost.getAttribute('data-value'))).toBeCloseTo(apiCost, 12);
    expect(Number(await page.locator('[data-stat="requests"]').getAttribute('data-value'))).toBe(
      entries.length,
    );
    const merged = rows[0]?.latency_histogram.map((_, i) =>
      rows.reduce((n, r) => n + (r.latency_histogram[i] ?? 0), 0),
    );
    expect(Number(await page.locator('[data-stat="p95-latency"]').getAttribute('data-value'))).toBe(
      latencyQuantile(merged ?? [], 0.95),
    );

    const overTime = page.locator('[data-chart="over-time"]');
    // Hourly buckets over the last 24 hours, every request counted once.
    expect(Number(await overTime.getAttribute('data-points'))).toBeGreaterThanOrEqual(24);
    expect(Number(await overTime.getAttribute('data-sum'))).toBe(entries.length);
    expect(Number(await page.locator('[data-chart="errors"]').getAttribute('data-sum'))).toBe(
      entries.filter((e) => e.status >= 400).length,
    );
    const models = new Set(entries.map((e) => e.model));
    const byModel = page.locator('[data-chart="cost-by-model"]');
    expect(Number(await byModel.getAttribute('data-points'))).toBe(models.size);
    expect(Number(await byModel.getAttribute('data-sum'))).toBeCloseTo(total, 12);
    const users = page.locator('[data-chart="top-users"]');
    expect(Number(await users.getAttribute('data-points'))).toBe(3);
    const budgets = page.locator('[data-chart="budgets"]');
    expect(Number(await budgets.getAttribute('data-points'))).toBe(1);
    const teamA = entries.filter((e) => e.virtual_key === 'team-a').reduce((s, e) => s + e.cost, 0);
    expect(Number(await budgets.getAttribute('data-sum'))).toBeCloseTo(teamA, 10);

    // Every chart drew on its canvas: three over time, five by dimension, the budgets.
    const canvases = page.locator('figure.chart canvas');
    expect(await canvases.count()).toBe(9);
    const drawn = await canvases.evaluateAll((list) =>
      list.map((c) => {
        const canvas = c as HTMLCanvasElement;
        const pixels = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
        return canvas.width > 0 && Array.prototype.some.call(pixels, (v: number) => v !== 0);
      }),
    );
    expect(drawn).toEqual(Array(9).fill(true));
    await shot('dashboard-analytics');
  });

  it('shows the virtual key, API key, retries and fallback, first chunk and gateway time of each request', async () => {
    await page.getByRole('link', { name: 'Logs', exact: true }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
    const header = await page.locator('table.logs thead th').allTextContents();
    const col = (name: string) => header.indexOf(name);
    const cells = async (id: string) => page.locator(`tr[data-log-id="${id}"] td`).allTextContents();

    const viaKey = entries.find((e) => e.virtual_key === 'team-a');
    expect((await cells(viaKey.id))[col('Virtual key')]).toBe('@team-a');
    // The API key column names the key (the admin key's name, read from GET /v1/api-keys).
    const keys = (await gw.api('GET', '/api-keys')).body.data;
    const admin = keys.find((k: { id: string }) => k.id === viaKey.auth.key_id);
    expect((await cells(viaKey.id))[col('API key')]).toBe(admin.name);

    const fellBack = entries.find((e) => e.attempts.length === 3);
    expect(fellBack.attempts.map((a: { target_index: string }) => a.target_index)).toEqual(['0', '0', '1']);
    expect((await cells(fellBack.id))[col('Retries / fallback')]).toBe('1 retry, fallback → 1');
    // The Gateway column holds the gateway's own time: no retry wait, and no "includes waits" mark.
    expect((await cells(fellBack.id))[col('Gateway')]).toMatch(/^\d+ ms$/);
    const streamed = entries.find((e) => e.stream);
    expect((await cells(streamed.id))[col('First chunk')]).toMatch(/^\d+ ms$/);
    expect((await cells(entries[0].id))[col('First chunk')]).toBe('—');
    await shot('dashboard-logs-columns');

    // The detail splits the time: attempts apart, the gateway's own time apart.
    await page.locator(`tr[data-log-id="${fellBack.id}"] a`).click();
    const detail = page.locator(`[data-log-detail="${fellBack.id}"]`);
    await detail.waitFor();
    // The retry's backoff wait is logged on the attempt it preceded, and shown apart from the gateway time.
    expect(fellBack.attempts.map((a: { wait_ms: number }) => a.wait_ms > 0)).toEqual([false, true, false]);
    const waits = fellBack.attempts[1].wait_ms;
    const earlier = fellBack.attempts[0].latency_ms + fellBack.attempts[1].latency_ms;
    const gatewayMs = Number(await detail.locator('[data-gateway-ms]').getAttribute('data-gateway-ms'));
    expect(gatewayMs).toBeCloseTo(
      Math.max(0, fellBack.latency_ms - fellBack.upstream_latency_ms - earlier - waits),
      1,
    );
    expect(Number(await detail.locator('[data-waits-ms]').getAttribute('data-waits-ms'))).toBeCloseTo(
      waits,
      1,
    );
    expect(Number(await detail.locator('[data-earlier-ms]').getAttribute('data-earlier-ms'))).toBeCloseTo(
      earlier,
      1,
    );
    const text = await detail.textContent();
    expect(text).toContain('Retry waits');
    expect(text).not.toContain('Gateway time and retry waits');
    expect(text).toContain('Earlier attempts');
    await expect.poll(() => detail.textContent()).toContain(admin.name);
    expect(text).toContain('1 retry, served by fallback target 1');
    expect(await detail.locator('table.attempts tbody tr').count()).toBe(3);
    await shot('dashboard-log-detail-fallback');
    // The detail, its attempts table included, fits a 420 px screen.
    await page.setViewportSize({ width: 420, height: 900 });
    await shot('dashboard-420-log-detail');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.getByRole('button', { name: '← Logs' }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
  });

  it('keeps every filter and every entry in a URL that can be shared', async () => {
    await page.locator('input[name="user"]').fill('alice');
    await page.locator('input[name="metadataKey"]').fill('team');
    await page.locator('input[name="metadataValue"]').fill('search');
    await page.getByRole('button', { name: 'Apply' }).click();
    const alice = entries.filter((e) => e.user === 'alice' && e.metadata.team === 'search');
    await expect.poll(() => rows().count()).toBe(alice.length);
    const url = page.url();
    expect(new URL(url).hash).toBe('#/logs?user=alice&metadataKey=team&metadataValue=search');

    // The same URL in another tab of the same session opens the same rows, the form filled in.
    const other = await context.newPage();
    await other.goto(`${base}/dashboard`);
    await other.evaluate(
      (s) => sessionStorage.setItem('gateway-dashboard-session', s),
      await page.evaluate(() => sessionStorage.getItem('gateway-dashboard-session') as string),
    );
    await other.goto(url);
    await other.reload();
    await expect.poll(() => other.locator('tr[data-log-id]').count()).toBe(alice.length);
    expect(await other.locator('input[name="user"]').inputValue()).toBe('alice');
    // An entry's own URL opens it directly.
    await other.goto(`${base}/dashboard#/logs/${encodeURIComponent(entries[1].id)}`);
    await other.locator(`[data-log-detail="${entries[1].id}"]`).waitFor();
    await other.close();

    // Back and forward walk through the filters.
    await page.goBack();
    await expect.poll(() => rows().count()).toBe(entries.length);
    await page.goForward();
    await expect.poll(() => rows().count()).toBe(alice.length);
  });

  it('exports the filtered rows as CSV and NDJSON', async () => {
    const alice = entries.filter((e) => e.user === 'alice' && e.metadata.team === 'search');
    const [csvDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(csvDownload.suggestedFilename()).toMatch(/^gateway-logs-.*\.csv$/);
    const csv = readFileSync((await csvDownload.path()) as string, 'utf8')
      .trim()
      .split('\r\n');
    const head = csv[0]?.split(',') ?? [];
    expect(head.slice(0, 3)).toEqual(['id', 'timestamp', 'trace_id']);
    expect(csv.length - 1).toBe(alice.length);
    const idAt = head.indexOf('id');
    expect(
      csv
        .slice(1)
        .map((line) => line.split(',')[idAt])
        .sort(),
    ).toEqual(alice.map((e) => e.id).sort());
    const fellBack = csv.find((line) => line.startsWith(entries.find((e) => e.attempts.length === 3).id));
    expect(fellBack?.split(',')[head.indexOf('fallback_target')]).toBe('1');
    expect(fellBack?.split(',')[head.indexOf('retries')]).toBe('1');

    const [ndjsonDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export NDJSON' }).click(),
    ]);
    const lines = readFileSync((await ndjsonDownload.path()) as string, 'utf8')
      .trim()
      .split('\n');
    const parsed = lines.map((line) => JSON.parse(line));
    expect(parsed.map((e) => e.id).sort()).toEqual(alice.map((e) => e.id).sort());
    expect(parsed.every((e) => e.user === 'alice')).toBe(true);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => rows().count()).toBe(entries.length);
  });

  it('tails the logs live', async () => {
    await page.locator('input[name="live"]').check();
    expect(new URL(page.url()).hash).toBe('#/logs?live=1');
    await page.locator('table.logs[aria-busy="false"]').waitFor();
    const { response } = await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'live' }],
        user: 'dave',
      })
      .withResponse();
    const id = response.headers.get('x-gateway-request-id') as string;
    await waitForLog(gw, id);
    // Written after the page last read: only the live tail's next read can show it, no click needed.
    await expect.poll(() => page.locator(`tr[data-log-id="${id}"]`).count(), { timeout: 15_000 }).toBe(1);
    await page.locator('input[name="live"]').uncheck();
    expect(new URL(page.url()).hash).toBe('#/logs');
  });

  it('loads the logs without a layout shift', async () => {
    const fresh = await context.newPage();
    await fresh.addInitScript(() => {
      const w = window as unknown as { shift: number };
      w.shift = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) {
          if (!e.hadRecentInput) w.shift += e.value;
        }
      }).observe({ type: 'layout-shift', buffered: true });
    });
    await fresh.goto(`${base}/dashboard`);
    await fresh.evaluate(
      (s) => sessionStorage.setItem('gateway-dashboard-session', s),
      await page.evaluate(() => sessionStorage.getItem('gateway-dashboard-session') as string),
    );
    await fresh.reload();
    await expect.poll(() => fresh.locator('tr[data-log-id]').count()).toBeGreaterThan(0);
    const shift = await fresh.evaluate(() => (window as unknown as { shift: number }).shift);
    expect(shift).toBe(0);
    await fresh.close();
  });

  it('signs out, forgetting the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('input[name="key"]').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});
