import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake OpenAI-compatible upstream on 127.0.0.1 that speaks the Chat Completions wire format
// (JSON replies, `data:` SSE chunks ending with `data: [DONE]`, `{"error": {...}}` bodies).

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type Behaviour = (req: RecordedRequest, res: ServerResponse) => Promise<void> | void;

export interface FakeOpenAI {
  /** Base URL including `/v1`, as a custom host. */
  url: string;
  requests: RecordedRequest[];
  /** Replaces the default behaviour for the following requests. */
  use(behaviour: Behaviour): void;
  reset(): void;
  close(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function completion(
  model: string,
  content: string,
  usage = { prompt_tokens: 12, completion_tokens: 5 },
) {
  return {
    id: 'chatcmpl-fake123',
    object: 'chat.completion',
    created: 1_732_000_000,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      ...usage,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

export function chunk(
  model: string,
  delta: Record<string, unknown>,
  finish: string | null = null,
  usage: unknown = undefined,
) {
  return {
    id: 'chatcmpl-fake123',
    object: 'chat.completion.chunk',
    created: 1_732_000_000,
    model,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(usage === undefined ? {} : { usage }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake', ...headers });
  res.end(JSON.stringify(body));
}

export function openSse(res: ServerResponse) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': 'req_fake',
  });
  res.flushHeaders();
}

export const sseData = (value: unknown) =>
  `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

/** Streams `words` as content deltas, `delayMs` apart, then usage (when asked for) and `[DONE]`. */
export async function streamWords(req: RecordedRequest, res: ServerResponse, words: string[], delayMs = 0) {
  const model = String(req.body.model);
  const usageRequested = (req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
  openSse(res);
  res.write(
    sseData(
      chunk(
        model,
        { role: 'assistant', content: '', refusal: null },
        null,
        usageRequested ? null : undefined,
      ),
    ),
  );
  for (const w of words) {
    if (delayMs) await sleep(delayMs);
    res.write(sseData(chunk(model, { content: w }, null, usageRequested ? null : undefined)));
  }
  res.write(sseData(chunk(model, {}, 'stop', usageRequested ? null : undefined)));
  if (usageRequested) {
    res.write(
      sseData({
        id: 'chatcmpl-fake123',
        object: 'chat.completion.chunk',
        created: 1_732_000_000,
        model,
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: words.length, total_tokens: 12 + words.length },
      }),
    );
  }
  res.end(sseData('[DONE]'));
}

/** The default: a completion echoing the last user message, streamed when asked. */
export const echo: Behaviour = async (req, res) => {
  const messages = req.body.messages as Array<{ content?: unknown }> | undefined;
  const last = String(messages?.[messages.length - 1]?.content ?? '');
  if (req.body.stream) return streamWords(req, res, ['Echo: ', last]);
  sendJson(res, 200, completion(String(req.body.model), `Echo: ${last}`));
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  let behaviour: Behaviour = echo;
  const requests: RecordedRequest[] = [];
  const server = http.createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const c of req) text += c;
    let body: Record<string, unknown> = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      body = { _raw: text };
    }
    const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(recorded);
    try {
      await behaviour(recorded, res);
    } catch {
      res.destroy();
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    use(b) {
      behaviour = b;
    },
    reset() {
      behaviour = echo;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
