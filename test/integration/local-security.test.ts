import { beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../functions/control/bootstrap';
import { MAX_MESSAGE_BYTES } from '../../functions/gateway/realtime/protocol';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';

const { gw } = useGateway();
let root: string;

beforeAll(() => {
  root = gw.url.replace(/\/v1$/, '');
});

// Key lookups are cached per container for this long (set low for tests in vitest.config.ts).
const settle = () =>
  new Promise((r) => setTimeout(r, Number(process.env.GATEWAY_AUTH_CACHE_TTL_MS ?? 300) + 150));
const healthy = async () => (await fetch(`${gw.url}/health`)).status;

describe('local @connections endpoints', () => {
  it('answer a malformed connection id with a 400 instead of crashing the server', async () => {
    for (const path of ['/@connections/%ZZ', '/v1/@connections/%ZZ', '/%40connections/%E0%A4%A']) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await fetch(`${root}${path}`, { method, body: method === 'POST' ? 'x' : undefined });
        expect(res.status, `${method} ${path}`).toBe(400);
      }
    }
    expect(await healthy()).toBe(200);
  });

  it('bound their bodies like every other route', async () => {
    const res = await fetch(`${root}/@connections/unknown-id`, {
      method: 'POST',
      body: Buffer.alloc(MAX_MESSAGE_BYTES * 4, 'a'),
    });
    expect(res.status).toBe(413);
    expect(await healthy()).toBe(200);
  });
});

describe('the bootstrap admin key', () => {
  it('does not come back after it is deleted, except through the explicit recovery', async () => {
    const second = await gw.api('POST', '/api-keys', { name: 'second admin', type: 'organisation' });
    expect(second.status).toBe(201);
    const keys = await gw.api('GET', '/api-keys', undefined, second.body.key);
    const boot = keys.body.data.find((k: { name: string }) => k.name === 'Organisation admin (bootstrap)');
    expect(boot).toBeDefined();
    expect((await gw.api('DELETE', `/api-keys/${boot.id}`, undefined, second.body.key)).status).toBe(200);
    await settle();
    expect((await gw.api('GET', '/organisation')).status).toBe(401);

    // What every later start does with GATEWAY_ADMIN_KEY (and the first request on AWS with the secret).
    await bootstrap(ADMIN_KEY);
    await settle();
    expect((await gw.api('GET', '/organisation')).status).toBe(401);

    // The operator who lost every admin key: GATEWAY_RECOVER_ADMIN_KEY=1 for one start.
    await bootstrap(ADMIN_KEY, undefined, { recover: true });
    await settle();
    expect((await gw.api('GET', '/organisation')).status).toBe(200);
    const after = await gw.api('GET', '/api-keys');
    expect(after.body.data.map((k: { name: string }) => k.name)).toContain('Organisation admin (recovered)');
  });
});
