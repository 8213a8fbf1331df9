import { type GatewayError, streamFailed, streamTruncated } from '../core/errors';
import type { HttpResult, ModelCallState } from '../core/http';
import type { Usage, UsageLogDraft } from '../core/log-entry';
import { settings } from '../core/settings';
import type { SseEvent, SseParser } from '../core/sse';
import { ClientSignal, type StopSignal } from '../core/stop-signal';
import type { CallSuccess } from './call-upstream';
import { tokenBound } from './pricing';
import type { RequestGuard, StreamWatch } from './request-guard';
import { recordStreamFailure, recordUsage } from './settle';
import type { ResolvedTarget } from './target';
import { ClientGoneError, type UpstreamResponse } from './upstream';

// The one loop every streamed model reply goes through (chat passed through or translated, the Responses
// API, Anthropic's Messages API). The loop owns what is the same for all of them: chunk timing, output
// guardrails before anything is sent, the end of the stream (complete, cut, failed or left by the client),
// reading on for the provider's usage when the client left, and the log. What differs per stream kind
// (how events are framed, translated and read for usage) is a `StreamFormat`.

/** What the relay writes to the client: text, or upstream bytes passed on untouched. */
export type RelayChunk = string | Uint8Array;

/** How one kind of stream is read and written. */
export interface StreamFormat {
  /** What the client gets for the upstream bytes just read; an event is held back until it is complete. */
  push(bytes: Uint8Array): RelayChunk;
  /** What the client gets once the upstream has ended: an event that came without its closing blank line. */
  flush(): RelayChunk;
  /** What the client gets after a complete stream (the translated `[DONE]`). */
  end(): RelayChunk;
  /** The provider ended its message. */
  readonly complete: boolean;
  /** An error the provider reported in the stream; its event is already in what `push` returned. */
  readonly failure: GatewayError | undefined;
  /** Nothing the log still needs can come: the provider's usage arrived, or its stream ended or failed. */
  settled(): boolean;
  /** The output so far, as output guardrails read it (text and tool-call arguments). */
  checkedText(): string;
  /** The gateway's own error event in this wire format (a guardrail refusal, a cut, a failed read). */
  errorEvent(error: GatewayError): string;
  /** Once the stream is over: the reply for the log, the provider's usage, the model it names, and all it generated. */
  result(): StreamResult;
}

/** A last event as the client gets it: with the closing blank line the upstream left out. */
export const closedEvent = (out: string): string => (out === '' || out.endsWith('\n\n') ? out : `${out}\n\n`);

/**
 * `push`, `flush` and `end` of a format whose upstream events are parsed and relayed one by one: `relay`
 * turns complete events into what the client gets; a last event without its blank line gets one.
 */
export function eventRelay(
  parser: SseParser,
  relay: (events: SseEvent[]) => string,
): Pick<StreamFormat, 'push' | 'flush' | 'end'> {
  return {
    push: (bytes) => relay(parser.push(bytes)),
    flush() {
      const rest = parser.flush();
      return rest ? closedEvent(relay([rest])) : '';
    },
    end: () => '',
  };
}

export interface StreamResult {
  response: unknown;
  usage: Usage | null;
  model: unknown;
  /** Every piece of generated output (text, reasoning, tool calls): what an unfinished stream is charged for. */
  generated: string;
}

export interface RelayOptions {
  upstream: UpstreamResponse;
  target: ResolvedTarget;
  log: UsageLogDraft;
  /** When the upstream request was sent: the origin of `first_chunk_ms` and the upstream latency. */
  sentAt: number;
  /** Upper bound of the prompt's tokens: what a stream left unfinished without usage is charged for its input. */
  inputTokens: number;
  watch?: StreamWatch;
  /** The client's signal: the relay stops writing when it aborts. */
  client: StopSignal;
  /**
   * Stops reading the upstream, when the upstream call does not follow the client's signal (`streamSignal`),
   * so that the provider's usage can still be read after the client left.
   */
  cut?: () => void;
}

/** A successful attempt whose stream the relay stops reading with `cut` (see `streamSignal`). */
export interface Streamed extends CallSuccess {
  cut?: () => void;
}

const LEFT = Symbol('client left');

/**
 * A signal for a streamed upstream call: it follows the client's until `detach` (once the reply has
 * started), and `abort` still fires afterwards. The relay then decides when to stop reading.
 */
export function streamSignal(client: StopSignal) {
  const own = new ClientSignal();
  const follow = () => own.abort();
  if (client.aborted) own.abort();
  else client.addEventListener('abort', follow, { once: true });
  return {
    signal: own,
    detach: () => client.removeEventListener('abort', follow),
    abort: () => own.abort(),
  };
}

/** The stream an attempt started, and the request it answers. */
export interface StreamedReply {
  state: ModelCallState;
  target: ResolvedTarget;
  success: Streamed;
  /** Upper bound of the prompt's tokens: what a stream left unfinished without usage is charged for its input. */
  inputTokens: number;
  guard: RequestGuard | undefined;
}

/** The 200 event-stream reply of a stream an attempt started, relayed through `format`. */
export function streamReply(
  format: StreamFormat,
  reply: StreamedReply,
): HttpResult & { body: AsyncGenerator<RelayChunk> } {
  const { state, target, success, guard } = reply;
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...success.headers,
    },
    body: relayStream(format, {
      upstream: success.upstream,
      target,
      log: state.log,
      sentAt: success.sentAt,
      inputTokens: reply.inputTokens,
      watch: guard?.checksOutput ? guard.watchStream() : undefined,
      client: state.clientSignal,
      cut: success.cut,
    }),
  };
}

/**
 * Relays one upstream stream to the client through `format`: each batch is sent as soon as its events
 * are complete, after the output guardrails have read it (the last event too, when the upstream ends
 * without its closing blank line). Ends with the format's error event when the provider fails, the
 * guardrails refuse, the read fails or the stream is cut; records `first_chunk_ms`, usage, cost and any
 * failure on the log entry however it ended.
 */
export async function* relayStream(format: StreamFormat, options: RelayOptions): AsyncGenerator<RelayChunk> {
  const { log, sentAt, watch, client } = options;
  let failure: GatewayError | undefined;
  // The text length at the last final check: a final batch with no new text is not checked again.
  let finalCheckedAt = -1;

  /** Sends a batch unless the guardrails refuse the output so far: then the error event, and false. */
  async function* send(out: RelayChunk, final: boolean): AsyncGenerator<RelayChunk, boolean> {
    if (watch) {
      const text = format.checkedText();
      if (!final || text.length !== finalCheckedAt) {
        if (final) finalCheckedAt = text.length;
        const denied = await watch.check(text, final);
        if (denied) {
          failure = denied;
          yield format.errorEvent(denied);
          return false;
        }
      }
    }
    if (out.length > 0) {
      yield out;
      // The generator resumes only once the adapter has written the chunk to the client.
      log.firstChunkMs ??= performance.now() - sentAt;
    }
    return true;
  }

  const chunks = options.upstream.body[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<Buffer>> | undefined;
  // Ends the read being waited on when the client leaves (one waiter per read, none piling up).
  let leave: () => void = () => undefined;
  const onLeave = () => leave();
  client.addEventListener('abort', onLeave, { once: true });
  const read = (next: Promise<IteratorResult<Buffer>>) =>
    new Promise<IteratorResult<Buffer> | typeof LEFT>((resolve, reject) => {
      leave = () => resolve(LEFT);
      if (client.aborted) resolve(LEFT);
      next.then(resolve, reject);
    });
  try {
    for (;;) {
      pending = chunks.next();
      const next = await read(pending);
      if (next === LEFT) return;
      pending = undefined;
      if (next.done) break;
      if (!(yield* send(format.push(next.value), format.complete))) return;
      failure = format.failure;
      if (failure) break;
    }
    if (!failure) {
      if (!(yield* send(format.flush(), format.complete))) return;
      failure = format.failure;
    }
    if (failure) return;
    if (!format.complete) {
      failure = streamTruncated();
      yield format.errorEvent(failure);
      return;
    }
    yield* send(format.end(), true);
  } catch (error) {
    if (!(error instanceof ClientGoneError)) {
      failure = streamFailed(error);
      yield format.errorEvent(failure);
    }
  } finally {
    client.removeEventListener('abort', onLeave);
    // The client left before the provider's usage: read on (sending nothing) until it comes, for a while.
    // How long a stream the client left is still read for the provider's usage (0: not at all).
    const drain = settings().abandonedStreamDrainMs;
    if (drain > 0 && client.aborted && !failure && !format.settled()) {
      await drainUsage(chunks, pending, drain, (bytes) => {
        format.push(bytes);
        return format.settled();
      });
      pending = undefined;
    }
    options.cut?.();
    // A read left waiting ends with the cut; its outcome no longer matters. Returning the body closes
    // the upstream connection of a stream left before its end even without a cut.
    pending?.catch(() => undefined);
    chunks.return?.()?.catch(() => undefined);
    finishLog(format, options, failure);
  }
}

/** Reads a stream's remaining chunks into `take` until it says it has what it needs, or for `ms` at most. */
async function drainUsage(
  chunks: AsyncIterator<Buffer>,
  pending: Promise<IteratorResult<Buffer>> | undefined,
  ms: number,
  take: (bytes: Buffer) => boolean,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), ms);
  });
  let next = pending ?? chunks.next();
  try {
    for (;;) {
      const got = await Promise.race([next, expired]);
      if (got === 'expired' || got.done || take(got.value)) return;
      next = chunks.next();
    }
  } catch {
    // The provider failed or cut the stream: the estimate applies.
  } finally {
    clearTimeout(timer);
    next.catch(() => undefined);
  }
}

/**
 * The log after a stream, however it ended. A stream left unfinished without the provider's usage is
 * charged for what it consumed: the prompt's token bound and the tokens of the output received, flagged
 * `estimated`.
 */
function finishLog(format: StreamFormat, options: RelayOptions, failure: GatewayError | undefined): void {
  const { log, target, inputTokens } = options;
  log.upstreamLatencyMs = performance.now() - options.sentAt;
  const result = format.result();
  log.response = result.response;
  let usage = result.usage;
  if (!usage && !format.complete) {
    const completion = tokenBound(result.generated);
    usage = {
      prompt_tokens: inputTokens,
      completion_tokens: completion,
      total_tokens: inputTokens + completion,
      estimated: true,
    };
  }
  recordUsage(log, target, usage, result.model);
  recordStreamFailure(log, failure);
}
