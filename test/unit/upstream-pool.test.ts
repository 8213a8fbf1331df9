import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureAddressGuard, guardedAgents } from '../../functions/gateway/address-guard';
import { readAll, sendUpstream } from '../../functions/gateway/upstream';

// Upstream calls go out on keep-alive pools, one per origin, and every new connection, reached by an IP
// or by a name, passes the address guard's lookup.

const LOCAL = { onAws: false, allowPrivate: true };
const STRICT = { onAws: false, allowPrivate: false };

let server: http.Server;
let port: number;
const connections = new Set<Socket>();
let accepted = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(JSON.stringify({ path: req.url })));
  });
  server.on('connection', (socket) => {
    accepted++;
    connections.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  for (const socket of connections) socket.destroy();
  server.close();
});
afterEach(() => configureAddressGuard({ environment: LOCAL }));

async function call(url: string): Promise<string> {
  const reply = await sendUpstream({
    url: new URL(url),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal: new AbortController().signal,
    timeoutMs: 5_000,
  });
  return readAll(reply.body, 10_000);
}

describe('upstream connections', () => {
  it('reuse one kept-alive socket per origin for calls one after another', async () => {
    configureAddressGuard({ environment: LOCAL });
    const before = accepted;
    for (let i = 0; i < 5; i++) expect(await call(`http://127.0.0.1:${port}/v1/${i}`)).toContain(`/v1/${i}`);
    expect(accepted - before).toBe(1);
    const pool = guardedAgents['http:'];
    expect(Object.keys(pool.freeSockets)).toHaveLength(1);
    expect(pool.maxSockets).toBeGreaterThan(1);
    expect(pool.maxFreeSockets).toBeGreaterThan(1);
  });

  it('pass the guard on every new connection, for a name by the addresses it resolves to', async () => {
    configureAddressGuard({
      environment: LOCAL,
      resolver: (_host, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    expect(await call(`http://provider.test:${port}/by-name`)).toContain('/by-name');
    // The same name, now a private address where private hosts are refused: no socket is opened.
    configureAddressGuard({ environment: STRICT });
    const before = accepted;
    await expect(call(`http://other.test:${port}/x`)).rejects.toMatchObject({
      status: 400,
      code: 'host_not_allowed',
    });
    await expect(call(`http://127.0.0.1:${port}/x`)).rejects.toMatchObject({ code: 'host_not_allowed' });
    expect(accepted).toBe(before);
  });
});
