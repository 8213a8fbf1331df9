import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../functions/core/errors';
import { configureAddressGuard } from '../../functions/gateway/address-guard';
import { ClientGoneError, readAll, sendUpstream } from '../../functions/gateway/upstream';

// An upstream reply's body is read whole with plain events (`readAll`) or chunk by chunk (iteration, for
// streams). Both must behave alike: the text whole, the size cap, the client's abort, a cut body, a stall.

type Behaviour = (res: http.ServerResponse) => void;
let behaviour: Behaviour = () => undefined;
let server: http.Server;
let port: number;
const sockets = new Set<Socket>();
/** Closes when the connection that served the last request does. */
let served: Promise<void> = Promise.resolve();

beforeAll(async () => {
  configureAddressGuard({ environment: { onAws: false, allowPrivate: true } });
  server = http.createServer((req, res) => {
    req.resume();
    const socket = req.socket;
    served = socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', resolve));
    req.on('end', () => behaviour(res));
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  server.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function send(signal = new AbortController().signal, timeoutMs = 2_000) {
  return sendUpstream({
    url: new URL(`http://127.0.0.1:${port}/v1/x`),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal,
    timeoutMs,
  });
}

/** The body read the other way: chunk by chunk, as a stream relay reads it. */
async function iterate(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new Error('too large');
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

const READS = {
  whole: (body: AsyncIterable<Buffer>, maxBytes: number) => readAll(body, maxBytes),
  'chunk by chunk': iterate,
};

describe.each(Object.entries(READS))('an upstream body read %s', (_name, read) => {
  it('is the text whole, a character split across chunks included', async () => {
    const text = `{"reply":"${'é€'.repeat(50)}"}`;
    const bytes = Buffer.from(text);
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Cut inside the two-byte é: the halves arrive in separate chunks.
      res.write(bytes.subarray(0, 11));
      setTimeout(() => res.end(bytes.subarray(11)), 20);
    };
    const reply = await send();
    expect(await read(reply.body, 10_000)).toBe(text);
  });

  it("ends with ClientGoneError when the client leaves mid-body, and drops the upstream's connection", async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":');
    };
    const client = new AbortController();
    const reply = await send(client.signal);
    const reading = read(reply.body, 10_000);
    await sleep(30);
    client.abort();
    await expect(reading).rejects.toBeInstanceOf(ClientGoneError);
    await served;
  });

  it('fails as a reset connection when the body is cut before its end', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":');
      setTimeout(() => res.destroy(), 20);
    };
    const reply = await send();
    const error = await read(reply.body, 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('upstream_unreachable');
    expect((error as Error).message).toContain('reset');
  });

  it('times out when the body stalls for longer than the timeout between chunks', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":');
    };
    const reply = await send(new AbortController().signal, 150);
    const error = await read(reply.body, 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('upstream_timeout');
    await served;
  });
});

describe('a whole upstream body', () => {
  it('past the cap fails, and the connection goes rather than read the rest', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('x'.repeat(600));
      setTimeout(() => res.write('x'.repeat(600)), 10);
    };
    const reply = await send();
    const error = await readAll(reply.body, 1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as Error).message).toContain('exceeded 1000 bytes');
    await served;
  });

  it('can be read after its end has arrived', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    const reply = await send();
    await sleep(50);
    expect(await readAll(reply.body, 100)).toBe('{"ok":true}');
  });

  // Read once the whole body is parsed and waiting (see UpstreamBody.buffered): the same text, cap and
  // end as a body read while it arrives.
  it('already arrived in several chunks is the text whole, a character split across them included', async () => {
    const euro = Buffer.from('€');
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(Buffer.concat([Buffer.from('{"a":"'), euro.subarray(0, 1)]));
      setTimeout(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('"}')])), 5);
    };
    const reply = await send();
    await sleep(50);
    expect(await readAll(reply.body, 100)).toBe('{"a":"€"}');
  });

  it('already arrived past the cap fails', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('x'.repeat(1_200));
    };
    const reply = await send();
    await sleep(50);
    const error = await readAll(reply.body, 1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as Error).message).toContain('exceeded 1000 bytes');
  });

  it('already arrived and empty is an empty text', async () => {
    behaviour = (res) => {
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    };
    const reply = await send();
    await sleep(50);
    expect(await readAll(reply.body, 100)).toBe('');
  });
});
