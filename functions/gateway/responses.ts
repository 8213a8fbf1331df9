import { badRequest, type GatewayError, providerError, streamedProviderError } from '../core/errors';
import type { HttpEvent, HttpResult, ModelCallState } from '../core/http';
import type { Usage, UsageLogDraft } from '../core/log-entry';
import { bodyText, jsonBody, logModelRequest, tryJson } from '../core/request-body';
import { credentialMasker } from '../core/secret-mask';
import { SseParser } from '../core/sse';
import { exchange } from './call-upstream';
import type { OperationTable } from './dispatch';
import { routeModelCall } from './model-call';
import { none, passthroughOperations } from './passthrough';
import { costOf, readUsage } from './pricing';
import { RequestGuard, responsesInputSlots, responsesOutputSlots } from './request-guard';
import { inputBound } from './reserve';
import {
  isReplayed,
  replayPrevious,
  responsesChatAttempt,
  responsesChatReply,
  servedThroughChat,
  storedResponseOperations,
} from './responses-chat';
import { recordUsage } from './settle';
import { eventRelay, type Streamed, type StreamFormat, streamReply, streamSignal } from './stream-relay';
import type { ResolvedTarget } from './target';

// POST /v1/responses: the OpenAI Responses API, routed like chat. Non-streamed replies are relayed whole;
// streamed ones pass every event through in order as it arrives, and the log keeps the final response
// (output text, tool calls, citations) and the usage of `response.completed`.

const EFFORTS = ['high', 'medium', 'low', 'minimal'];
const CONTEXT_SIZES = ['high', 'medium', 'low'];
const TOOL_CHOICES = ['auto', 'none', 'required'];
// The events that end a Responses stream; anything else before the end means the stream was cut.
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const invalid = (message: string, param: string) => badRequest(message, param, 'invalid_value');

function validateInput(input: unknown): void {
  if (typeof input === 'string') return;
  if (!Array.isArray(input)) {
    throw badRequest(
      'input is required: a string or an array of input items.',
      'input',
      'missing_required_parameter',
    );
  }
  input.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(`${at} must be an object.`, at);
    // Items other than messages (function call outputs, item references) are the provider's to check.
    if (item.role === undefined) return;
    if (typeof item.role !== 'string') throw invalid(`${at}.role must be a string.`, `${at}.role`);
    if (typeof item.content === 'string') return;
    if (!Array.isArray(item.content)) {
      throw invalid(`${at}.content must be a string or an array of content parts.`, `${at}.content`);
    }
    item.content.forEach((part, j) => {
      const p = `${at}.content[${j}]`;
      if (!isObject(part) || typeof part.type !== 'string') throw invalid(`${p} must have a type.`, p);
      if (part.type === 'input_text' && typeof part.text !== 'string') {
        throw invalid(`${p}.text must be a string.`, `${p}.text`);
      }
      if (
        part.type === 'input_image' &&
        typeof part.image_url !== 'string' &&
        typeof part.file_id !== 'string'
      ) {
        throw invalid(`${p} needs an image_url (a URL) or a file_id.`, `${p}.image_url`);
      }
    });
  });
}

function validateTool(tool: unknown, at: string): void {
  if (!isObject(tool) || typeof tool.type !== 'string')
    throw invalid(`${at} must be an object with a type.`, at);
  switch (tool.type) {
    case 'function':
      if (typeof tool.name !== 'string' || tool.name === '') {
        throw invalid(
          `${at}.name is required: function tools have flat fields (name, parameters).`,
          `${at}.name`,
        );
      }
      if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters)) {
        throw invalid(`${at}.parameters must be a JSON Schema object.`, `${at}.parameters`);
      }
      return;
    case 'web_search_preview':
    case 'web_search':
      if (
        tool.search_context_size !== undefined &&
        !CONTEXT_SIZES.includes(tool.search_context_size as string)
      ) {
        throw invalid(
          `${at}.search_context_size must be one of ${CONTEXT_SIZES.join(', ')} (default medium).`,
          `${at}.search_context_size`,
        );
      }
      if (tool.user_location !== undefined && tool.user_location !== null) {
        const loc = tool.user_location;
        if (!isObject(loc) || loc.type !== 'approximate') {
          throw invalid(`${at}.user_location must be {type: "approximate", ...}.`, `${at}.user_location`);
        }
        for (const key of ['country', 'city', 'region', 'timezone']) {
          if (loc[key] !== undefined && loc[key] !== null && typeof loc[key] !== 'string') {
            throw invalid(`${at}.user_location.${key} must be a string.`, `${at}.user_location.${key}`);
          }
        }
      }
      return;
    case 'file_search':
      if (
        !Array.isArray(tool.vector_store_ids) ||
        tool.vector_store_ids.length === 0 ||
        !tool.vector_store_ids.every((id) => typeof id === 'string')
      ) {
        throw invalid(`${at}.vector_store_ids must be a non-empty array of ids.`, `${at}.vector_store_ids`);
      }
      if (
        tool.max_num_results !== undefined &&
        !(Number.isInteger(tool.max_num_results) && (tool.max_num_results as number) >= 1)
      ) {
        throw invalid(`${at}.max_num_results must be a positive integer.`, `${at}.max_num_results`);
      }
      if (tool.filters !== undefined && tool.filters !== null && !isObject(tool.filters)) {
        throw invalid(`${at}.filters must be an object.`, `${at}.filters`);
      }
      return;
    case 'computer_use_preview':
      for (const key of ['display_width', 'display_height']) {
        if (!Number.isInteger(tool[key])) throw invalid(`${at}.${key} must be an integer.`, `${at}.${key}`);
      }
      if (typeof tool.environment !== 'string') {
        throw invalid(`${at}.environment must be a string.`, `${at}.environment`);
      }
      return;
    case 'mcp':
      if (typeof tool.server_label !== 'string' || tool.server_label === '') {
        throw invalid(`${at}.server_label is required.`, `${at}.server_label`);
      }
      if (tool.server_url !== undefined && !/^https?:\/\//.test(String(tool.server_url))) {
        throw invalid(`${at}.server_url must be an http(s) URL.`, `${at}.server_url`);
      }
      return;
    default:
      // Tool kinds the gateway does not know yet are the provider's to accept or refuse.
      return;
  }
}

export function validateResponsesRequest(body: Json): void {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw badRequest('model is required: a non-empty string.', 'model', 'missing_required_parameter');
  }
  validateInput(body.input);
  if (
    body.instructions !== undefined &&
    body.instructions !== null &&
    typeof body.instructions !== 'string'
  ) {
    throw invalid('instructions must be a string.', 'instructions');
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalid('stream must be a boolean.', 'stream');
  }
  if (body.reasoning !== undefined && body.reasoning !== null) {
    if (!isObject(body.reasoning)) throw invalid('reasoning must be an object.', 'reasoning');
    const effort = body.reasoning.effort;
    if (effort !== undefined && effort !== null && !EFFORTS.includes(effort as string)) {
      throw invalid(`reasoning.effort must be one of ${EFFORTS.join(', ')}.`, 'reasoning.effort');
    }
  }
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw invalid('tools must be an array.', 'tools');
    body.tools.forEach((tool, i) => {
      validateTool(tool, `tools[${i}]`);
    });
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null) {
    const ok =
      typeof choice === 'string'
        ? TOOL_CHOICES.includes(choice)
        : isObject(choice) && typeof choice.type === 'string';
    if (!ok)
      throw invalid(`tool_choice must be one of ${TOOL_CHOICES.join(', ')} or a tool object.`, 'tool_choice');
  }
}

/** Responses usage (input/output tokens) in the log's usage shape. */
export function responsesUsage(value: unknown): Usage | null {
  if (!isObject(value)) return null;
  // In chat's shape, so that bad counts are clamped and flagged the same way.
  return readUsage({
    prompt_tokens: value.input_tokens,
    completion_tokens: value.output_tokens,
    total_tokens: value.total_tokens,
    prompt_tokens_details: isObject(value.input_tokens_details) ? value.input_tokens_details : undefined,
  });
}

/**
 * An SSE error event both as the Responses API writes one and as the OpenAI SDKs raise it, numbered
 * after the last event relayed, as every Responses stream event is.
 */
function responsesErrorEvent(error: GatewayError, sequenceNumber: number): string {
  const body = {
    type: 'error',
    code: error.code,
    message: error.message,
    param: error.param,
    sequence_number: sequenceNumber,
    ...error.toBody(),
  };
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}

export async function responsesCreate(event: HttpEvent, state: ModelCallState): Promise<HttpResult> {
  const log = state.log;
  const text = bodyText(event);
  log.request = text;
  const sent = jsonBody(text);
  logModelRequest(log, sent);
  validateResponsesRequest(sent);
  const body = await replayPrevious(state, sent);
  const stream = body.stream === true;
  const guard = await RequestGuard.forRequest(state, body.model as string);
  await guard?.checkInput(responsesInputSlots(body));

  const attempt = async (target: ResolvedTarget, model: string | undefined): Promise<Streamed> => {
    // Providers without a Responses API of their own are served through their chat translation.
    if (target.provider.chat) return responsesChatAttempt(state, body, target, model, stream);
    const upstreamBody: Json = { ...body, model, ...target.overrideParams };
    // The provider never made the response the gateway replayed: the whole conversation goes instead.
    if (isReplayed(body)) delete upstreamBody.previous_response_id;
    if (typeof upstreamBody.model === 'string') log.model = upstreamBody.model;
    // Once a stream has started, the relay decides when to stop reading it (see stream-relay.ts).
    const upstream = stream ? streamSignal(state.clientSignal) : undefined;
    const success = await exchange(state, target, {
      method: 'POST',
      path: '/responses',
      contentType: 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      body: JSON.stringify(upstreamBody),
      keepOpen: (contentType) => stream && contentType.includes('text/event-stream'),
      signal: upstream?.signal,
    }).finally(() => upstream?.detach());
    return { ...success, cut: upstream?.abort };
  };
  const inputTokens = inputBound(body);
  const limit = body.max_output_tokens;
  const { target, success } = await routeModelCall(state, body.model as string, attempt, {
    bound: {
      inputTokens,
      maxOutputTokens: typeof limit === 'number' && limit > 0 ? Math.ceil(limit) : undefined,
    },
  });
  if (servedThroughChat(success)) {
    return responsesChatReply(state, body, target, success, guard, inputTokens);
  }

  if (success.replyText !== undefined) {
    const reply = success.reply as Json;
    log.response = reply;
    recordUsage(log, target, responsesUsage(reply.usage), reply.model);
    // After usage is recorded: a reply the guardrails refuse was still paid for, and is charged.
    const redacted = (await guard?.checkOutput(responsesOutputSlots(reply))) ?? false;
    return {
      statusCode: success.status,
      headers: {
        'content-type': 'application/json',
        ...success.headers,
        ...(log.cost !== null ? { 'x-gateway-cost': String(log.cost) } : {}),
      },
      body: redacted ? JSON.stringify(reply) : success.replyText,
    };
  }
  return streamReply(responsesFormat(target, log), { state, target, success, inputTokens, guard });
}

/**
 * The Responses stream format of the relay: each event is passed on as it came (masked when it may echo
 * the provider's credential); the output text and tool-call arguments are read for the guardrails, and
 * the final response and its usage from the terminal event.
 */
function responsesFormat(target: ResolvedTarget, log: UsageLogDraft): StreamFormat {
  const parser = new SseParser();
  let final: Json | undefined;
  let text = '';
  let ended = false;
  let failure: GatewayError | undefined;
  let sequence = -1;

  const read = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const ev of events) {
      // Nothing the provider sends after its error reaches the client.
      if (failure) break;
      const raw = ev.data === undefined ? undefined : tryJson(ev.data);
      const chatStyle = isObject(raw) && raw.type === undefined && raw.error !== undefined;
      const type = isObject(raw) ? (typeof raw.type === 'string' ? raw.type : ev.event) : ev.event;
      // The provider's error may echo its credential: the client and the log see it masked.
      const masker =
        chatStyle || type === 'error' || type === 'response.failed'
          ? credentialMasker(target.apiKey)
          : undefined;
      const data = masker ? masker.maskValue(raw) : raw;
      if (chatStyle || (ev.event === 'error' && !isObject(data))) {
        // An error in another wire shape is still ended as the Responses API ends one.
        ended = true;
        failure = streamedProviderError(
          isObject(data) ? data : { message: (masker?.mask(String(ev.data)) ?? '').slice(0, 1000) },
        );
        out += responsesErrorEvent(failure, sequence + 1);
        continue;
      }
      out += masker ? masker.mask(ev.raw) : ev.raw;
      if (!isObject(data)) continue;
      if (typeof data.sequence_number === 'number') sequence = data.sequence_number;
      if (type === 'response.output_text.delta' && typeof data.delta === 'string') text += data.delta;
      // Tool-call arguments are output too: guardrails read them as they stream.
      if (type === 'response.function_call_arguments.delta' && typeof data.delta === 'string')
        text += data.delta;
      if (type && TERMINAL.has(type)) {
        ended = true;
        if (isObject(data.response)) final = data.response;
        // The cost follows the terminal event as an SSE comment, which clients skip.
        const model = typeof final?.model === 'string' ? final.model : log.model;
        const cost = costOf(target.provider.name, model, responsesUsage(final?.usage), log.operatorPrices);
        if (cost !== null) out += `: x-gateway-cost ${cost}\n\n`;
        if (type === 'response.failed') {
          const err = isObject(final?.error) ? final.error : {};
          failure = providerError(502, {
            error: { message: err.message ?? 'The response failed.', code: err.code },
          });
        }
      } else if (type === 'error') {
        ended = true;
        failure = streamedProviderError(isObject(data.error) ? data : { error: data });
      }
    }
    return out;
  };

  return {
    ...eventRelay(parser, read),
    // An error ends the stream too: nothing is owed after it.
    get complete() {
      return ended;
    },
    get failure() {
      return failure;
    },
    settled: () => ended,
    checkedText: () => text,
    errorEvent: (error) => responsesErrorEvent(error, sequence + 1),
    result: () => ({
      response: final ?? null,
      usage: responsesUsage(final?.usage),
      model: final?.model,
      generated: text,
    }),
  };
}

/** The operations of the `responses` function group. */
const passthroughs = passthroughOperations({
  'responses.get': none,
  'responses.delete': none,
  'responses.input_items': none,
  'responses.cancel': none,
});

export const responsesOperations = {
  ...passthroughs,
  ...storedResponseOperations(passthroughs),
  'responses.create': responsesCreate,
} satisfies OperationTable<'responses'>;
