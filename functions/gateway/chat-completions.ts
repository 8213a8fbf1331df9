import { ChatStreamAccumulator } from './chat-stream-accumulator';
import { badRequest, GatewayError, providerError } from './errors';
import type { HttpEvent, HttpResult, RequestState } from './http';
import {
  type CallSuccess,
  exchange,
  type RouteOptions,
  recordUsage,
  routeModelCall,
  tryJson,
} from './model-call';
import { readUsage } from './pricing';
import { bodyText, jsonBody } from './request-body';
import { SseParser, sseErrorEvent } from './sse';
import type { ResolvedTarget } from './target';
import { ClientGoneError, type UpstreamResponse } from './upstream';
import type { UsageLogDraft } from './usage-log';

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
export async function chatCompletions(event: HttpEvent, state: RequestState): Promise<HttpResult> {
  const log = state.log as UsageLogDraft;
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
  state: RequestState,
  options: RouteOptions = {},
): Promise<HttpResult> {
  const log = state.log as UsageLogDraft;
  log.request = body;
  if (typeof body.model === 'string') log.model = body.model;
  if (typeof body.user === 'string') log.user = body.user;
  log.stream = body.stream === true;
  validate(body);

  const stream = body.stream === true;
  const clientWantsUsage =
    !!body.stream_options &&
    typeof body.stream_options === 'object' &&
    (body.stream_options as { include_usage?: unknown }).include_usage === true;

  const attempt = (target: ResolvedTarget, model: string | undefined): Promise<CallSuccess> => {
    const upstreamBody: Record<string, unknown> = { ...body, model, ...target.overrideParams };
    if (stream) {
      // Ask for usage so the log has tokens and cost; the usage chunk is dropped unless the client asked.
      upstreamBody.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    }
    if (typeof upstreamBody.model === 'string') log.model = upstreamBody.model;
    return exchange(state, target, {
      method: 'POST',
      path: target.provider.paths['chat.completions'],
      contentType: 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      body: JSON.stringify(upstreamBody),
      keepOpen: (contentType) => stream && contentType.includes('text/event-stream'),
    });
  };

  const { target, success } = await routeModelCall(state, body.model as string, attempt, options);

  if (success.replyText !== undefined) {
    log.response = success.reply;
    recordUsage(
      log,
      target,
      readUsage((success.reply as { usage?: unknown }).usage),
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
      if (out) yield out;
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
    recordUsage(log, target, readUsage(acc.usage), (log.response as { model?: unknown }).model);
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
