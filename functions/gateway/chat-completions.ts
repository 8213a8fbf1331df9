import { badRequest } from '../core/errors';
import type { HttpEvent, HttpResult, ModelCallState } from '../core/http';
import { bodyText, jsonBody, logModelRequest } from '../core/request-body';
import type { ChatCall, ChatContext, ChatTranslation, Json } from '../providers/types';
import { exchange } from './call-upstream';
import { type ChatStreamWriter, chatPassthrough, translatedChat } from './chat-streams';
import { type RouteOptions, routeModelCall } from './model-call';
import { readUsage } from './pricing';
import { chatMessageSlots, chatReplySlots, RequestGuard } from './request-guard';
import { inputBound } from './reserve';
import { recordUsage } from './settle';
import { type Streamed, streamReply, streamSignal } from './stream-relay';
import type { ResolvedTarget } from './target';

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
  logModelRequest(log, body);
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
    // Once a stream's reply has started, it is not cut with the client, so that the provider's usage
    // can still be read when the client leaves (see stream-relay.ts).
    const upstream = stream ? streamSignal(state.clientSignal) : undefined;
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

  const writer = native?.streamWriter?.();
  const format = { target, log, dropUsageChunk: !clientWantsUsage, writer };
  return streamReply(
    success.translation
      ? translatedChat({ ...format, translation: success.translation, context: success.context })
      : chatPassthrough({ ...format, guarded: !!guard?.checksOutput }),
    { state, target, success, inputTokens, guard },
  );
}

/** The output limit a chat request sets (times its choices), undefined when it sets none. */
function maxOutput(body: Record<string, unknown>): number | undefined {
  const limit = body.max_completion_tokens ?? body.max_tokens;
  if (typeof limit !== 'number' || !(limit > 0)) return undefined;
  const n = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  return Math.ceil(limit) * n;
}

/** A successful attempt, with what a translated provider needs to turn its reply into OpenAI's. */
interface ChatSuccess extends Streamed {
  translation?: ChatTranslation;
  context: ChatContext;
  /** Served by the caller's `NativeRoute`. */
  native?: boolean;
}

/**
 * Targets a caller serves in its own wire format instead of the chat one (Anthropic's Messages API to
 * Anthropic), with the same route, retries, fallbacks and guardrail input checks. `serves` may throw
 * to refuse a target the request cannot go to.
 */
export interface NativeRoute {
  /** How a chat stream is written for the caller when a target is not served natively. */
  streamWriter?(): ChatStreamWriter;
  serves(target: ResolvedTarget): boolean;
  attempt(target: ResolvedTarget, model: string | undefined): Promise<Streamed>;
  reply(target: ResolvedTarget, success: Streamed): Promise<HttpResult>;
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
