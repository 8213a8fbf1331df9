import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../local/server';
import { ADMIN_KEY } from '../support/gateway';

// A gateway that keeps its data in files (not in memory), so that the test can read every byte it
// wrote: the budget-alert webhook's secret must be in the secret store's file and nowhere else.

let gateway: RunningGateway;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-webhook-secret-'));
  gateway = await startGateway({ port: 0, dataDir, adminKey: ADMIN_KEY, requestLog: () => undefined });
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the budget-alert webhook secret', () => {
  it('is kept in the secret store only: never in the control table, a reply or any other data file', async () => {
    const secret = 'whsec_kept_out_of_the_table_7f3a9c';
    expect((await api('POST', '/workspaces', { name: 'hooks', slug: 'hooks' })).status).toBe(201);
    const set = await api('PATCH', '/workspaces/hooks', {
      policy: { budget_limit: 1, budget_alert_webhook: { url: 'https://hooks.example/alerts', secret } },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.text).not.toContain(secret);
    const read = await api('GET', '/workspaces/hooks');
    expect(JSON.parse(read.text).policy.budget_alert_webhook).toEqual({
      url: 'https://hooks.example/alerts',
      secret_set: true,
    });
    expect(read.text).not.toContain(secret);

    // Sent back as read (without the secret), the policy keeps the stored secret.
    const again = await api('PATCH', '/workspaces/hooks', {
      policy: { budget_limit: 2, budget_alert_webhook: { url: 'https://hooks.example/alerts' } },
    });
    expect(again.status, again.text).toBe(200);

    await gateway.close();
    const holding = filesUnder(dataDir)
      .filter((file) => readFileSync(file).includes(secret))
      .map((file) => relative(dataDir, file));
    expect(holding).toHaveLength(1);
    expect(holding[0]).toMatch(/^secrets\/org_\w+\/hooks\/_webhooks\/budget-alert$/);
  });
});
