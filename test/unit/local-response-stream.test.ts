import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalResponseStream, replyHeader } from '../../local/awslambda-shim';

// The local server's stand-in for Lambda's response stream: the prelude's status, headers and cookies go
// out with the first write, and the server can still read a sent header back for its request line.

let server: http.Server;
let port: number;
const readBack: (string | undefined)[] = [];

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    const stream = new LocalResponseStream(res);
    stream.setPrelude({
      statusCode: 201,
      headers: {
        'content-type': 'application/json',
        'X-Gateway-Request-Id': 'req_1',
        'x-gateway-request-id': 'req_2',
      },
      cookies: ['a=1; Path=/', 'b=2; HttpOnly'],
    });
    stream.write('{"ok":');
    stream.end('true}', () => readBack.push(replyHeader(res, 'x-gateway-request-id')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('LocalResponseStream', () => {
  it('sends the prelude with the body, a header named twice once, and keeps the headers readable', async () => {
    const reply = await fetch(`http://127.0.0.1:${port}/`);
    expect(reply.status).toBe(201);
    expect(await reply.text()).toBe('{"ok":true}');
    expect(reply.headers.get('content-type')).toBe('application/json');
    // As setHeader would: the last of two spellings of one name wins, and it is sent once.
    expect(reply.headers.get('x-gateway-request-id')).toBe('req_2');
    expect(reply.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
    expect(readBack).toEqual(['req_2']);
  });
});
