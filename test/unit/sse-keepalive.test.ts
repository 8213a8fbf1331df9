import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HttpEvent, HttpResult } from '../../functions/core/http';
import { loadSettings } from '../../functions/core/settings';
import { telemetry } from '../../functions/gateway/request-telemetry';
import { streamingHandler } from '../../functions/middleware/stream-response';
import { installAwsLambdaShim } from '../../local/awslambda-shim';

// The keep-alive timer is driven by fake timers: the test decides when silence has lasted long enough.

/** A response stream that keeps every write. */
class Collected extends Writable {
  readonly writes: string[] = [];
  setPrelude(): void {}
  override _write(chunk: Buffer | string, _e: BufferEncoding, callback: () => void): void {
    this.writes.push(String(chunk));
    callback();
  }
}

/** A body whose chunks the test releases one by one. */
function gatedBody(chunks: string[]) {
  const gates = chunks.map(() => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    return { promise, resolve };
  });
  async function* body() {
    for (const [i, chunk] of chunks.entries()) {
      await gates[i]?.promise;
      yield chunk;
    }
  }
  return { body: body(), release: (i: number) => gates[i]?.resolve() };
}

const settle = async (out: Collected, count: number) => {
  for (let i = 0; i < 1000 && out.writes.length < count; i++) await new Promise((r) => setImmediate(r));
};

function run(contentType: string, chunks: string[]) {
  const { body, release } = gatedBody(chunks);
  const result: HttpResult = { statusCode: 200, headers: { 'Content-Type': contentType }, body };
  const handler = streamingHandler(async () => result) as unknown as (
    event: HttpEvent,
    stream: Writable,
    context: Context,
  ) => Promise<void>;
  const out = new Collected();
  const done = handler({} as HttpEvent, out, {} as Context);
  return { out, release, done };
}

beforeAll(() => {
  installAwsLambdaShim();
  // Metrics are not what this tests, and would print EMF records.
  vi.spyOn(telemetry, 'complete').mockImplementation(() => undefined);
});
afterEach(() => {
  vi.useRealTimers();
  delete process.env.GATEWAY_SSE_KEEPALIVE_MS;
  loadSettings();
});

describe('SSE keep-alive in the streaming middleware', () => {
  it('comments only between whole events, once per silent interval', async () => {
    process.env.GATEWAY_SSE_KEEPALIVE_MS = '20';
    loadSettings();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { out, release, done } = run('text/event-stream; charset=utf-8', [
      'data: {"a":',
      '1}\n\n',
      'data: 2\n\n',
    ]);
    release(0);
    await settle(out, 1);
    // Silent in the middle of an event: a comment there would corrupt it.
    vi.advanceTimersByTime(100);
    expect(out.writes).toEqual(['data: {"a":']);
    release(1);
    await settle(out, 2);
    vi.advanceTimersByTime(40);
    release(2);
    await done;
    expect(out.writes.join('')).toBe('data: {"a":1}\n\n: keep-alive\n\n: keep-alive\n\ndata: 2\n\n');
  });

  it('sends none for a body that is not an event stream, nor when set to 0', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    for (const [type, ms] of [
      ['application/octet-stream', '20'],
      ['text/event-stream', '0'],
    ] as const) {
      process.env.GATEWAY_SSE_KEEPALIVE_MS = ms;
      loadSettings();
      const { out, release, done } = run(type, ['data: 1\n\n', 'data: 2\n\n']);
      release(0);
      await settle(out, 1);
      vi.advanceTimersByTime(100);
      release(1);
      await done;
      expect(out.writes.join('')).toBe('data: 1\n\ndata: 2\n\n');
    }
  });
});
