import { afterEach, describe, expect, it } from 'vitest';
import { guardrailDenied } from '../../functions/core/errors';
import { UsageLogDraft } from '../../functions/core/log-entry';
import { loadSettings } from '../../functions/core/settings';
import { SseFrames, SseParser } from '../../functions/core/sse';
import { chatPassthrough, translatedChat } from '../../functions/gateway/chat-streams';
import type { StreamWatch } from '../../functions/gateway/request-guard';
import { type RelayChunk, type RelayOptions, relayStream } from '../../functions/gateway/stream-relay';
import type { ResolvedTarget } from '../../functions/gateway/target';
import { anthropicChat } from '../../functions/providers/anthropic/chat-completions';

// The one stream relay loop, driven with a scripted upstream: what the client receives, in which
// batches, and what the log entry records, however the stream ends.

const target = { provider: { name: 'openai' }, apiKey: 'sk-upstream-secret' } as unknown as ResolvedTarget;
const anthropicTarget = { provider: { name: 'anthropic' }, apiKey: 'sk-ant' } as unknown as ResolvedTarget;

const newLog = () => {
  const log = new UsageLogDraft(
    {
      id: 'r1',
      trace_id: 't1',
      timestamp: '2026-11-23T00:00:00Z',
      organisation_id: 'org',
      workspace: 'ws',
      auth: { type: 'admin' },
      metadata: {},
      operation: 'chat.completions',
    } as unknown as ConstructorParameters<typeof UsageLogDraft>[0],
    0,
  );
  log.model = 'gpt-4o-mini';
  return log;
};

const data = (value: unknown) => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;
const delta = (content: string, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
});
const usageChunk = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
};

/** An upstream body that yields `pieces` (one read each), then ends or throws `failure`. */
async function* upstreamOf(pieces: string[], failure?: Error): AsyncGenerator<Buffer> {
  for (const p of pieces) yield Buffer.from(p);
  if (failure) throw failure;
}

/** A watch that refuses once the text contains `word`; records every check it was asked for. */
function refusing(word: string) {
  const checks: Array<{ text: string; final: boolean }> = [];
  const watch: StreamWatch = {
    check: async (text, final) => {
      checks.push({ text, final });
      return text.includes(word) ? guardrailDenied(`blocked by guardrails: no-${word}`) : undefined;
    },
  };
  return { watch, checks };
}

function options(body: AsyncIterable<Buffer>, extra: Partial<RelayOptions> = {}): RelayOptions {
  return {
    upstream: { status: 200, headers: {}, body },
    target,
    log: newLog(),
    sentAt: performance.now(),
    inputTokens: 20,
    client: new AbortController().signal,
    ...extra,
  };
}

async function collect(stream: AsyncIterable<RelayChunk>): Promise<string[]> {
  const out: string[] = [];
  for await (const piece of stream)
    out.push(typeof piece === 'string' ? piece : Buffer.from(piece).toString());
  return out;
}

/** Settings are read once: a test's drain window is loaded into them, and the default put back after. */
const drainWindow = (ms: number) =>
  loadSettings({ ...process.env, GATEWAY_ABANDONED_STREAM_DRAIN_MS: String(ms) });
afterEach(() => {
  loadSettings();
});

describe('relayStream with an OpenAI-format stream passed through', () => {
  it('passes the upstream bytes on as they came, records first_chunk_ms, usage and cost', async () => {
    const o = options(
      upstreamOf([data(delta('Hel')), data(delta('lo', 'stop')) + data(usageChunk) + data('[DONE]')]),
    );
    const format = chatPassthrough({ target, log: o.log, dropUsageChunk: false, guarded: false });
    const sent = await collect(relayStream(format, o));
    expect(sent[0]).toBe(data(delta('Hel')));
    expect(sent[1]).toContain(data(delta('lo', 'stop')));
    expect(sent[1]).toContain('"x-gateway":{"cost":');
    expect(sent[1]?.endsWith(data('[DONE]'))).toBe(true);
    expect(o.log.firstChunkMs).toBeTypeOf('number');
    expect(o.log.usage).toEqual(usageChunk.usage);
    expect(o.log.cost).toBeCloseTo((10 * 0.15 + 4 * 0.6) / 1e6, 12);
    expect(
      (o.log.response as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    ).toBe('Hello');
    expect(o.log.effectiveStatus).toBeNull();
  });

  it('holds an event back until its blank line arrives, whatever the read boundaries', async () => {
    const whole = data(delta('a')) + data(delta('b'));
    const o = options(
      upstreamOf([whole.slice(0, 7), whole.slice(7, whole.length - 1), whole.slice(-1), data('[DONE]')]),
    );
    const sent = await collect(
      relayStream(chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }), o),
    );
    expect(sent).toEqual([data(delta('a')), data(delta('b')), data('[DONE]')]);
  });

  it('checks a final event that comes without its closing blank line before sending it', async () => {
    const { watch, checks } = refusing('secret');
    const o = options(
      upstreamOf([data(delta('All is fine. ')), `data: ${JSON.stringify(delta('The secret.'))}`]),
      {
        watch,
      },
    );
    const sent = await collect(
      relayStream(chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: true }), o),
    );
    expect(sent.join('')).not.toContain('The secret.');
    expect(sent.at(-1)).toMatch(/^event: error\n/);
    expect(sent.at(-1)).toContain('no-secret');
    expect(checks.at(-1)?.text).toContain('The secret.');
    expect(o.log.effectiveStatus).toBe(446);
  });

  it('ends a stream without [DONE] with an SSE error event, and logs the estimate', async () => {
    const o = options(upstreamOf([data(delta('Hello there'))]));
    const sent = await collect(
      relayStream(chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }), o),
    );
    expect(sent.at(-1)).toContain('stream_truncated');
    expect(o.log.effectiveStatus).toBe(502);
    expect(o.log.usage).toMatchObject({ prompt_tokens: 20, estimated: true });
  });

  it('ends a failed read with an SSE error event after what was sent', async () => {
    const o = options(
      upstreamOf([data(delta('Hi'))], Object.assign(new Error('reset'), { code: 'ECONNRESET' })),
    );
    const sent = await collect(
      relayStream(chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }), o),
    );
    expect(sent[0]).toBe(data(delta('Hi')));
    expect(sent.at(-1)).toMatch(/^event: error\n/);
    expect(o.log.error?.code).toBe('stream_failed');
  });

  it("turns the provider's error event into the SSE error event, masked, and sends nothing after it", async () => {
    const o = options(
      upstreamOf([
        data(delta('Hi')) +
          data({ error: { message: 'bad key sk-upstream-secret', type: 'server_error' } }) +
          data(delta('late')),
      ]),
    );
    const sent = (
      await collect(
        relayStream(chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }), o),
      )
    ).join('');
    expect(sent).toContain('event: error');
    expect(sent).not.toContain('sk-upstream-secret');
    expect(sent).not.toContain('late');
  });

  it('stops sending when the client leaves, reads on for the usage, then cuts the upstream', async () => {
    drainWindow(1000);
    const client = new AbortController();
    let cut = false;
    let release!: () => void;
    const later = new Promise<void>((r) => {
      release = r;
    });
    async function* body(): AsyncGenerator<Buffer> {
      yield Buffer.from(data(delta('one ')));
      await later;
      yield Buffer.from(data(delta('two', 'stop')) + data(usageChunk));
      yield Buffer.from(data('[DONE]'));
    }
    const o = options(body(), { client: client.signal, cut: () => (cut = true) });
    const stream = relayStream(
      chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }),
      o,
    );
    expect(Buffer.from((await stream.next()).value as RelayChunk).toString()).toBe(data(delta('one ')));
    const next = stream.next();
    client.abort();
    setTimeout(release, 10);
    expect((await next).done).toBe(true);
    expect(cut).toBe(true);
    expect(o.log.usage).toEqual(usageChunk.usage);
  });

  it('charges an estimate when the client left and the usage does not come within the drain window', async () => {
    drainWindow(20);
    const client = new AbortController();
    async function* body(): AsyncGenerator<Buffer> {
      yield Buffer.from(data(delta('one two three')));
      await new Promise(() => undefined);
    }
    const o = options(body(), { client: client.signal });
    const stream = relayStream(
      chatPassthrough({ target, log: o.log, dropUsageChunk: true, guarded: false }),
      o,
    );
    await stream.next();
    const next = stream.next();
    client.abort();
    expect((await next).done).toBe(true);
    expect(o.log.usage).toMatchObject({ prompt_tokens: 20, estimated: true });
    expect(o.log.usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('relayStream with a translated stream', () => {
  const event = (name: string, value: unknown) => `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
  const start = event('message_start', {
    type: 'message_start',
    message: { id: 'msg_1', model: 'claude-sonnet-4-6', usage: { input_tokens: 9, output_tokens: 1 } },
  });
  const text = (t: string) =>
    event('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: t },
    });
  const end =
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: 3 },
    }) + event('message_stop', { type: 'message_stop' });
  const translated = (o: RelayOptions) =>
    translatedChat({
      target: anthropicTarget,
      log: o.log,
      dropUsageChunk: false,
      translation: anthropicChat,
      context: { model: 'claude-sonnet-4-6', stream: true, baseUrl: '', target: {} },
    });

  it('writes OpenAI chunks, the usage chunk with its cost, and [DONE]', async () => {
    const o = options(upstreamOf([start, text('Hi'), end]), { target: anthropicTarget });
    const sent = (await collect(relayStream(translated(o), o))).join('');
    expect(sent).toContain('"content":"Hi"');
    expect(sent).toContain('"x-gateway":{"cost":');
    expect(sent.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(o.log.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3 });
    expect(o.log.firstChunkMs).toBeTypeOf('number');
  });

  it('checks the final event without its blank line, and checks the whole output once more at the end only if it grew', async () => {
    const { watch, checks } = refusing('secret');
    const o = options(upstreamOf([start, text('Fine. '), text('A secret').trimEnd()]), {
      target: anthropicTarget,
      watch,
    });
    const sent = (await collect(relayStream(translated(o), o))).join('');
    expect(sent).not.toContain('A secret');
    expect(sent).toContain('no-secret');
    expect(checks.at(-1)?.text).toBe('Fine. A secret');

    const passing = refusing('never');
    const ok = options(upstreamOf([start, text('Fine.'), end]), {
      target: anthropicTarget,
      watch: passing.watch,
    });
    await collect(relayStream(translated(ok), ok));
    expect(passing.checks.filter((c) => c.final)).toHaveLength(1);
  });

  it("reads the provider's usage after the client left, when it comes within the window", async () => {
    drainWindow(1000);
    const client = new AbortController();
    async function* body(): AsyncGenerator<Buffer> {
      yield Buffer.from(start + text('one '));
      await new Promise((r) => setTimeout(r, 20));
      yield Buffer.from(end);
    }
    const o = options(body(), { target: anthropicTarget, client: client.signal });
    const stream = relayStream(translated(o), o);
    await stream.next();
    const next = stream.next();
    client.abort();
    expect((await next).done).toBe(true);
    expect(o.log.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3 });
    expect(o.log.usage?.estimated).toBeUndefined();
  });
});

describe('SseFrames', () => {
  it('splits bytes into the same events as SseParser, at any read boundary', () => {
    const text = 'data: a\n\n: comment\r\n\r\nevent: x\ndata: é\r\rdata: [DONE]\n\ndata: rest';
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const step of [1, 2, 3, 5]) {
        const frames = new SseFrames();
        const parser = new SseParser();
        const got: string[] = [];
        const want: string[] = [];
        const pieces = [bytes.subarray(0, cut)];
        for (let i = cut; i < bytes.length; i += step) pieces.push(bytes.subarray(i, i + step));
        for (const piece of pieces) {
          const batch = frames.push(piece);
          let from = 0;
          for (const end of batch.ends) {
            got.push(Buffer.from(batch.bytes.subarray(from, end)).toString());
            from = end;
          }
          for (const ev of parser.push(piece)) want.push(ev.raw);
        }
        const rest = frames.flush();
        if (rest) got.push(Buffer.from(rest).toString());
        const parsedRest = parser.flush();
        if (parsedRest) want.push(parsedRest.raw);
        expect(got).toEqual(want);
      }
    }
  });
});
