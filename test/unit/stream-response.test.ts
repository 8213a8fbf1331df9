import { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { drainAfterInvocationWork } from '../../functions/core/after-invocation';
import type { GatewayContext, HttpEvent, HttpResult } from '../../functions/core/http';
import type { SendOutcome } from '../../functions/core/log-entry';
import { loadSettings } from '../../functions/core/settings';
import type { StopSignal } from '../../functions/core/stop-signal';
import { telemetry } from '../../functions/gateway/request-telemetry';
import { streamingHandler } from '../../functions/middleware/stream-response';

// The Lambda streaming adapter against a stubbed `awslambda` global, as the runtime provides it: the
// prelude (status, headers) is captured, writes are recorded in order, and a close before the end is a
// client that went away.

class Captured extends Writable {
  readonly writes: string[] = [];
  prelude: { statusCode: number; headers?: Record<string, string> } | undefined;
  ended = false;
  override _write(chunk: Buffer | string, _e: BufferEncoding, callback: () => void): void {
    this.writes.push(String(chunk));
    callback();
  }
  override _final(callback: () => void): void {
    this.ended = true;
    callback();
  }
}

beforeAll(() => {
  vi.stubGlobal('awslambda', {
    streamifyResponse: <T>(handler: T) => handler,
    HttpResponseStream: {
      from(stream: Captured, prelude: Captured['prelude']) {
        stream.prelude = prelude;
        return stream;
      },
    },
  });
  vi.spyOn(telemetry, 'complete').mockImplementation(() => undefined);
});
afterAll(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

type Chain = (event: HttpEvent, context: GatewayContext) => Promise<HttpResult>;
const invoke = (chain: Chain, out = new Captured()) => {
  const handler = streamingHandler(chain) as unknown as (
    e: HttpEvent,
    s: Writable,
    c: Context,
  ) => Promise<void>;
  return { out, done: handler({} as HttpEvent, out, {} as Context) };
};

describe('streamingHandler', () => {
  it('sends a whole body with the status, the headers and the reply headers the chain added', async () => {
    const { out, done } = invoke(async (_e, context) => {
      context.gateway.replyHeaders['x-gateway-request-id'] = context.gateway.requestId;
      return { statusCode: 201, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    });
    await done;
    expect(out.prelude?.statusCode).toBe(201);
    expect(out.prelude?.headers?.['content-type']).toBe('application/json');
    expect(out.prelude?.headers?.['x-gateway-request-id']).toMatch(/^[0-9A-Z]{26}$/);
    expect(out.writes).toEqual(['{"ok":true}']);
    expect(out.ended).toBe(true);
  });

  it('writes each chunk of a streamed body before the next one exists (never buffered)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const out = new Captured();
    async function* body() {
      yield 'data: 1\n\n';
      await gate;
      yield 'data: 2\n\n';
    }
    const { done } = invoke(
      async () => ({ statusCode: 200, headers: { 'content-type': 'text/plain' }, body: body() }),
      out,
    );
    for (let i = 0; i < 100 && out.writes.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(out.writes).toEqual(['data: 1\n\n']);
    expect(out.ended).toBe(false);
    release();
    await done;
    expect(out.writes).toEqual(['data: 1\n\n', 'data: 2\n\n']);
    expect(out.ended).toBe(true);
  });

  it('runs the after-send work once the client has the last byte, with the outcome', async () => {
    const order: string[] = [];
    const out = new Captured();
    const { done } = invoke(async (_e, context) => {
      context.gateway.afterSend.push(async (outcome: SendOutcome) => {
        order.push(
          `after-send ended=${out.ended} status=${outcome.statusCode} gone=${outcome.clientDisconnected}`,
        );
      });
      return { statusCode: 200, headers: {}, body: 'x' };
    }, out);
    await done;
    expect(order).toEqual(['after-send ended=true status=200 gone=false']);
  });

  it('turns a chain that throws into an OpenAI-shaped 500 without internals', async () => {
    const { out, done } = invoke(async () => {
      throw new Error('secret internals');
    });
    await done;
    expect(out.prelude?.statusCode).toBe(500);
    const body = JSON.parse(out.writes.join(''));
    expect(body.error).toMatchObject({ type: 'server_error', code: 'internal_error' });
    expect(JSON.stringify(body)).not.toContain('secret internals');
  });

  it('aborts the client signal and stops writing when the client goes away mid-stream', async () => {
    const out = new Captured();
    let signal: StopSignal | undefined;
    let outcome: SendOutcome | undefined;
    let produced = 0;
    async function* body() {
      for (let i = 0; i < 1000; i++) {
        produced++;
        if (i === 2) out.destroy();
        yield `data: ${i}\n\n`;
        await new Promise((r) => setImmediate(r));
      }
    }
    const { done } = invoke(async (_e, context) => {
      signal = context.gateway.clientSignal;
      context.gateway.afterSend.push(async (o) => {
        outcome = o;
      });
      return { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body: body() };
    }, out);
    await done;
    expect(signal?.aborted).toBe(true);
    expect(outcome).toEqual({ statusCode: 200, clientDisconnected: true });
    expect(produced).toBeLessThan(10);
  });

  it('cuts (does not end) the transfer when the body fails part-way', async () => {
    const out = new Captured();
    async function* body() {
      yield 'partial';
      throw new Error('upstream broke');
    }
    const { done } = invoke(async () => ({ statusCode: 200, headers: {}, body: body() }), out);
    await done;
    expect(out.writes).toEqual(['partial']);
    expect(out.ended).toBe(false);
    expect(out.destroyed).toBe(true);
  });

  describe('after-send work (log entry, spend) and the end of the invocation', () => {
    afterEach(() => loadSettings());
    /** A chain whose one after-send task waits for the test; `finished` once it has. */
    const gated = () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const task = { started: false, finished: false, release };
      const chain: Chain = async (_e, context) => {
        context.gateway.afterSend.push(async () => {
          task.started = true;
          await gate;
          task.finished = true;
        });
        return { statusCode: 200, headers: {}, body: 'ok' };
      };
      return { chain, task };
    };

    it('on Lambda (no write window), ends the invocation only once that work is done', async () => {
      loadSettings({ ...process.env, GATEWAY_WRITE_BATCH_MS: '0' });
      const { chain, task } = gated();
      let returned = false;
      const { out, done } = invoke(chain);
      void done.then(() => {
        returned = true;
      });
      await vi.waitFor(() => expect(task.started).toBe(true));
      await new Promise((r) => setTimeout(r, 20));
      expect(out.ended).toBe(true);
      expect(returned).toBe(false);
      task.release();
      await done;
      expect(task.finished).toBe(true);
    });

    it('where the process writes what invocations leave (a write window), ends it at once and drains that work later', async () => {
      loadSettings({ ...process.env, GATEWAY_WRITE_BATCH_MS: '5' });
      const { chain, task } = gated();
      const { out, done } = invoke(chain);
      await done;
      // The reply is whole and the invocation over, with its after-send work started and still under way.
      expect(out.ended).toBe(true);
      expect(task.started).toBe(true);
      expect(task.finished).toBe(false);
      let drained = false;
      const drain = drainAfterInvocationWork().then(() => {
        drained = true;
      });
      await new Promise((r) => setTimeout(r, 20));
      expect(drained).toBe(false);
      task.release();
      await drain;
      expect(task.finished).toBe(true);
    });
  });
});
