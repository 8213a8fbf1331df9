import type { GatewayError } from '../../core/errors';
import { tryJson } from '../../core/request-body';
import {
  type ChunkHeader,
  chunk,
  completionId,
  contentParts,
  functionTools,
  isObject,
  type Json,
  type Message,
  maxTokensOf,
  messageExtras,
  nowSeconds,
  numberOr,
  openAIUsage,
  parseArguments,
  providerFailure,
  SseDecoder,
  stopSequencesOf,
  THINKING_BLOCKS,
  textOf,
  thinkingForEffort,
  toolCallsOf,
  toolChoiceOf,
  usageChunk,
} from '../shared/openai-shapes';
import type { ChatContext, ChatTranslation, ProviderEvent, StreamTranslator } from '../types';

// OpenAI Chat Completions <-> Anthropic Messages API.

/** Anthropic requires max_tokens; this is sent when the caller gave none. */
export const DEFAULT_MAX_TOKENS = 4096;

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

const finishOf = (reason: unknown) => (typeof reason === 'string' ? (FINISH[reason] ?? 'stop') : null);

// Status of an error reported inside a stream, by its Anthropic type.
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

function userBlocks(content: unknown, at: string): Json[] {
  return contentParts(content, at).map((p) => {
    if (p.kind === 'text') return { type: 'text', text: p.text };
    return {
      type: 'image',
      source: p.data
        ? { type: 'base64', media_type: p.data.mediaType, data: p.data.base64 }
        : { type: 'url', url: p.url },
    };
  });
}

/** The declarative part: OpenAI parameters that map one to one onto Anthropic's. */
const PARAMS: Array<[string, string]> = [
  ['temperature', 'temperature'],
  ['top_p', 'top_p'],
  ['top_k', 'top_k'],
  ['thinking', 'thinking'],
];

export function toAnthropicRequest(body: Json, model: string, stream: boolean): Json {
  const system: Json[] = [];
  const messages: Array<{ role: string; content: Json[] }> = [];
  const push = (role: string, blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    // Anthropic wants user and assistant turns to alternate: consecutive turns of one role merge.
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  (body.messages as Message[]).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push({ type: 'text', text });
    } else if (m.role === 'user') {
      push('user', userBlocks(m.content, at));
    } else if (m.role === 'assistant') {
      // Signed thinking carried back (Responses reasoning items) goes first, as Claude wrote it.
      const blocks: Json[] = [...(messageExtras(m)?.thinking ?? [])];
      const text = textOf(m.content);
      if (text) blocks.push({ type: 'text', text });
      for (const call of toolCallsOf(m)) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: parseArguments(call.arguments),
        });
      }
      push('assistant', blocks);
    } else if (m.role === 'tool' || m.role === 'function') {
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: typeof m.tool_call_id === 'string' ? m.tool_call_id : String(m.name ?? ''),
          content: textOf(m.content),
        },
      ]);
    }
  });

  const out: Json = { model, max_tokens: maxTokensOf(body) ?? DEFAULT_MAX_TOKENS, messages };
  if (system.length > 0) out.system = system;
  for (const [from, to] of PARAMS) if (body[from] !== undefined && body[from] !== null) out[to] = body[from];
  const effort = out.thinking === undefined ? thinkingForEffort(body, DEFAULT_MAX_TOKENS) : undefined;
  if (effort) {
    out.thinking = effort.thinking;
    out.max_tokens = effort.maxTokens;
  }
  const stop = stopSequencesOf(body);
  if (stop && stop.length > 0) out.stop_sequences = stop;
  if (stream) out.stream = true;
  if (typeof body.user === 'string') out.metadata = { user_id: body.user };

  const tools = functionTools(body);
  if (tools.length > 0) {
    out.tools = tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.parameters,
    }));
  }
  const choice = toolChoiceOf(body);
  const noParallel = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice?.mode === 'auto') out.tool_choice = { type: 'auto', ...noParallel };
  else if (choice?.mode === 'required') out.tool_choice = { type: 'any', ...noParallel };
  else if (choice?.mode === 'none') out.tool_choice = { type: 'none' };
  else if (choice?.mode === 'function') out.tool_choice = { type: 'tool', name: choice.name, ...noParallel };
  else if (tools.length > 0 && body.parallel_tool_calls === false)
    out.tool_choice = { type: 'auto', ...noParallel };
  return out;
}

/** Anthropic's input_tokens leave out cached tokens; OpenAI's prompt_tokens include them. */
function usageOf(u: unknown, output?: number): Json | undefined {
  if (!isObject(u)) return undefined;
  const read = numberOr(u.cache_read_input_tokens) ?? 0;
  const write = numberOr(u.cache_creation_input_tokens) ?? 0;
  const input = (numberOr(u.input_tokens) ?? 0) + read + write;
  return openAIUsage(input, output ?? numberOr(u.output_tokens) ?? 0, read);
}

export function fromAnthropicResponse(reply: unknown, model: string): Json {
  const r = isObject(reply) ? reply : {};
  let text = '';
  let reasoning = '';
  const thinking: Json[] = [];
  const toolCalls: Json[] = [];
  for (const block of Array.isArray(r.content) ? r.content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
      thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
    } else if (block.type === 'redacted_thinking')
      thinking.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: Json = {
    role: 'assistant',
    content: text || (toolCalls.length > 0 ? null : ''),
    refusal: null,
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length > 0) message[THINKING_BLOCKS] = thinking;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: typeof r.id === 'string' ? r.id : completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model: typeof r.model === 'string' ? r.model : model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(r.stop_reason) ?? 'stop' }],
    usage: usageOf(r.usage) ?? null,
  };
}

export function anthropicError(status: number, body: unknown, text: string): GatewayError {
  const e = isObject(body) && isObject(body.error) ? body.error : undefined;
  const message =
    typeof e?.message === 'string' ? e.message : text.slice(0, 500) || `Anthropic answered ${status}.`;
  const type = typeof e?.type === 'string' ? e.type : undefined;
  return providerFailure(status, message, type, type ?? null);
}

/** Anthropic stream events -> OpenAI chunks. State: ids, block-to-tool-call indexes, usage. */
export class AnthropicStream implements StreamTranslator {
  complete = false;
  failure: GatewayError | undefined;
  private readonly header: ChunkHeader;
  private readonly toolIndex = new Map<number, number>();
  private usage: Json | undefined;
  private startUsage: unknown;

  constructor(model: string) {
    this.header = { id: completionId(), model, created: nowSeconds() };
  }

  push(ev: ProviderEvent): Json[] {
    const data = tryJson(ev.data);
    if (!isObject(data)) return [];
    const type = typeof data.type === 'string' ? data.type : ev.event;
    switch (type) {
      case 'message_start': {
        const m = isObject(data.message) ? data.message : {};
        if (typeof m.id === 'string') this.header.id = m.id;
        if (typeof m.model === 'string') this.header.model = m.model;
        this.startUsage = m.usage;
        this.usage = usageOf(m.usage);
        return [chunk(this.header, { role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const block = isObject(data.content_block) ? data.content_block : {};
        if (block.type === 'tool_use') {
          const index = this.toolIndex.size;
          this.toolIndex.set(Number(data.index), index);
          return [
            chunk(this.header, {
              tool_calls: [
                { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } },
              ],
            }),
          ];
        }
        if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          return [chunk(this.header, { content: block.text })];
        }
        if (block.type === 'redacted_thinking') {
          return [
            chunk(this.header, { [THINKING_BLOCKS]: [{ type: 'redacted_thinking', data: block.data }] }),
          ];
        }
        return [];
      }
      case 'content_block_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        if (d.type === 'text_delta' && typeof d.text === 'string')
          return [chunk(this.header, { content: d.text })];
        if (d.type === 'thinking_delta' && typeof d.thinking === 'string') {
          return [chunk(this.header, { reasoning_content: d.thinking })];
        }
        if (d.type === 'signature_delta' && typeof d.signature === 'string') {
          return [
            chunk(this.header, {
              [THINKING_BLOCKS]: [{ type: 'thinking', thinking: '', signature: d.signature }],
            }),
          ];
        }
        if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const index = this.toolIndex.get(Number(data.index)) ?? 0;
          return [chunk(this.header, { tool_calls: [{ index, function: { arguments: d.partial_json } }] })];
        }
        return [];
      }
      case 'message_delta': {
        const d = isObject(data.delta) ? data.delta : {};
        const u = isObject(data.usage) ? data.usage : {};
        // The final counts: output_tokens is cumulative; input counts, when present, replace the first.
        const base = isObject(this.startUsage) ? { ...this.startUsage } : {};
        for (const k of ['input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens']) {
          if (typeof u[k] === 'number') base[k] = u[k];
        }
        this.usage = usageOf(base, numberOr(u.output_tokens));
        const finish = finishOf(d.stop_reason);
        return finish ? [chunk(this.header, {}, finish)] : [];
      }
      case 'message_stop':
        this.complete = true;
        return [];
      case 'error': {
        const e = isObject(data.error) ? data.error : {};
        const errType = typeof e.type === 'string' ? e.type : 'api_error';
        this.failure = providerFailure(
          // An error type Anthropic does not document has no status of its own: 502, as for any bad upstream.
          (Object.hasOwn(STATUS_OF_TYPE, errType) ? STATUS_OF_TYPE[errType] : undefined) ?? 502,
          typeof e.message === 'string' ? e.message : 'Anthropic reported an error in the stream.',
          errType,
          errType,
        );
        return [];
      }
      default:
        // ping, content_block_stop and event types added later carry nothing to translate.
        return [];
    }
  }

  end(): Json[] {
    return this.complete && this.usage ? [usageChunk(this.header, this.usage)] : [];
  }
}

export const anthropicChat: ChatTranslation = {
  buildCall(body, ctx: ChatContext) {
    return {
      url: `${ctx.baseUrl}/messages`,
      headers: {},
      body: JSON.stringify(toAnthropicRequest(body, ctx.model, ctx.stream)),
    };
  },
  response: (reply, ctx) => fromAnthropicResponse(reply, ctx.model),
  streamContentType: 'text/event-stream',
  decoder: () => new SseDecoder(),
  stream: (ctx) => new AnthropicStream(ctx.model),
  error: (status, body, text) => anthropicError(status, body, text),
};
