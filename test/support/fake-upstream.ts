import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A scriptable HTTP server on 127.0.0.1 that records every request: the base of the provider fakes.

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: provider request bodies of many shapes, asserted field by field
  body: any;
}

export type Handler = (req: Recorded, res: ServerResponse) => Promise<void> | void;

export interface FakeUpstream {
  /** http://127.0.0.1:<port>, to be used as a custom host. */
  url: string;
  requests: Recorded[];
  use(handler: Handler): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(fallback: Handler): Promise<FakeUpstream> {
  let handler = fallback;
  const requests: Recorded[] = [];
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    let body: unknown = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      body = { _raw: text };
    }
    const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(recorded);
    try {
      await handler(recorded, res);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    use(h) {
      handler = h;
    },
    reset() {
      handler = fallback;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
