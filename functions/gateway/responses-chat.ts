import { notFound } from '../core/errors';
import type { HttpResult, ModelCallState } from '../core/http';
import { logger } from '../core/logger';
import {
  chatToResponse,
  GATEWAY_RESPONSE_PREFIX,
  inputItems,
  ResponsesEventWriter,
  responsesToChat,
} from '../providers/shared/responses-chat';
import type { ChatContext, ChatTranslation, Json } from '../providers/types';
import { responseStore } from '../store/response-store';
import { type CallSuccess, exchange } from './call-upstream';
import { buildCall } from './chat-completions';
import { type ChatStreamWriter, translatedChat } from './chat-streams';
import type { OperationHandler } from './dispatch';
import { readUsage } from './pricing';
import { type RequestGuard, responsesOutputSlots } from './request-guard';
import { recordUsage } from './settle';
import { type RelayChunk, type Streamed, streamReply, streamSignal } from './stream-relay';
import type { ResolvedTarget } from './target';

// The Responses API on providers that have none (Anthropic, Bedrock, Gemini): the request goes out in
// the chat shape through the provider's chat translation, and the reply and stream come back as a
// Response and the Responses events. The gateway stores the Responses it makes (unless `store` is
// false), serves them on GET and DELETE, and replays their conversation for `previous_response_id`.

const scopeOf = (state: ModelCallState) => {
  const p = state.principal;
  return { organisationId: p.organisationId, workspace: p.workspace };
};

/** Requests whose `previous_response_id` conversation the gateway has put in front of their input. */
const replayed = new WeakSet<Json>();

export const isReplayed = (body: Json): boolean => replayed.has(body);

/**
 * The request with the conversation of the stored response its `previous_response_id` names in front
 * of its input (as on OpenAI, the earlier `instructions` are not carried over); as is otherwise.
 */
export async function replayPrevious(state: ModelCallState, body: Json): Promise<Json> {
  const id = body.previous_response_id;
  // Only ids the gateway made can be in its store; the provider keeps its own.
  if (typeof id !== 'string' || !id.startsWith(GATEWAY_RESPONSE_PREFIX)) return body;
  const stored = await responseStore.get(scopeOf(state), id);
  if (!stored || stored === 'deleted') return body;
  const request = { ...body, input: [...stored.items, ...inputItems(body.input)] };
  replayed.add(request);
  return request;
}

/** Stores a Response the gateway made; a failed write is logged, and the reply goes out all the same. */
async function store(state: ModelCallState, request: Json, response: Json | undefined): Promise<void> {
  if (!response || request.store === false) return;
  const items = [...inputItems(request.input), ...(Array.isArray(response.output) ? response.output : [])];
  try {
    await responseStore.put(scopeOf(state), { response, items });
  } catch (error) {
    logger.warn('a response could not be stored', {
      requestId: state.requestId,
      error: (error as Error).message,
    });
  }
}

const responseNotFound = (id: string) => notFound(`No response with id '${id.slice(0, 80)}' found.`);

/**
 * GET and DELETE of `/v1/responses/{response_id}`: an id the gateway made is served from its store (a 404
 * when it no longer has it); any other id is the provider's (`passthrough`), with no store read.
 */
export function storedResponseOperations(
  passthrough: Record<'responses.get' | 'responses.delete', OperationHandler<ModelCallState>>,
): Record<'responses.get' | 'responses.delete', OperationHandler<ModelCallState>> {
  const serve =
    (name: 'responses.get' | 'responses.delete'): OperationHandler<ModelCallState> =>
    async (event, state) => {
      const id = state.params.response_id ?? '';
      const forward = passthrough[name];
      if (!id.startsWith(GATEWAY_RESPONSE_PREFIX) && forward) return forward(event, state);
      const stored = await responseStore.get(scopeOf(state), id);
      if (stored === undefined || stored === 'deleted') throw responseNotFound(id);
      const log = state.log;
      if (typeof stored.response.model === 'string') log.model = stored.response.model;
      let body: Json = stored.response;
      if (name === 'responses.delete') {
        await responseStore.delete(scopeOf(state), id);
        body = { id, object: 'response', deleted: true };
      }
      log.response = body;
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
    };
  return { 'responses.get': serve('responses.get'), 'responses.delete': serve('responses.delete') };
}

export interface ChatServed extends Streamed {
  translation: ChatTranslation;
  context: ChatContext;
}

export const servedThroughChat = (success: CallSuccess): success is ChatServed => 'translation' in success;

/** One attempt on a provider that speaks chat only. */
export async function responsesChatAttempt(
  state: ModelCallState,
  body: Json,
  target: ResolvedTarget,
  model: string | undefined,
  stream: boolean,
): Promise<ChatServed> {
  const translation = target.provider.chat as ChatTranslation;
  const upstreamBody: Json = {
    ...responsesToChat(body, target.provider.name, replayed.has(body)),
    model,
    ...target.overrideParams,
  };
  const upstreamModel = String(upstreamBody.model ?? model ?? '');
  state.log.model = upstreamModel;
  const context: ChatContext = { model: upstreamModel, stream, baseUrl: target.baseUrl, target };
  const call = await buildCall(target, translation, upstreamBody, context);
  // Once a stream has started, the relay decides when to stop reading it (see stream-relay.ts).
  const upstream = stream ? streamSignal(state.clientSignal) : undefined;
  const success = await exchange(state, target, {
    method: 'POST',
    url: call.url,
    contentType: 'application/json',
    accept: stream ? translation.streamContentType : 'application/json',
    body: call.body,
    providerHeaders: call.headers,
    keepOpen: (contentType) => stream && contentType.includes(translation.streamContentType),
    translateError: translation.error,
    signal: upstream?.signal,
  }).finally(() => upstream?.detach());
  return { ...success, translation, context, cut: upstream?.abort };
}

/** The reply of a chat-served attempt, as a Response or the Responses stream. */
export async function responsesChatReply(
  state: ModelCallState,
  body: Json,
  target: ResolvedTarget,
  success: ChatServed,
  guard: RequestGuard | undefined,
  /** Upper bound of the prompt's tokens: what an abandoned stream is charged for its input. */
  inputTokens: number,
): Promise<HttpResult> {
  const log = state.log;
  if (success.replyText !== undefined) {
    const completion = success.translation.response(success.reply, success.context);
    const response = chatToResponse(completion, body);
    log.response = response;
    recordUsage(log, target, readUsage(completion.usage), completion.model);
    await guard?.checkOutput(responsesOutputSlots(response));
    // Stored before the reply goes out: a GET right after it finds the response.
    await store(state, body, response);
    return {
      statusCode: success.status,
      headers: { 'content-type': 'application/json', ...success.headers },
      body: JSON.stringify(response),
    };
  }
  const writer = new ResponsesEventWriter(body);
  const reply = streamReply(
    translatedChat({
      target,
      log,
      dropUsageChunk: false,
      translation: success.translation,
      context: success.context,
      writer: responsesWriter(writer),
    }),
    { state, target, success, inputTokens, guard },
  );
  return { ...reply, body: storing(state, body, writer, reply.body) };
}

/** The stream, with the Response stored (when whole) before the batch holding its last event goes out. */
async function* storing(
  state: ModelCallState,
  request: Json,
  writer: ResponsesEventWriter,
  events: AsyncGenerator<RelayChunk>,
): AsyncGenerator<RelayChunk> {
  let stored = false;
  for await (const piece of events) {
    if (writer.final && !stored) {
      stored = true;
      await store(state, request, writer.final);
    }
    yield piece;
  }
}

/** The chat stream as the Responses events, written by `writer`. */
export function responsesWriter(writer: ResponsesEventWriter): ChatStreamWriter {
  return {
    chunk: (c) => writer.chunk(c),
    end: () => writer.end(),
    error: (e) => writer.error(e.code, e.message),
  };
}
