import type { HttpBody, HttpResult, RequestState } from '../core/http';
import type { UsageLogDraft } from '../core/log-entry';
import { chatToResponse, ResponsesEventWriter, responsesToChat } from '../providers/shared/responses-chat';
import type { ChatContext, ChatTranslation, Json } from '../providers/types';
import { buildCall, translateStream } from './chat-completions';
import { reframeChatStream } from './chat-reframe';
import { type CallSuccess, exchange, recordUsage } from './model-call';
import { readUsage } from './pricing';
import { type RequestGuard, responsesOutputSlots } from './request-guard';
import type { ResolvedTarget } from './target';

// The Responses API on providers that have none (Anthropic, Bedrock, Gemini): the request goes out in
// the chat shape through the provider's chat translation, and the reply and stream come back as a
// Response and the Responses events.

export interface ChatServed extends CallSuccess {
  translation: ChatTranslation;
  context: ChatContext;
}

export const servedThroughChat = (success: CallSuccess): success is ChatServed => 'translation' in success;

/** One attempt on a provider that speaks chat only. */
export async function responsesChatAttempt(
  state: RequestState,
  body: Json,
  target: ResolvedTarget,
  model: string | undefined,
  stream: boolean,
): Promise<ChatServed> {
  const translation = target.provider.chat as ChatTranslation;
  const upstreamBody: Json = {
    ...responsesToChat(body, target.provider.name),
    model,
    ...target.overrideParams,
  };
  const upstreamModel = String(upstreamBody.model ?? model ?? '');
  (state.log as UsageLogDraft).model = upstreamModel;
  const context: ChatContext = { model: upstreamModel, stream, baseUrl: target.baseUrl, target };
  const call = await buildCall(target, translation, upstreamBody, context);
  const success = await exchange(state, target, {
    method: 'POST',
    url: call.url,
    contentType: 'application/json',
    accept: stream ? translation.streamContentType : 'application/json',
    body: call.body,
    providerHeaders: call.headers,
    keepOpen: (contentType) => stream && contentType.includes(translation.streamContentType),
    translateError: translation.error,
  });
  return { ...success, translation, context };
}

/** The reply of a chat-served attempt, as a Response or the Responses stream. */
export async function responsesChatReply(
  state: RequestState,
  body: Json,
  target: ResolvedTarget,
  success: ChatServed,
  guard: RequestGuard | undefined,
  /** Upper bound of the prompt's tokens: what an abandoned stream is charged for its input. */
  inputTokens: number,
): Promise<HttpResult> {
  const log = state.log as UsageLogDraft;
  if (success.replyText !== undefined) {
    const completion = success.translation.response(success.reply, success.context);
    const response = chatToResponse(completion, body);
    log.response = response;
    recordUsage(log, target, readUsage(completion.usage), completion.model);
    await guard?.checkOutput(responsesOutputSlots(response));
    return {
      statusCode: success.status,
      headers: { 'content-type': 'application/json', ...success.headers },
      body: JSON.stringify(response),
    };
  }
  const chat = translateStream(
    success.upstream,
    target,
    success.translation,
    success.context,
    log,
    success.sentAt,
    false,
    inputTokens,
    guard?.checksOutput ? guard.watchStream() : undefined,
  );
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...success.headers,
    },
    body: responsesEventsOf(chat, body),
  };
}

/** The chat pipeline's stream as the Responses events. */
export function responsesEventsOf(chat: HttpBody, request: Json): AsyncGenerator<string> {
  const writer = new ResponsesEventWriter(request);
  return reframeChatStream(chat, {
    chunk: (c) => writer.chunk(c),
    end: () => writer.end(),
    error: (e) =>
      writer.error(
        typeof e?.code === 'string' ? e.code : null,
        typeof e?.message === 'string' ? e.message : 'The stream failed.',
      ),
    truncated: () => writer.error('stream_truncated', 'The stream ended before it was complete.'),
  });
}
