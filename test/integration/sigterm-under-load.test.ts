import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  completion,
  type FakeOpenAI,
  sendJson,
  sleep,
  startFakeOpenAI,
  streamWords,
} from '../support/fake-openai';
import { startLocalProcess } from '../support/local-process';

// The local server stopped with SIGTERM in the middle of load: every request it served is logged, charged
// and counted in the usage aggregates once it has stopped, and the budget's spend is exactly the sum of
// the logged costs.

const KEY = 'gwk_sigterm_load_key_0123456789';
let fake: FakeOpenAI;
let dataDir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-sigterm-'));
});
afterAll(async () => {
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface LogRow {
  id: string;
  status: number;
  cost: number | null;
}

async function allLogs(url: string): Promise<LogRow[]> {
  const rows: LogRow[] = [];
  let cursor: string | null = null;
  do {
    const res = await fetch(`${url}/logs?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
      headers: { 'x-gateway-api-key': KEY },
    });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: LogRow[]; next_cursor: string | null };
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return rows;
}

describe('SIGTERM under load', () => {
  it('loses no log entry and no spend of the requests it served', async () => {
    // Replies take a little while, so that requests are in flight when the signal comes.
    fake.use(async (req, res) => {
      await sleep(40);
      if (req.body.stream) await streamWords(req, res, ['one', 'two', 'three'], 10);
      else sendJson(res, 200, completion(String(req.body.model), 'done'));
    });
    const first = await startLocalProcess({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: KEY });
    const policy = await fetch(`${first.url}/workspaces/default`, {
      method: 'PATCH',
      headers: { 'x-gateway-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ policy: { budget_limit: 1000, budget_period: 'none' } }),
    });
    expect(policy.status).toBe(200);

    const client = new OpenAI({
      baseURL: first.url,
      apiKey: 'sk-fake',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': KEY, 'x-gateway-custom-host': fake.url },
    });
    const served = new Set<string>();
    let stopped = false;
    const worker = async (n: number) => {
      for (let i = 0; !stopped; i++) {
        const messages = [{ role: 'user' as const, content: `worker ${n} request ${i}` }];
        try {
          if ((n + i) % 2 === 0) {
            const { response } = await client.chat.completions
              .create({ model: 'gpt-4o-mini', messages })
              .withResponse();
            served.add(response.headers.get('x-gateway-request-id') as string);
          } else {
            const { data, response } = await client.chat.completions
              .create({
                model: 'gpt-4o-mini',
                messages,
                stream: true,
                stream_options: { include_usage: true },
              })
              .withResponse();
            let usage = false;
            for await (const chunk of data) usage ||= !!chunk.usage;
            // Only a stream that reached its end was served whole.
            if (usage) served.add(response.headers.get('x-gateway-request-id') as string);
          }
        } catch {
          // Refused or cut once the server stops taking requests: the loop ends at the next turn.
          if (first.child.exitCode !== null || stopped) return;
        }
      }
    };
    const workers = Array.from({ length: 12 }, (_, n) => worker(n));
    // Let load build up, then stop the server in the middle of it.
    while (served.size < 30) await sleep(20);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    stopped = true;
    await Promise.all(workers);
    expect(first.output()).toContain('Stopped.');

    const second = await startLocalProcess({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: KEY });
    try {
      const logs = await allLogs(second.url);
      const byId = new Map(logs.map((l) => [l.id, l]));
      const missing = [...served].filter((id) => byId.get(id)?.status !== 200);
      expect(missing).toEqual([]);
      for (const id of served) expect(byId.get(id)?.cost).toBeGreaterThan(0);
      const logged = logs.reduce((sum, l) => sum + (l.cost ?? 0), 0);
      const ws = (await (
        await fetch(`${second.url}/workspaces/default`, { headers: { 'x-gateway-api-key': KEY } })
      ).json()) as { budget: { spent: number; reserved: number } };
      // Nothing left reserved, and spend is every logged cost: none charged twice, none lost.
      expect(ws.budget.reserved).toBe(0);
      expect(ws.budget.spent).toBeCloseTo(logged, 9);
      expect(served.size).toBeGreaterThanOrEqual(30);
      // Usage aggregates gather for a second before they are written: the shutdown wrote the last of them.
      const usage = (await (
        await fetch(`${second.url}/analytics/usage?interval=day`, { headers: { 'x-gateway-api-key': KEY } })
      ).json()) as { data: Array<{ requests: number }> };
      expect(usage.data.reduce((sum, b) => sum + b.requests, 0)).toBe(logs.length);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);
});
