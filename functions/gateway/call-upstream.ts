import {
  clientGone,
  type GatewayError,
  hasCode,
  invalidUpstreamReply,
  providerError,
  upstreamTimeout,
} from '../core/errors';
import type { ModelCallState } from '../core/http';
import { tryJson } from '../core/request-body';
import { credentialMasker } from '../core/secret-mask';
import type { StopSignal } from '../core/stop-signal';
import type { AttemptSuccess } from './router';
import type { ResolvedTarget } from './target';
import { ClientGoneError, readAll, sendUpstream, type UpstreamResponse } from './upstream';

// Pipeline stage "call upstream": one exchange with one target's provider. The router (router.ts) runs
// it per attempt, with retries and fallbacks; a successful streamed reply is returned still flowing for
// the operation's relay.

export const MAX_REPLY_BYTES = 64 * 1024 * 1024;
// Upstream reply headers worth passing on to the client.
const PASSED_HEADERS = ['x-request-id', 'openai-processing-ms', 'openai-version', 'retry-after'];

/** A successful attempt: the upstream reply has started (kept open) or arrived whole (read). */
export interface CallSuccess extends AttemptSuccess {
  status: number;
  upstream: UpstreamResponse;
  headers: Record<string, string>;
  sentAt: number;
  contentType: string;
  /** The whole reply, when it was read rather than kept open. */
  replyText?: string;
  reply?: unknown;
}

export interface Exchange {
  method: string;
  /** Path relative to the target's base URL, with its query string. */
  path?: string;
  /** The whole URL, when the provider builds it (deployments, regions); wins over `path`. */
  url?: string;
  /** The provider's auth and account headers, when the provider builds them (signed requests). */
  providerHeaders?: Record<string, string>;
  /** The provider's error format, when it is not OpenAI's. */
  translateError?: (
    status: number,
    body: unknown,
    text: string,
    headers: Record<string, unknown>,
  ) => GatewayError;
  /** Content type of the body sent; none for a request without body. */
  contentType?: string;
  accept?: string;
  body?: string | Buffer;
  /** Extra headers passed on from the client (`openai-beta`). */
  headers?: Record<string, string>;
  /** Which successful replies are kept open for the caller to stream, by content type. */
  keepOpen: (contentType: string) => boolean;
  /** What stops the call: the client's signal unless the caller keeps reading after the client leaves. */
  signal?: StopSignal;
}

/**
 * One upstream call. A successful reply that `keepOpen` accepts is returned still flowing; any other
 * is read whole, and must be JSON. A provider error keeps its status and message.
 */
export async function exchange(
  state: ModelCallState,
  target: ResolvedTarget,
  req: Exchange,
): Promise<CallSuccess> {
  const log = state.log;
  const sentAt = performance.now();
  const sentHeaders: Record<string, string> = {
    ...(req.contentType ? { 'content-type': req.contentType } : {}),
    accept: req.accept ?? 'application/json',
    'accept-encoding': 'identity',
    ...req.headers,
    ...(req.providerHeaders ?? target.provider.headers(target)),
  };
  const upstream = await sendUpstream({
    url: new URL(req.url ?? target.baseUrl + (req.path ?? '')),
    method: req.method,
    headers: sentHeaders,
    body: req.body,
    signal: req.signal ?? state.clientSignal,
    timeoutMs: target.timeoutMs,
  }).catch((error: unknown) => {
    log.upstreamLatencyMs = performance.now() - sentAt;
    state.upstreamWaitMs += log.upstreamLatencyMs;
    throw error instanceof ClientGoneError
      ? clientGone()
      : adviseStreaming(error, state, req, target.timeoutMs);
  });

  const contentType = String(upstream.headers['content-type'] ?? '');
  if (upstream.status < 400 && req.keepOpen(contentType)) {
    state.upstreamWaitMs += performance.now() - sentAt;
    return {
      status: upstream.status,
      upstream,
      headers: replyHeaders(target, upstream),
      sentAt,
      contentType,
    };
  }
  const text = await readAll(upstream.body, MAX_REPLY_BYTES).catch((error: unknown) => {
    state.upstreamWaitMs += performance.now() - sentAt;
    throw error instanceof ClientGoneError
      ? clientGone()
      : adviseStreaming(error, state, req, target.timeoutMs);
  });
  log.upstreamLatencyMs = performance.now() - sentAt;
  state.upstreamWaitMs += log.upstreamLatencyMs;
  if (upstream.status < 400) {
    const reply = tryJson(text);
    if (reply !== undefined) {
      const headers = replyHeaders(target, upstream);
      return { status: upstream.status, upstream, headers, sentAt, contentType, replyText: text, reply };
    }
  }
  // Providers echo the key they were given in errors: nothing below may hold any credential of this call.
  const masker = credentialMasker(target.apiKey, sentHeaders);
  const headers = masker.maskValue(replyHeaders(target, upstream));
  const replyText = masker.mask(text);
  const reply = tryJson(replyText);
  if (upstream.status >= 400) {
    log.response = reply ?? replyText;
    const err = req.translateError
      ? req.translateError(upstream.status, reply, replyText, upstream.headers)
      : providerError(upstream.status, reply ?? { error: replyText.slice(0, 500) || undefined });
    throw err.asProviders(masker.mask(err.message), headers);
  }
  log.response = replyText;
  throw invalidUpstreamReply(headers);
}

export function replyHeaders(target: ResolvedTarget, upstream: UpstreamResponse): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-provider': target.provider.name };
  const requestId = target.provider.requestIdHeader && upstream.headers[target.provider.requestIdHeader];
  if (typeof requestId === 'string') headers['x-gateway-upstream-request-id'] = requestId;
  for (const name of PASSED_HEADERS) {
    const v = upstream.headers[name];
    if (typeof v === 'string') headers[name === 'x-request-id' ? 'x-gateway-upstream-request-id' : name] = v;
  }
  for (const [name, v] of Object.entries(upstream.headers)) {
    if (name.startsWith('x-ratelimit-') && typeof v === 'string') headers[name] = v;
  }
  return headers;
}

// Operations whose callers can ask for a stream instead of waiting for a whole reply.
const STREAMABLE = new Set([
  'chat.completions',
  'messages.create',
  'responses.create',
  'prompts.completions',
]);

/** A non-streamed call that could have streamed is told, on a timeout, how long it waited and to stream. */
function adviseStreaming(error: unknown, state: ModelCallState, req: Exchange, timeoutMs: number): unknown {
  const timedOut = hasCode(error, 'upstream_timeout');
  // A stream asks for its provider's stream type (SSE, Bedrock's event stream); a whole reply for JSON.
  const streamed = req.accept !== undefined && req.accept !== 'application/json';
  return timedOut && !streamed && STREAMABLE.has(state.operation?.name ?? '')
    ? upstreamTimeout(timeoutMs, false)
    : error;
}
