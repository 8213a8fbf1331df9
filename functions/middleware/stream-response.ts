import type { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { outliveInvocation, workOutlivesInvocation } from '../core/after-invocation';
import { internalError } from '../core/errors';
import type { GatewayContext, HttpEvent, HttpResult, RequestState } from '../core/http';
import { newId } from '../core/ids';
import type { SendOutcome } from '../core/log-entry';
import { logger, logInvocation } from '../core/logger';
import { settings } from '../core/settings';
import { markStage } from '../core/stage-clock';
import { ClientSignal } from '../core/stop-signal';
import { telemetry } from '../gateway/request-telemetry';

type Chain = (event: HttpEvent, context: GatewayContext) => Promise<HttpResult>;

/** The SSE comment sent while a stream is silent; every SSE client ignores it. */
export const SSE_KEEPALIVE = ': keep-alive\n\n';

/**
 * The Lambda entry point around a Middy chain. Middy runs `after` before a streamed body is sent, so the
 * body is written here, chunk by chunk, and the request's `afterSend` work (usage log, spend) runs once
 * the client has its last byte: on Lambda before the invocation returns; in the local server, which
 * writes and drains what its invocations leave, beside the invocations that follow
 * (`core/after-invocation.ts`).
 */
export function streamingHandler(chain: Chain) {
  return awslambda.streamifyResponse<HttpEvent>(async (event, responseStream: Writable, context: Context) => {
    const client = new ClientSignal();
    const state: RequestState = {
      requestId: newId(),
      traceId: '',
      startedAt: performance.now(),
      startedAtMs: Date.now(),
      headers: {},
      params: {},
      clientSignal: client,
      afterSend: [],
      replyHeaders: {},
      upstreamWaitMs: 0,
    };
    const gatewayContext = Object.assign(context, { gateway: state }) as GatewayContext;
    logInvocation(context, { requestId: state.requestId });

    let result: HttpResult;
    try {
      result = await chain(event, gatewayContext);
    } catch (error) {
      logger.error('handler chain threw', { error: (error as Error).message });
      const e = internalError();
      result = {
        statusCode: e.status,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(e.toBody()),
      };
    }

    let finished = false;
    let disconnected = false;
    const onGone = () => {
      // A stream that finished normally closes too; only a close before `finish` is a departure.
      if (finished || responseStream.writableFinished) return;
      disconnected = true;
      client.abort();
    };
    responseStream.once('close', onGone);
    responseStream.once('error', onGone);

    // Model replies say how long the gateway itself took before the reply started, as LiteLLM's do.
    if (state.log) state.replyHeaders['x-gateway-overhead-ms'] = overheadMs(state);
    const out = awslambda.HttpResponseStream.from(responseStream, {
      statusCode: result.statusCode,
      headers: { ...result.headers, ...state.replyHeaders },
    });
    try {
      if (typeof result.body === 'string') {
        out.write(result.body);
      } else {
        // Lambda may hold back small first writes of a stream; an SSE comment of this many bytes on the
        // first write pushes the headers and first event out at once where that happens. Off by default.
        const padding = settings().streamPaddingBytes;
        if (padding > 0) out.write(`:${' '.repeat(padding)}\n\n`);
        const keepAlive = isEventStream(result.headers) ? sseKeepAlive(out) : undefined;
        try {
          for await (const chunk of result.body) {
            if (disconnected) break;
            keepAlive?.sent(chunk);
            if (!out.write(chunk)) await drained(out);
          }
        } finally {
          keepAlive?.stop();
        }
      }
      if (!disconnected) await endStream(out);
    } catch (error) {
      disconnected = true;
      client.abort();
      // Cut the transfer rather than end it: a client must not take a partial body for a whole one.
      if (!responseStream.destroyed) responseStream.destroy();
      logger.warn('reply stream failed', { error: (error as Error).message });
    }
    finished = true;
    const sentAt = performance.now();

    const outcome: SendOutcome = { statusCode: result.statusCode, clientDisconnected: disconnected };
    markStage('log write / settle');
    // Stage timing serves one request at a time (the bench's): the stage ends when this work does.
    const work = Promise.all(
      state.afterSend.map((task) =>
        task(outcome).catch((error: unknown) =>
          logger.error('after-send task failed', { error: (error as Error).message }),
        ),
      ),
    ).then(() => markStage(null));
    // Each task has taken what it writes (the finished entry is on `state`) before its first wait.
    if (workOutlivesInvocation()) outliveInvocation(work);
    else await work;
    // Last, so that it sees the finished log entry; a telemetry failure must not fail the invocation.
    try {
      telemetry.complete({
        requestId: state.requestId,
        traceId: state.traceId,
        operation: state.operation?.name ?? null,
        status: disconnected ? 499 : result.statusCode,
        latencyMs: sentAt - state.startedAt,
        errorOrigin: result.headers['x-gateway-error-origin'] ?? null,
        entry: state.entry,
      });
    } catch (error) {
      logger.error('telemetry failed', { error: (error as Error).message });
    }
  });
}

/** The request's time so far, less the time it waited on providers, in ms with two decimals. */
function overheadMs(state: RequestState): string {
  return Math.max(0, performance.now() - state.startedAt - state.upstreamWaitMs).toFixed(2);
}

function isEventStream(headers: Record<string, string>): boolean {
  const type = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  return type?.toLowerCase().startsWith('text/event-stream') ?? false;
}

/**
 * Writes an SSE comment when nothing has been sent for the keep-alive interval, so that CloudFront's
 * origin read timeout does not cut a stream whose upstream is thinking. Only between events: a comment
 * inside a half-sent event would corrupt it.
 */
function sseKeepAlive(out: Writable): { sent(chunk: string | Uint8Array): void; stop(): void } | undefined {
  // Read per stream, so that settings loaded again (a local server's restart) apply at once.
  const ms = settings().sseKeepAliveMs;
  if (ms === 0) return undefined;
  let atBoundary = true;
  let tail = '';
  const timer = setInterval(() => {
    if (atBoundary && !out.writableEnded && !out.destroyed && !out.writableNeedDrain)
      out.write(SSE_KEEPALIVE);
  }, ms);
  timer.unref();
  return {
    sent(chunk) {
      if (chunk.length === 0) return;
      // Only the last four characters matter for the event boundary (LF LF or CR LF CR LF).
      const text =
        typeof chunk === 'string' ? chunk.slice(-4) : Buffer.from(chunk.subarray(-4)).toString('latin1');
      tail = (tail + text).slice(-4);
      atBoundary = tail.endsWith('\n\n') || tail.endsWith('\r\n\r\n') || tail.endsWith('\r\r');
      timer.refresh();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

function endStream(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    stream.end(() => resolve());
    stream.once('close', () => resolve());
  });
}
