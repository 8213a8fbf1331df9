import { badRequest } from '../core/errors';
import type { HttpEvent, HttpResult, ModelCallState } from '../core/http';
import type { UsageLogDraft } from '../core/log-entry';
import { bodyText, jsonBody, tryJson } from '../core/request-body';
import { SseParser } from '../core/sse';
import { AnthropicStream } from '../providers/anthropic/chat-completions';
import {
  AnthropicEventWriter,
  anthropicErrorEvent,
  estimateInputTokens,
  toAnthropicMessage,
  toChatRequest,
  validateMessagesRequest,
} from '../providers/anthropic/messages-ingress';
import { isObject, type Json } from '../providers/shared/openai-shapes';
import { type CallSuccess, exchange } from './call-upstream';
import { type NativeRoute, runChatCompletion } from './chat-completions';
import { ChatStreamAccumulator } from './chat-stream-accumulator';
import { type ChatStreamWriter, chatResult } from './chat-streams';
import { routeModelCall } from './model-call';
import { readUsage } from './pricing';
import { RequestGuard, type TextSlot } from './request-guard';
import { recordUsage } from './settle';
import { eventRelay, type Streamed, type StreamFormat, streamReply, streamSignal } from './stream-relay';
import type { ResolvedTarget } from './target';

// Anthropic's Messages API (`POST /v1/messages`), as Claude Code and the Anthropic SDKs call it. To
// Anthropic it goes natively: the body, every `anthropic-*` header and the SSE stream pass through.
// To every other provider it is translated into the chat shape, served by the chat pipeline (and its
// provider translators), and its reply and stream are translated back.

const NATIVE_PROVIDER = 'anthropic';

/**
 * With the gateway key in `x-gateway-api-key`, an `x-api-key` is the caller's Anthropic key (what the
 * Anthropic SDKs send): it is passed through as the `Authorization` credential is on the chat route.
 */
function adoptProviderKey(headers: Record<string, string>): void {
  const key = headers['x-api-key']?.trim();
  if (headers['x-gateway-api-key'] !== undefined && key && headers.authorization === undefined) {
    headers.authorization = `Bearer ${key}`;
  }
}

/** The caller's `anthropic-version`, `anthropic-beta` and other Anthropic headers, for the native call. */
function anthropicHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name.startsWith('anthropic-')) out[name] = value;
  return out;
}

/** The query string, passed on to Anthropic as sent (the SDKs' beta calls add `?beta=true`). */
const query = (event: HttpEvent) => (event.rawQueryString ? `?${event.rawQueryString}` : '');

/** The native Anthropic call of `path` (`/messages` or `/messages/count_tokens`). */
async function nativeCall(
  state: ModelCallState,
  target: ResolvedTarget,
  path: string,
  body: Json,
  stream: boolean,
): Promise<Streamed> {
  // Once a stream has started, the relay decides when to stop reading it (see stream-relay.ts).
  const upstream = stream ? streamSignal(state.clientSignal) : undefined;
  const success = await exchange(state, target, {
    method: 'POST',
    url: target.baseUrl + path,
    contentType: 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    body: JSON.stringify(body),
    providerHeaders: { ...target.provider.headers(target), ...anthropicHeaders(state.headers) },
    keepOpen: (contentType) => stream && contentType.includes('text/event-stream'),
    translateError: target.provider.chat?.error,
    signal: upstream?.signal,
  }).finally(() => upstream?.detach());
  return { ...success, cut: upstream?.abort };
}

/** POST /v1/messages */
export async function messages(event: HttpEvent, state: ModelCallState): Promise<HttpResult> {
  const log = state.log;
  const text = bodyText(event);
  log.request = text;
  const body = jsonBody(text);
  if (typeof body.model === 'string') log.model = body.model;
  validateMessagesRequest(body, true);
  adoptProviderKey(state.headers);
  const stream = body.stream === true;
  const model = body.model as string;
  const { chat, unsupported } = toChatRequest(body);
  let servedNatively = false;
  let guard: Promise<RequestGuard | undefined> | undefined;

  const native: NativeRoute = {
    streamWriter: () => anthropicWriter(model, estimateInputTokens(body)),
    serves(target) {
      if (target.provider.name === NATIVE_PROVIDER) return true;
      if (unsupported) {
        throw badRequest(
          `${unsupported.message} This route goes to provider "${target.provider.name}".`,
          unsupported.param,
          'unsupported_content',
        );
      }
      return false;
    },
    async attempt(target, upstreamModel) {
      // The chat pipeline checked the translated text (a deny has already refused); a redaction must
      // also rewrite the Anthropic body sent natively, once, whichever attempt comes first.
      guard ??= RequestGuard.forRequest(state, model).then(async (g) => {
        await g?.checkInput(anthropicSlots(body));
        return g;
      });
      await guard;
      const upstreamBody: Json = { ...body, model: upstreamModel, ...target.overrideParams };
      log.model = String(upstreamBody.model ?? model);
      log.request = body;
      return nativeCall(state, target, `/messages${query(event)}`, upstreamBody, stream);
    },
    async reply(target, success) {
      servedNatively = true;
      const checks = await guard;
      if (success.replyText !== undefined) return nativeReply(log, target, success, checks);
      return streamReply(anthropicFormat(log), {
        state,
        target,
        success,
        inputTokens: estimateInputTokens(body),
        guard: checks,
      });
    },
  };

  const result = await runChatCompletion(chat, state, {}, native);
  if (servedNatively) return result;
  // A stream is written in Anthropic's events already (`streamWriter`).
  if (typeof result.body !== 'string') return result;
  return { ...result, body: JSON.stringify(toAnthropicMessage(tryJson(result.body), model)) };
}

const slot = (holder: Json, key: string): TextSlot => ({
  get: () => holder[key] as string,
  set: (t) => {
    holder[key] = t;
  },
});

/** The text of an Anthropic request (system, text blocks, tool results), for the input guardrails. */
function anthropicSlots(body: Json): TextSlot[] {
  const slots: TextSlot[] = [];
  const add = (holder: Json, key: string) => {
    const v = holder[key];
    if (typeof v === 'string') slots.push(slot(holder, key));
    else if (Array.isArray(v)) {
      for (const b of v) {
        if (!isObject(b)) continue;
        if (b.type === 'text' && typeof b.text === 'string') slots.push(slot(b, 'text'));
        else if (b.type === 'tool_result') add(b, 'content');
      }
    }
  };
  add(body, 'system');
  for (const m of Array.isArray(body.messages) ? body.messages : []) if (isObject(m)) add(m, 'content');
  return slots;
}

/** A whole native reply: logged with its usage and cost, checked by the output guardrails, sent as is. */
async function nativeReply(
  log: UsageLogDraft,
  target: ResolvedTarget,
  success: CallSuccess,
  guard: RequestGuard | undefined,
): Promise<HttpResult> {
  const reply = isObject(success.reply) ? success.reply : {};
  log.response = reply;
  const model = typeof reply.model === 'string' ? reply.model : log.model;
  const chat = target.provider.chat?.response(reply, {
    model: model ?? '',
    stream: false,
    baseUrl: target.baseUrl,
    target,
  });
  recordUsage(log, target, readUsage(chat?.usage), model);
  const slots: TextSlot[] = (Array.isArray(reply.content) ? reply.content : [])
    .filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => slot(b, 'text'));
  const redacted = (await guard?.checkOutput(slots)) ?? false;
  return {
    statusCode: success.status,
    headers: { 'content-type': 'application/json', ...success.headers },
    body: redacted ? JSON.stringify(reply) : (success.replyText as string),
  };
}

/**
 * Anthropic's stream format of the relay: each event is passed on as it came; Anthropic's chat
 * translator reads it on the side for the log (message, usage, cost) and the guardrails.
 */
function anthropicFormat(log: UsageLogDraft): StreamFormat {
  const parser = new SseParser();
  const reader = new AnthropicStream(log.model ?? '');
  const acc = new ChatStreamAccumulator();
  const relay = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const ev of events) {
      out += ev.raw;
      if (ev.data === undefined) continue;
      for (const c of reader.push({ event: ev.event, data: ev.data })) acc.add(c);
    }
    return out;
  };
  return {
    ...eventRelay(parser, relay),
    get complete() {
      return reader.complete;
    },
    // Anthropic's own `error` event has been passed on as it came.
    get failure() {
      return reader.failure;
    },
    settled: () => reader.complete || !!reader.failure,
    checkedText: () => acc.checkedText(),
    errorEvent: (error) => anthropicErrorEvent(error.status, error.message),
    result() {
      for (const c of reader.end()) acc.add(c);
      return chatResult(acc);
    },
  };
}

/** Statuses of the OpenAI error types the chat pipeline's stream `error` events carry, for Anthropic's types. */
const STREAM_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  guardrail_error: 446,
  overloaded_error: 529,
};

/** The chat stream as Anthropic's events. */
export function anthropicWriter(model: string, inputTokens = 0): ChatStreamWriter {
  const writer = new AnthropicEventWriter(model, inputTokens);
  return {
    chunk: (c) => writer.chunk(c),
    end: () => writer.finish(),
    error: (e) => anthropicErrorEvent(STREAM_ERROR_STATUS[e.type] || 500, e.message),
  };
}

/** POST /v1/messages/count_tokens: Anthropic counts natively; elsewhere a documented estimate. */
export async function countTokens(event: HttpEvent, state: ModelCallState): Promise<HttpResult> {
  const log = state.log;
  const body = jsonBody(bodyText(event));
  log.request = body;
  if (typeof body.model === 'string') log.model = body.model;
  validateMessagesRequest(body, false);
  adoptProviderKey(state.headers);

  type Counted = CallSuccess | { status: 200; estimate: number };
  const { success } = await routeModelCall<Counted>(state, body.model as string, async (target, model) => {
    log.model = model ?? log.model;
    if (target.provider.name !== NATIVE_PROVIDER) return { status: 200, estimate: estimateInputTokens(body) };
    return nativeCall(state, target, `/messages/count_tokens${query(event)}`, { ...body, model }, false);
  });
  if ('estimate' in success) {
    const reply = { input_tokens: success.estimate };
    log.response = reply;
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'x-gateway-token-count': 'estimate' },
      body: JSON.stringify(reply),
    };
  }
  log.response = success.reply;
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json', ...success.headers },
    body: success.replyText as string,
  };
}
