import type { Principal } from '../control/principal';
import { BudgetLedger } from './budget';
import { ChatStreamAccumulator } from './chat-stream-accumulator';
import { badRequest, GatewayError, providerError } from './errors';
import type { HttpEvent, HttpResult, RequestState } from './http';
import { buildPlan, type PlanTarget } from './plan';
import { costOf, readUsage } from './pricing';
import { bodyText, jsonBody } from './request-body';
import { Router } from './router';
import { SseParser, sseErrorEvent } from './sse';
import { type ResolvedTarget, readConfig, resolveTarget, routeOverrides, splitModel } from './target';
import { ClientGoneError, readAll, sendUpstream, type UpstreamResponse } from './upstream';
import type { UsageLogDraft } from './usage-log';

const MAX_REPLY_BYTES = 64 * 1024 * 1024;
// Upstream reply headers worth passing on to the client.
const PASSED_HEADERS = ['x-request-id', 'openai-processing-ms', 'openai-version', 'retry-after'];

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

function replyHeaders(target: ResolvedTarget, upstream: UpstreamResponse): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-provider': target.provider.name };
  for (const name of PASSED_HEADERS) {
    const v = upstream.headers[name];
    if (typeof v === 'string') headers[name === 'x-request-id' ? 'x-gateway-upstream-request-id' : name] = v;
  }
  for (const [name, v] of Object.entries(upstream.headers)) {
    if (name.startsWith('x-ratelimit-') && typeof v === 'string') headers[name] = v;
  }
  return headers;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A successful attempt: the upstream reply has started (stream) or arrived whole (JSON). */
interface ChatSuccess {
  status: number;
  upstream: UpstreamResponse;
  headers: Record<string, string>;
  sentAt: number;
  /** The whole reply, for a non-streamed answer. */
  replyText?: string;
  reply?: unknown;
}

const ledger = new BudgetLedger();

/** POST /v1/chat/completions: one OpenAI-shaped request, routed by the gateway config, streamed or not. */
export async function chatCompletions(event: HttpEvent, state: RequestState): Promise<HttpResult> {
  const log = state.log as UsageLogDraft;
  const principal = state.principal as Principal;
  const text = bodyText(event);
  log.request = text;
  const body = jsonBody(text);
  log.request = body;
  if (typeof body.model === 'string') log.model = body.model;
  if (typeof body.user === 'string') log.user = body.user;
  log.stream = body.stream === true;
  validate(body);

  // `@slug/model` names a virtual key; the provider only ever sees the model.
  const { model, slug } = splitModel(body.model as string);
  const plan = buildPlan(await readConfig(state.headers, principal), routeOverrides(state.headers, slug));

  const stream = body.stream === true;
  const clientWantsUsage =
    !!body.stream_options &&
    typeof body.stream_options === 'object' &&
    (body.stream_options as { include_usage?: unknown }).include_usage === true;

  const prepare = async (planned: PlanTarget) => {
    // A key refused for its budget or rate limit is still named by the entry that logs the refusal.
    log.virtualKey = planned.virtualKey?.value ?? null;
    const target = await resolveTarget(planned, state.headers, principal);
    // The last target tried names the entry; the one that serves overwrites it below.
    log.provider = target.provider.name;
    log.virtualKey = target.virtualKeySlug;
    return target;
  };

  const attempt = async (target: ResolvedTarget): Promise<ChatSuccess> => {
    const upstreamBody: Record<string, unknown> = { ...body, model, ...target.overrideParams };
    if (stream) {
      // Ask for usage so the log has tokens and cost; the usage chunk is dropped unless the client asked.
      upstreamBody.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    }
    if (typeof upstreamBody.model === 'string') log.model = upstreamBody.model;
    const sentAt = performance.now();
    const upstream = await sendUpstream({
      url: new URL(target.baseUrl + target.provider.paths['chat.completions']),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        'accept-encoding': 'identity',
        ...target.provider.headers(target),
      },
      body: JSON.stringify(upstreamBody),
      signal: state.clientSignal,
      timeoutMs: target.timeoutMs,
    }).catch((error: unknown) => {
      log.upstreamLatencyMs = performance.now() - sentAt;
      throw error instanceof ClientGoneError ? clientGone() : error;
    });

    const headers = replyHeaders(target, upstream);
    const contentType = String(upstream.headers['content-type'] ?? '');
    if (upstream.status < 400 && stream && contentType.includes('text/event-stream')) {
      return { status: upstream.status, upstream, headers, sentAt };
    }
    const replyText = await readAll(upstream.body, MAX_REPLY_BYTES).catch((error: unknown) => {
      throw error instanceof ClientGoneError ? clientGone() : error;
    });
    log.upstreamLatencyMs = performance.now() - sentAt;
    const reply = tryJson(replyText);
    if (upstream.status >= 400) {
      log.response = reply ?? replyText;
      const err = providerError(upstream.status, reply ?? { error: replyText.slice(0, 500) || undefined });
      throw new GatewayError(err.status, err.type, err.message, err.code, err.param, 'provider', headers);
    }
    if (reply === undefined) {
      log.response = replyText;
      throw new GatewayError(
        502,
        'api_error',
        'The provider answered with a body that is not JSON.',
        'invalid_upstream_reply',
        null,
        'provider',
        headers,
      );
    }
    return { status: upstream.status, upstream, headers, sentAt, replyText, reply };
  };

  const router = new Router(prepare, attempt, state.clientSignal);
  let served: Awaited<ReturnType<typeof router.run>>;
  try {
    served = await router.run(plan);
  } finally {
    log.attempts = router.attempts;
    state.replyHeaders['x-gateway-target-index'] = router.lastIndex;
    state.replyHeaders['x-gateway-retry-count'] = String(router.lastRetries);
  }

  const target = served.prepared;
  const success = served.success;
  log.provider = target.provider.name;
  log.virtualKey = target.virtualKeySlug;
  const vk = target.virtualKey;
  if (vk) {
    // Charged in the usage log's after-send work: after the last byte, before the invocation ends.
    log.settlements.push((entry) => ledger.charge(vk.record, vk.state, vk.period, entry.cost));
  }

  if (success.replyText !== undefined) {
    log.response = success.reply;
    recordUsage(
      log,
      target,
      (success.reply as { usage?: unknown }).usage,
      (success.reply as { model?: unknown }).model,
    );
    return {
      statusCode: success.status,
      headers: { 'content-type': 'application/json', ...success.headers },
      body: success.replyText,
    };
  }

  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...success.headers,
    },
    body: relayStream(success.upstream, target, log, success.sentAt, !clientWantsUsage),
  };
}

function clientGone(): GatewayError {
  return new GatewayError(499, 'client_closed', 'The client disconnected.', 'client_closed');
}

function recordUsage(
  log: UsageLogDraft,
  target: ResolvedTarget,
  usageValue: unknown,
  replyModel: unknown,
): void {
  log.usage = readUsage(usageValue);
  const model = typeof replyModel === 'string' && replyModel ? replyModel : log.model;
  log.cost = costOf(target.provider.name, model, log.usage);
  if (log.cost === null && model !== log.model) log.cost = costOf(target.provider.name, log.model, log.usage);
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
): AsyncGenerator<string> {
  const parser = new SseParser();
  const acc = new ChatStreamAccumulator();
  let sawDone = false;
  let failure: GatewayError | undefined;

  const relay = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const ev of events) {
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
      if (chunk && typeof chunk === 'object' && !Array.isArray(chunk)) {
        const c = chunk as Record<string, unknown>;
        if (c.error || ev.event === 'error') {
          failure = providerError(502, c);
        } else {
          acc.add(c);
          const usageOnly = Array.isArray(c.choices) && c.choices.length === 0 && !!c.usage;
          if (dropUsageChunk && usageOnly) continue;
        }
      }
      out += ev.raw;
    }
    return out;
  };

  try {
    for await (const bytes of upstream.body) {
      const out = relay(parser.push(bytes));
      if (out) {
        yield out;
        // The generator resumes only once the adapter has written the chunk to the client.
        log.firstChunkMs ??= performance.now() - sentAt;
      }
      if (failure) break;
    }
    const rest = parser.flush();
    if (rest) {
      const out = relay([rest]);
      if (out) yield out.endsWith('\n\n') ? out : `${out}\n\n`;
    }
    if (!sawDone && !failure) {
      failure = new GatewayError(
        502,
        'api_error',
        'The provider ended the stream before it was complete.',
        'stream_truncated',
        null,
        'provider',
      );
      yield sseErrorEvent(failure.toBody());
    }
  } catch (error) {
    if (!(error instanceof ClientGoneError)) {
      failure =
        error instanceof GatewayError
          ? error
          : new GatewayError(
              502,
              'api_error',
              'The provider stream failed.',
              'stream_failed',
              null,
              'provider',
            );
      yield sseErrorEvent(failure.toBody());
    }
  } finally {
    log.upstreamLatencyMs = performance.now() - sentAt;
    log.response = acc.result();
    recordUsage(log, target, acc.usage, (log.response as { model?: unknown }).model);
    if (failure) {
      log.effectiveStatus = failure.status;
      log.error = {
        message: failure.message,
        type: failure.type,
        code: failure.code,
        origin: failure.origin,
      };
    }
  }
}
