import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureAddressGuard } from '../../functions/gateway/address-guard';
import { readAll, sendUpstream } from '../../functions/gateway/upstream';

// What reaches the provider: the request line and headers Node's client writes from the URL and the
// header list the gateway gives it (functions/gateway/upstream.ts, requestOptions).

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

let server: http.Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  configureAddressGuard({ environment: { onAws: false, allowPrivate: true } });
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, body });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function send(url: string, headers: Record<string, string>, body?: string, method = 'POST') {
  const reply = await sendUpstream({
    url: new URL(url),
    method,
    headers,
    body,
    signal: new AbortController().signal,
    timeoutMs: 5_000,
  });
  await readAll(reply.body, 10_000);
  return seen.at(-1) as Seen;
}

/** Every value of a header, by its name in any case. */
function values(rawHeaders: string[], name: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) found.push(rawHeaders[i + 1] as string);
  }
  return found;
}

describe('the request sent upstream', () => {
  it('carries the path and query, the given headers, the host and the length of the body once each', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'héllo' }] });
    const got = await send(
      `http://127.0.0.1:${port}/v1/chat/completions?api-version=2024-10-21#ignored`,
      { 'content-type': 'application/json', Authorization: 'Bearer sk-test', 'content-length': '1' },
      body,
    );
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/v1/chat/completions?api-version=2024-10-21');
    expect(got.body).toBe(body);
    expect(values(got.rawHeaders, 'host')).toEqual([`127.0.0.1:${port}`]);
    // The body's byte length (the é is two bytes), never the caller's figure, and only one.
    expect(values(got.rawHeaders, 'content-length')).toEqual([String(Buffer.byteLength(body))]);
    expect(values(got.rawHeaders, 'authorization')).toEqual(['Bearer sk-test']);
    expect(values(got.rawHeaders, 'content-type')).toEqual(['application/json']);
    expect(values(got.rawHeaders, 'connection')).toEqual(['keep-alive']);
  });

  it('keeps a host header the provider set (a signed request) instead of adding one', async () => {
    const got = await send(`http://127.0.0.1:${port}/model/invoke`, { Host: 'bedrock.example' }, '{}');
    expect(values(got.rawHeaders, 'host')).toEqual(['bedrock.example']);
  });

  it("sends the URL's user info as basic auth unless the provider's headers authorize the call", async () => {
    const basic = await send(`http://us%40er:p%3Ass@127.0.0.1:${port}/v1/x`, {}, '{}');
    expect(values(basic.rawHeaders, 'authorization')).toEqual([
      `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`,
    ]);
    const bearer = await send(`http://user:pass@127.0.0.1:${port}/v1/x`, { authorization: 'Bearer k' }, '{}');
    expect(values(bearer.rawHeaders, 'authorization')).toEqual(['Bearer k']);
  });

  it('sends no length for a request without body', async () => {
    const got = await send(
      `http://127.0.0.1:${port}/v1/models`,
      { accept: 'application/json' },
      undefined,
      'GET',
    );
    expect(got.method).toBe('GET');
    expect(values(got.rawHeaders, 'content-length')).toEqual([]);
    expect(values(got.rawHeaders, 'transfer-encoding')).toEqual([]);
  });

  it('refuses a header value that would split the request, before anything is sent', async () => {
    const before = seen.length;
    await expect(
      send(`http://127.0.0.1:${port}/v1/x`, { 'x-a': 'ok\r\nx-b: injected' }, '{}'),
    ).rejects.toThrow();
    expect(seen.length).toBe(before);
  });
});
