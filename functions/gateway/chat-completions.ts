import {
  badRequest,
  type GatewayError,
  streamedProviderError,
  streamFailed,
  streamTruncated,
} from '../core/errors';
import type { HttpEvent, HttpResult, ModelCallState } from '../core/http';
import type { UsageLogDraft } from '../core/log-entry';
import { bodyText, checkFieldLengths, jsonBody, tryJson } from '../core/request-body';
import { credentialMasker } from '../core/secret-mask';
import { SseParser, sseErrorEvent } from '../core/sse';
import type { ChatCall, ChatContext, ChatTranslation, Json } from '../providers/types';
import { type CallSuccess, exchange } from './call-upstream';
import { ChatStreamAccumulator } from './chat-stream-accumulator';
import { type RouteOptions, routeModelCall } from './model-call';
import { costOf, readUsage, tokenBound } from './pricing';
import { chatMessageSlots, chatReplySlots, RequestGuard, type StreamWatch } from './request-guard';
import { inputBound } from './reserve';
import { recordStreamFailure, recordUsage } from './settle';
import type { ResolvedTarget } from './target';
import { ClientGoneError, type UpstreamResponse } from './upstream';

function validate(body: Record<string, unknown>): void {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw badRequest('model is required: a non-empty string.', 'model', 'missing_required_parameter');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw badRequest(
      'messages is required: a non-empty array of messages.',
      'messages',
      'missing_required_parameter',
    );
  }
  body.messages.forEach((m, i) => {
    if (
      !m ||
      typeof m !== 'object' ||
      Array.isArray(m) ||
      typeof (m as { role?: unknown }).role !== 'string'
    ) {
      throw badRequest(
        `messages[${i}] must be an object with a string role.`,
        `messages[${i}]`,
        'invalid_type',
      );
    }
  });
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw badRequest('stream must be a boolean.', 'stream', 'invalid_type');
  }
  if (body.user !== undefined && typeof body.user !== 'string') {
    throw badRequest('user must be a string.', 'user', 'invalid_type');
  }
}

/** POST /v1/chat/completions: one OpenAI-shaped request, routed by the gateway config, streamed or not. */
export async function chatCompletions(event: HttpEvent, state: ModelCallState): Promise<HttpResult> {
  const log = state.log;
  const text = bodyText(event);
  log.request = text;
  return runChatCompletion(jsonBody(text), state);
}

/**
 * Runs a chat completion request body through the gateway: validation, routing, the upstream call, and
 * the reply relayed whole or streamed. Prompt completions come here with the body they rendered.
 */
export async function runChatCompletion(
  body: Record<string, unknown>,
  state: ModelCallState,
  options: RouteOptions = {},
  native?: NativeRoute,
): Promise<HttpResult> {
  const log = state.log;
  log.request = body;
  checkFieldLengths(body);
  if (typeof body.model === 'string') log.model = body.model;
  if (typeof body.user === 'string') log.user = body.user;
  log.stream = body.stream === true;
  validate(body);
  const guard = await RequestGuard.forRequest(state, body.model as string);
  // Redaction rewrites the body in place, so the provider and the log both see the redacted text.
  await guard?.checkInput(chatMessageSlots(body));

  const stream = body.stream === true;
  const clientWantsUsage =
    !!body.stream_options &&
    typeof body.stream_options === 'object' &&
    (body.stream_options as { include_usage?: unknown }).include_usage === true;

  const attempt = async (target: ResolvedTarget, model: string | undefined): Promise<ChatSuccess> => {
    if (native?.serves(target)) {
      const own = await native.attempt(target, model);
      return { ...own, native: true, context: { model: '', stream, baseUrl: target.baseUrl, target } };
    }
    const upstreamBody: Json = { ...body, model, ...target.overrideParams };
    const upstreamModel = typeof upstreamBody.model === 'string' ? upstreamBody.model : String(model ?? '');
    log.model = upstreamModel;
    const translation = target.provider.chat;
    const context: ChatContext = { model: upstreamModel, stream, baseUrl: target.baseUrl, target };
    const call = await buildCall(target, translation, upstreamBody, context);
    const streamType = translation?.streamContentType ?? 'text/event-stream';
    // A relayed stream asks for usage (buildCall): once its reply has started, it is not cut with the
    // client, so that the usage can still be read when the client leaves (see relayStream).
    const upstream = stream && !translation ? detachable(state.clientSignal) : undefined;
    const success = await exchange(state, target, {
      method: 'POST',
      url: call.url,
      contentType: 'application/json',
      accept: stream ? streamType : 'application/json',
      body: call.body,
      providerHeaders: call.headers,
      keepOpen: (contentType) => stream && contentType.includes(streamType),
      translateError: translation?.error,
      signal: upstream?.signal,
    }).finally(() => upstream?.detach());
    if (translation && success.replyText !== undefined) {
      // A whole reply (also a streamed request the provider answered whole) is translated as one.
      const translated = translation.response(success.reply, context);
      return { ...success, replyText: JSON.stringify(translated), reply: translated, translation, context };
    }
    return { ...success, translation, context, cut: upstream?.abort ?? (() => undefined) };
  };

  const inputTokens = inputBound(body);
  const { target, success } = await routeModelCall(state, body.model as string, attempt, {
    ...options,
    bound: { inputTokens, maxOutputTokens: maxOutput(body) },
  });
  if (native && success.native) return native.reply(target, success);

  if (success.replyText !== undefined) {
    log.response = success.reply;
    recordUsage(
      log,
      target,
      readUsage((success.reply as { usage?: unknown }).usage),
      (success.reply as { model?: unknown }).model,
    );
    // After usage is recorded: a reply the guardrails refuse was still paid for, and is charged.
    const redacted = (await guard?.checkOutput(chatReplySlots(success.reply))) ?? false;
    return {
      statusCode: success.status,
      headers: {
        'content-type': 'application/json',
        ...success.headers,
        ...(log.cost !== null ? { 'x-gateway-cost': String(log.cost) } : {}),
      },
      body: redacted ? JSON.stringify(success.reply) : success.replyText,
    };
  }

  const watch = guard?.checksOutput ? guard.watchStream() : undefined;

  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...success.headers,
    },
    body: success.translation
      ? translateStream(
          success.upstream,
          target,
          success.translation,
          success.context,
          log,
          success.sentAt,
          !clientWantsUsage,
          inputTokens,
          watch,
        )
      : relayStream(
          success.upstream,
          target,
          log,
          success.sentAt,
          !clientWantsUsage,
          inputTokens,
          { client: state.clientSignal, cut: success.cut ?? (() => undefined) },
          watch,
        ),
  };
}

/** The output limit a chat request sets (times its choices), undefined when it sets none. */
function maxOutput(body: Record<string, unknown>): number | undefined {
  const limit = body.max_completion_tokens ?? body.max_tokens;
  if (typeof limit !== 'number' || !(limit > 0)) return undefined;
  const n = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  return Math.ceil(limit) * n;
}

/**
 * The usage chunk with the request's cost in its `x-gateway` extension; when the client did not ask for
 * usage, only the cost, as an SSE comment that clients skip.
 */
function withCost(
  chunk: Record<string, unknown>,
  target: ResolvedTarget,
  log: UsageLogDraft,
  commentOnly: boolean,
): string {
  const model = typeof chunk.model === 'string' ? chunk.model : log.model;
  const cost = costOf(target.provider.name, model, readUsage(chunk.usage), log.operatorPrices);
  if (commentOnly) return cost === null ? '' : `: x-gateway-cost ${cost}\n\n`;
  return `data: ${JSON.stringify({ ...chunk, 'x-gateway': { cost } })}\n\n`;
}

/** A successful attempt, with what a translated provider needs to turn its reply into OpenAI's. */
interface ChatSuccess extends CallSuccess {
  translation?: ChatTranslation;
  context: ChatContext;
  /** Served by the caller's `NativeRoute`. */
  native?: boolean;
  /** Stops reading the upstream of a relayed stream, which the client's departure alone does not. */
  cut?: () => void;
}

/** A signal that follows the client's until `detach`, and that `abort` still fires afterwards. */
function detachable(client: AbortSignal) {
  const own = new AbortController();
  const follow = () => own.abort();
  if (client.aborted) own.abort();
  else client.addEventListener('abort', follow, { once: true });
  return {
    signal: own.signal,
    detach: () => client.removeEventListener('abort', follow),
    abort: () => own.abort(),
  };
}

/** How long a stream the client left is still read for the provider's usage (0: not at all). */
function drainMs(): number {
  const ms = Number(process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS ?? 2000);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

const LEFT = Symbol('client left');

/**
 * Targets a caller serves in its own wire format instead of the chat one (Anthropic's Messages API to
 * Anthropic), with the same route, retries, fallbacks and guardrail input checks. `serves` may throw
 * to refuse a target the request cannot go to.
 */
export interface NativeRoute {
  serves(target: ResolvedTarget): boolean;
  attempt(target: ResolvedTarget, model: string | undefined): Promise<CallSuccess>;
  reply(target: ResolvedTarget, success: CallSuccess): Promise<HttpResult>;
}
/** The upstream call: the body as is for the OpenAI wire format, or the provider's translation. */
export async function buildCall(
  target: ResolvedTarget,
  translation: ChatTranslation | undefined,
  upstreamBody: Json,
  context: ChatContext,
): Promise<ChatCall> {
  if (translation) {
    const call = await translation.buildCall(upstreamBody, context);
    return { ...call, headers: { ...target.provider.headers(target), ...call.headers } };
  }
  if (context.stream) {
    // Ask for usage so the log has tokens and cost; the usage chunk is dropped unless the client asked.
    upstreamBody.stream_options = {
      ...(upstreamBody.stream_options as object | undefined),
      include_usage: true,
    };
  }
  return {
    url:
      target.provider.endpoint?.('chat.completions', context) ??
      target.baseUrl + target.provider.paths['chat.completions'],
    headers: target.provider.headers(target),
    body: JSON.stringify(upstreamBody),
  };
}

/**
 * Forwards each complete SSE event as soon as it arrives. Reassembles the message for the log, takes
 * usage from the usage chunk, and ends a cut or failed stream with an SSE `error` event.
 */
async function* relayStream(
  upstream: UpstreamResponse,
  target: ResolvedTarget,
  log: UsageLogDraft,
  sentAt: number,
  dropUsageChunk: boolean,
  inputTokens: number,
  upstreamControl: { client: AbortSignal; cut: () => void },
  watch?: StreamWatch,
): AsyncGenerator<string> {
  const parser = new SseParser();
  const acc = new ChatStreamAccumulator();
  let sawDone = false;
  let failure: GatewayError | undefined;

  const relay = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const ev of events) {
      // Nothing the provider sends after its error reaches the client.
      if (failure) break;
      if (ev.data === undefined) {
        out += ev.raw;
        continue;
      }
      if (ev.data.trim() === '[DONE]') {
        sawDone = true;
        out += ev.raw;
        continue;
      }
      const chunk = tryJson(ev.data);
      const isObject = !!chunk && typeof chunk === 'object' && !Array.isArray(chunk);
      if (ev.event === 'error' || (isObject && (chunk as Record<string, unknown>).error)) {
        // The provider's error becomes the SSE `error` event every client and SDK recognises; it may
        // echo its credential, so the client and the log see it masked.
        const masker = credentialMasker(target.apiKey);
        failure = streamedProviderError(
          masker.maskValue(isObject ? chunk : { message: ev.data.slice(0, 1000) }),
        );
        out += sseErrorEvent(failure.toBody());
        continue;
      }
      if (isObject) {
        const c = chunk as Record<string, unknown>;
        acc.add(c);
        const usageOnly = Array.isArray(c.choices) && c.choices.length === 0 && !!c.usage;
        if (usageOnly) {
          out += withCost(c, target, log, dropUsageChunk);
          continue;
        }
      }
      out += ev.raw;
    }
    return out;
  };

  const chunks = upstream.body[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<Buffer>> | undefined;
  let onLeave: () => void = () => undefined;
  const left = new Promise<typeof LEFT>((resolve) => {
    onLeave = () => resolve(LEFT);
    if (upstreamControl.client.aborted) onLeave();
    else upstreamControl.client.addEventListener('abort', onLeave, { once: true });
  });
  try {
    for (;;) {
      pending = chunks.next();
      const next = await Promise.race([pending, left]);
      if (next === LEFT) break;
      pending = undefined;
      if (next.done) break;
      const out = relay(parser.push(next.value));
      // The last check runs before `[DONE]` goes out.
      failure = (yield* sendChecked(out, acc.checkedText(), sawDone, watch, log, sentAt)) ?? failure;
      if (failure) break;
    }
    if (upstreamControl.client.aborted) return;
    const rest = parser.flush();
    if (rest) {
      const out = relay([rest]);
      if (out) yield out.endsWith('\n\n') ? out : `${out}\n\n`;
    }
    if (!sawDone && !failure) {
      failure = streamTruncated();
      yield sseErrorEvent(failure.toBody());
    }
  } catch (error) {
    if (!(error instanceof ClientGoneError)) {
      failure = streamFailed(error);
      yield sseErrorEvent(failure.toBody());
    }
  } finally {
    upstreamControl.client.removeEventListener('abort', onLeave);
    // The client left before the provider's usage: read on (sending nothing) until it comes, for a while.
    const drain = drainMs();
    if (drain > 0 && upstreamControl.client.aborted && !sawDone && !failure && acc.usage === undefined) {
      await drainUsage(chunks, pending, drain, (bytes) => {
        relay(parser.push(bytes));
        return sawDone || !!failure || acc.usage !== undefined;
      });
      pending = undefined;
    }
    upstreamControl.cut();
    // A read left waiting ends with the cut; its outcome no longer matters.
    pending?.catch(() => undefined);
    finishStreamLog(
      log,
      target,
      acc,
      sentAt,
      failure,
      sawDone || acc.usage !== undefined ? undefined : inputTokens,
    );
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
 * After a stream, however it ended: the reassembled reply, usage, cost and any failure, for the log.
 * A stream left unfinished (`inputTokens` given) without the provider's usage is charged for what it
 * consumed: the prompt's token bound and the tokens of the text received, flagged `estimated`.
 */
function finishStreamLog(
  log: UsageLogDraft,
  target: ResolvedTarget,
  acc: ChatStreamAccumulator,
  sentAt: number,
  failure: GatewayError | undefined,
  inputTokens?: number,
): void {
  log.upstreamLatencyMs = performance.now() - sentAt;
  log.response = acc.result();
  let usage = readUsage(acc.usage);
  if (!usage && inputTokens !== undefined) {
    const completion = tokenBound(acc.generated());
    usage = {
      prompt_tokens: inputTokens,
      completion_tokens: completion,
      total_tokens: inputTokens + completion,
      estimated: true,
    };
  }
  recordUsage(log, target, usage, (log.response as { model?: unknown }).model);
  recordStreamFailure(log, failure);
}

/**
 * Sends one batch of a stream, unless the output guardrails refuse the text so far: then the SSE error
 * instead, and the refusal is returned. Checked before it is sent, so text that fails a `deny` check
 * never reaches the client.
 */
async function* sendChecked(
  out: string,
  text: string,
  final: boolean,
  watch: StreamWatch | undefined,
  log: UsageLogDraft,
  sentAt: number,
): AsyncGenerator<string, GatewayError | undefined> {
  const denied = await watch?.check(text, final);
  if (denied) {
    yield sseErrorEvent(denied.toBody());
    return denied;
  }
  if (out) {
    yield out;
    // The generator resumes only once the adapter has written the chunk to the client.
    log.firstChunkMs ??= performance.now() - sentAt;
  }
  return undefined;
}

/**
 * A translated provider's stream: each upstream event (SSE or AWS event stream) becomes zero or more
 * OpenAI chunks, written as soon as the event is complete. Ends with `[DONE]`, or an SSE `error` event
 * when the provider reports an error or the stream is cut.
 */
export async function* translateStream(
  upstream: UpstreamResponse,
  target: ResolvedTarget,
  translation: ChatTranslation,
  context: ChatContext,
  log: UsageLogDraft,
  sentAt: number,
  dropUsageChunk: boolean,
  inputTokens: number,
  watch?: StreamWatch,
): AsyncGenerator<string> {
  const decoder = translation.decoder();
  const translator = translation.stream(context);
  const acc = new ChatStreamAccumulator();
  let failure: GatewayError | undefined;

  const write = (chunks: Json[]): string => {
    let out = '';
    for (const c of chunks) {
      acc.add(c);
      const usageOnly = Array.isArray(c.choices) && c.choices.length === 0 && !!c.usage;
      out += usageOnly ? withCost(c, target, log, dropUsageChunk) : `data: ${JSON.stringify(c)}\n\n`;
    }
    return out;
  };
  const translate = (events: ReturnType<typeof decoder.push>): string => {
    let out = '';
    for (const ev of events) {
      out += write(translator.push(ev));
      if (translator.failure) break;
    }
    return out;
  };

  try {
    for await (const bytes of upstream.body) {
      const out = translate(decoder.push(bytes));
      failure = yield* sendChecked(out, acc.checkedText(), false, watch, log, sentAt);
      if (failure) return;
      if (translator.failure) break;
    }
    if (!translator.failure) {
      const rest = translate(decoder.flush());
      if (rest) yield rest;
    }
    if (translator.failure) {
      failure = translator.failure;
      yield sseErrorEvent(failure.toBody());
    } else if (!translator.complete) {
      failure = streamTruncated();
      yield sseErrorEvent(failure.toBody());
    } else {
      failure = yield* sendChecked(
        `${write(translator.end())}data: [DONE]\n\n`,
        acc.checkedText(),
        true,
        watch,
        log,
        sentAt,
      );
    }
  } catch (error) {
    if (!(error instanceof ClientGoneError)) {
      failure = streamFailed(error);
      yield sseErrorEvent(failure.toBody());
    }
  } finally {
    finishStreamLog(log, target, acc, sentAt, failure, translator.complete ? undefined : inputTokens);
  }
}
