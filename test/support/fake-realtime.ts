import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

// A fake OpenAI realtime upstream on 127.0.0.1: `session.created` on connect, `session.updated` on
// `session.update`, `input_audio_buffer.committed` on commit, and on `response.create` a response made of
// `response.created`, text deltas and `response.done` with usage.

export interface RealtimeUsageShape {
  input_tokens: number;
  output_tokens: number;
  input_token_details: { text_tokens: number; audio_tokens: number; cached_tokens: number };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

export const DEFAULT_USAGE: RealtimeUsageShape = {
  input_tokens: 1_100,
  output_tokens: 300,
  input_token_details: { text_tokens: 100, audio_tokens: 1_000, cached_tokens: 0 },
  output_token_details: { text_tokens: 100, audio_tokens: 200 },
};

export interface FakeSession {
  url: string;
  headers: IncomingHttpHeaders;
  /** Every event the client sent, parsed, in order. */
  received: Array<Record<string, unknown>>;
  /** The audio of every `input_audio_buffer.append`, concatenated. */
  audio: string;
  socket: WebSocket;
  closed: Promise<{ code: number }>;
}

export interface FakeRealtime {
  /** Base URL with `/v1`, as a custom host (http: the gateway maps it to ws:). */
  url: string;
  sessions: FakeSession[];
  /** Usage reported by the next `response.done` events. */
  usage: RealtimeUsageShape;
  /** Text deltas of each response. */
  words: string[];
  /** Refuse upgrades with this status and an OpenAI error body. */
  refuseWith?: number;
  /** Start responses (`response.created`) without ever finishing them. */
  holdResponses?: boolean;
  reset(): void;
  close(): Promise<void>;
}

let counter = 0;
const id = (prefix: string) => `${prefix}_${++counter}`;

export async function startFakeRealtime(): Promise<FakeRealtime> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: (_info, done) => {
      if (fake.refuseWith) {
        done(false, fake.refuseWith, 'refused', { 'content-type': 'application/json' });
        return;
      }
      done(true);
    },
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const port = (wss.address() as AddressInfo).port;

  const fake: FakeRealtime = {
    url: `http://127.0.0.1:${port}/v1`,
    sessions: [],
    usage: DEFAULT_USAGE,
    words: ['Hello', ' there', '!'],
    reset() {
      fake.sessions.length = 0;
      fake.usage = DEFAULT_USAGE;
      fake.words = ['Hello', ' there', '!'];
      fake.refuseWith = undefined;
      fake.holdResponses = false;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };

  wss.on('connection', (socket, req) => {
    const send = (event: Record<string, unknown>) =>
      socket.send(JSON.stringify({ event_id: id('event'), ...event }));
    const session: FakeSession = {
      url: req.url ?? '',
      headers: req.headers,
      received: [],
      audio: '',
      socket,
      closed: new Promise((r) => socket.once('close', (code) => r({ code }))),
    };
    fake.sessions.push(session);
    const model = new URL(req.url ?? '/', 'http://x').searchParams.get('model') ?? 'gpt-realtime';
    let config: Record<string, unknown> = { id: id('sess'), object: 'realtime.session', model };
    send({ type: 'session.created', session: config });

    socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as Record<string, unknown>;
      session.received.push(event);
      switch (event.type) {
        case 'session.update':
          config = { ...config, ...(event.session as object) };
          send({ type: 'session.updated', session: config });
          break;
        case 'input_audio_buffer.append':
          session.audio += String(event.audio);
          break;
        case 'input_audio_buffer.commit':
          send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: id('item') });
          break;
        case 'response.create': {
          const responseId = id('resp');
          send({ type: 'response.created', response: { id: responseId, status: 'in_progress' } });
          if (fake.holdResponses) break;
          for (const w of fake.words) {
            send({
              type: 'response.output_text.delta',
              response_id: responseId,
              item_id: 'item_1',
              delta: w,
            });
          }
          send({
            type: 'response.done',
            response: {
              id: responseId,
              status: 'completed',
              usage: { ...fake.usage, total_tokens: fake.usage.input_tokens + fake.usage.output_tokens },
            },
          });
          break;
        }
        default:
          send({
            type: 'error',
            error: {
              type: 'invalid_request_error',
              code: 'unknown_event',
              message: `Unknown event ${event.type}`,
            },
          });
      }
    });
  });
  return fake;
}
