import WebSocket from 'ws';
import { sleep } from './fake-openai';
import { ADMIN_KEY, type TestGateway } from './gateway';

// A `ws` client of the gateway's realtime endpoint, for tests: opens a session, collects its events,
// and reads the session's final log entry.

export type Event = Record<string, unknown> & { type: string };

export interface Session {
  ws: WebSocket;
  requestId: string;
  events: Event[];
  /** Resolves with the first event of `type` (already received or still to come). */
  next(type: string): Promise<Event>;
  send(event: Record<string, unknown>): void;
  closed: Promise<{ code: number; reason: string }>;
}

export interface Refused {
  status: number;
  body: { error: { message: string; type: string; code: string | null } };
}

export function openRealtime(
  gw: TestGateway,
  upstreamUrl: string,
  options: { query?: string; headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<Session> {
  const headers = options.headers ?? {
    'x-gateway-api-key': ADMIN_KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': upstreamUrl,
    authorization: 'Bearer sk-upstream',
  };
  const ws = new WebSocket(
    `ws://127.0.0.1:${gw.port}/v1/realtime?${options.query ?? 'model=gpt-realtime'}`,
    options.protocols ?? [],
    { headers },
  );
  const events: Event[] = [];
  const waiters: Array<{ type: string; resolve: (e: Event) => void }> = [];
  let requestId = '';
  ws.on('upgrade', (res) => {
    requestId = String(res.headers['x-gateway-request-id'] ?? '');
  });
  ws.on('message', (data) => {
    const event = JSON.parse(data.toString()) as Event;
    events.push(event);
    for (const w of waiters.filter((w) => w.type === event.type)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(event);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    ws.once('open', () =>
      resolve({
        ws,
        requestId,
        events,
        closed,
        send: (event) => ws.send(JSON.stringify(event)),
        next: (type) => {
          const seen = events.find((e) => e.type === type);
          if (seen) return Promise.resolve(seen);
          return new Promise((r) => waiters.push({ type, resolve: r }));
        },
      }),
    );
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => reject({ status: res.statusCode ?? 0, body: JSON.parse(text) } satisfies Refused));
    });
    ws.once('error', () => undefined);
  });
}

export const refusal = (promise: Promise<Session>) =>
  promise.then(
    () => {
      throw new Error('the connection was accepted');
    },
    (e: Refused) => e,
  );

/** The session's log entry once the relay has written its final version. */
export async function finalLog(gw: TestGateway, id: string) {
  for (let i = 0; i < 200; i++) {
    const res = await gw.api('GET', `/logs/${id}`);
    if (res.status === 200 && res.body.response?.close) return res.body;
    await sleep(25);
  }
  throw new Error(`no final log entry ${id}`);
}
