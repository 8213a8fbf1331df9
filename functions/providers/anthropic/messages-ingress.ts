import { badRequest } from '../../core/errors';
import { isObject, type Json, numberOr } from '../shared/openai-shapes';

// Anthropic's Messages API as clients send it (Claude Code, the Anthropic SDKs) <-> the OpenAI chat
// shape every provider translator takes. Used for every route that does not end at Anthropic itself.

/** Anthropic's stop reasons for OpenAI's finish reasons. */
const STOP_REASON: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

export const stopReasonOf = (finish: unknown): string =>
  (typeof finish === 'string' ? STOP_REASON[finish] : undefined) ?? 'end_turn';

/** The request checks Anthropic makes first, with its messages; `max_tokens` is not needed to count. */
export function validateMessagesRequest(body: Json, needsMaxTokens: boolean): void {
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw badRequest('model: Field required', 'model', 'missing_required_parameter');
  }
  if (
    needsMaxTokens &&
    (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
  ) {
    throw badRequest('max_tokens: Field required (an integer of at least 1)', 'max_tokens');
  }
  if (!Array.isArray(body.messages)) {
    throw badRequest('messages: Field required', 'messages', 'missing_required_parameter');
  }
  body.messages.forEach((m, i) => {
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      throw badRequest(`messages.${i}.role: Input should be 'user' or 'assistant'`, `messages.${i}`);
    }
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      throw badRequest(
        `messages.${i}.content: Input should be a string or a list of blocks`,
        `messages.${i}`,
      );
    }
  });
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    throw badRequest('stream: Input should be a valid boolean', 'stream');
  }
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    throw badRequest('system: Input should be a string or a list of text blocks', 'system');
  }
}

const blocksOf = (content: unknown): Json[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content.filter(isObject)
      : [];

const textOfBlocks = (content: unknown): string =>
  blocksOf(content)
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
    .filter((t) => t !== '')
    .join('\n\n');

/** The first thing of a request that only Anthropic can take: a 400 on every other route. */
export interface Unsupported {
  message: string;
  param: string;
}

const onlyAnthropic = (b: Json, where: string): Unsupported => ({
  message: `${where}: blocks of type "${String(b.type).slice(0, 40)}" can be sent only to Anthropic.`,
  param: where,
});

function imagePart(block: Json, at: string, refuse: (u: Unsupported) => void): Json[] {
  const source = isObject(block.source) ? block.source : {};
  if (source.type === 'base64' && typeof source.data === 'string') {
    const media = typeof source.media_type === 'string' ? source.media_type : 'image/png';
    return [{ type: 'image_url', image_url: { url: `data:${media};base64,${source.data}` } }];
  }
  if (source.type === 'url' && typeof source.url === 'string') {
    return [{ type: 'image_url', image_url: { url: source.url } }];
  }
  // File ids of Anthropic's Files API, and whatever source comes next, mean nothing elsewhere.
  refuse({
    message: `${at}.source: images of source type "${String(source.type).slice(0, 40)}" can be sent only to Anthropic.`,
    param: at,
  });
  return [];
}

/** The parts of a user turn, and the tool results it carries (which become `tool` messages first). */
function userTurn(content: unknown, at: string, refuse: (u: Unsupported) => void): Json[] {
  const toolMessages: Json[] = [];
  const parts: Json[] = [];
  blocksOf(content).forEach((b, j) => {
    const where = `${at}.content.${j}`;
    if (b.type === 'text') {
      if (typeof b.text === 'string' && b.text !== '') parts.push({ type: 'text', text: b.text });
    } else if (b.type === 'image') {
      parts.push(...imagePart(b, where, refuse));
    } else if (b.type === 'tool_result') {
      const text = textOfBlocks(b.content);
      toolMessages.push({
        role: 'tool',
        tool_call_id: String(b.tool_use_id ?? ''),
        // The chat shape has no error flag on a tool result: the text says it.
        content: b.is_error === true ? `Error: ${text}` : text,
      });
      // Images a tool returned go to the model in the user turn that follows the results.
      blocksOf(b.content).forEach((inner, k) => {
        if (inner.type === 'image') parts.push(...imagePart(inner, `${where}.content.${k}`, refuse));
      });
    } else {
      refuse(onlyAnthropic(b, where));
    }
  });
  if (parts.length === 0) return toolMessages;
  // Text alone goes as a string, which every OpenAI-compatible server takes.
  const merged = parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n\n') : parts;
  return [...toolMessages, { role: 'user', content: merged }];
}

function assistantTurn(content: unknown, at: string, refuse: (u: Unsupported) => void): Json | undefined {
  let text = '';
  const calls: Json[] = [];
  blocksOf(content).forEach((b, j) => {
    if (b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use') {
      calls.push({
        id: String(b.id ?? ''),
        type: 'function',
        function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) },
      });
    } else if (b.type !== 'thinking' && b.type !== 'redacted_thinking') {
      // Thinking is signed by Anthropic and means nothing elsewhere; anything else cannot be carried.
      refuse(onlyAnthropic(b, `${at}.content.${j}`));
    }
  });
  if (text === '' && calls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(calls.length ? { tool_calls: calls } : {}),
  };
}

/**
 * A Messages request as an OpenAI chat request. Thinking blocks and `cache_control` are Anthropic's
 * alone and are left out. What no other provider can take (server tools, documents, ...) is named in
 * `unsupported` instead of refused here: the route decides, and Anthropic takes it natively.
 */
export function toChatRequest(body: Json): { chat: Json; unsupported?: Unsupported } {
  let unsupported: Unsupported | undefined;
  const refuse = (u: Unsupported) => {
    unsupported ??= u;
  };
  const messages: Json[] = [];
  const system = typeof body.system === 'string' ? body.system : textOfBlocks(body.system);
  if (system) messages.push({ role: 'system', content: system });
  (body.messages as Json[]).forEach((m, i) => {
    const at = `messages.${i}`;
    if (m.role === 'user') messages.push(...userTurn(m.content, at, refuse));
    else {
      const turn = assistantTurn(m.content, at, refuse);
      if (turn) messages.push(turn);
    }
  });

  const out: Json = { model: body.model, messages };
  if (typeof body.max_tokens === 'number') out.max_tokens = body.max_tokens;
  for (const k of ['temperature', 'top_p', 'top_k']) if (typeof body[k] === 'number') out[k] = body[k];
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) out.stop = body.stop_sequences;
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  const meta = isObject(body.metadata) ? body.metadata : {};
  if (typeof meta.user_id === 'string') out.user = meta.user_id;

  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isObject);
  const server = tools.find((t) => typeof t.type === 'string' && t.type !== 'custom');
  if (server) {
    refuse({
      message: `tools: "${String(server.name ?? server.type).slice(0, 64)}" (${String(server.type).slice(0, 64)}) is a tool Anthropic runs itself; it can be used only with Anthropic.`,
      param: 'tools',
    });
  }
  if (tools.length > 0) {
    out.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(typeof t.description === 'string' ? { description: t.description } : {}),
        parameters: isObject(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
      },
    }));
  }
  const choice = isObject(body.tool_choice) ? body.tool_choice : undefined;
  if (choice) {
    if (choice.type === 'auto') out.tool_choice = 'auto';
    else if (choice.type === 'any') out.tool_choice = 'required';
    else if (choice.type === 'none') out.tool_choice = 'none';
    else if (choice.type === 'tool') out.tool_choice = { type: 'function', function: { name: choice.name } };
    if (choice.disable_parallel_tool_use === true && tools.length > 0) out.parallel_tool_calls = false;
  }
  return { chat: out, unsupported };
}

/** Anthropic's usage from OpenAI's: Anthropic's input tokens leave out the cached ones. */
export function anthropicUsage(usage: unknown): Json {
  const u = isObject(usage) ? usage : {};
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const cached = numberOr(details.cached_tokens) ?? 0;
  return {
    input_tokens: Math.max(0, (numberOr(u.prompt_tokens) ?? 0) - cached),
    output_tokens: numberOr(u.completion_tokens) ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** A message id in Anthropic's form, kept when the provider already gave one. */
export function messageId(id: unknown): string {
  if (typeof id === 'string' && id.startsWith('msg_')) return id;
  const tail =
    typeof id === 'string' && id ? id.replace(/^chatcmpl-/, '') : Math.random().toString(36).slice(2);
  return `msg_${tail.replace(/[^\w-]/g, '')}`;
}

const toolUseId = (id: unknown): string =>
  typeof id === 'string' && id !== '' ? id : `toolu_${Math.random().toString(36).slice(2, 14)}`;

function toolInput(args: unknown): unknown {
  if (typeof args !== 'string' || args === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}

/** A `chat.completion` as an Anthropic Message. */
export function toAnthropicMessage(completion: unknown, model: string): Json {
  const c = isObject(completion) ? completion : {};
  const choice = Array.isArray(c.choices) && isObject(c.choices[0]) ? c.choices[0] : {};
  const msg = isObject(choice.message) ? choice.message : {};
  const content: Json[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') {
    content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  }
  const text =
    typeof msg.content === 'string' ? msg.content : typeof msg.refusal === 'string' ? msg.refusal : '';
  if (text !== '') content.push({ type: 'text', text });
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    content.push({
      type: 'tool_use',
      id: toolUseId(call.id),
      name: String(call.function.name ?? ''),
      input: toolInput(call.function.arguments),
    });
  }
  return {
    id: messageId(c.id),
    type: 'message',
    role: 'assistant',
    model: typeof c.model === 'string' ? c.model : model,
    content,
    stop_reason: stopReasonOf(choice.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(c.usage),
  };
}

const event = (name: string, data: Json): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

type OpenBlock = 'text' | 'thinking' | 'tool_use';

/**
 * OpenAI `chat.completion.chunk`s -> Anthropic's stream events, as SSE text. State: the open content
 * block, tool call indexes, the stop reason and usage (which OpenAI sends last, so `message_delta`
 * waits for the end of the chat stream).
 */
export class AnthropicEventWriter {
  private started = false;
  private finished = false;
  private index = -1;
  private open: OpenBlock | undefined;
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: string | undefined;
  private usage: Json | undefined;

  constructor(private readonly model: string) {}

  /** The events of one chat chunk. */
  chunk(c: Json): string {
    let out = this.start(c);
    if (c.usage) this.usage = anthropicUsage(c.usage);
    const choice = Array.isArray(c.choices) && isObject(c.choices[0]) ? c.choices[0] : undefined;
    if (!choice) return out;
    const d = isObject(choice.delta) ? choice.delta : {};
    const reasoning = d.reasoning_content ?? d.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') {
      out += this.ensure('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += this.delta({ type: 'thinking_delta', thinking: reasoning });
    }
    const text = typeof d.content === 'string' ? d.content : typeof d.refusal === 'string' ? d.refusal : '';
    if (text !== '') {
      out += this.ensure('text', { type: 'text', text: '' });
      out += this.delta({ type: 'text_delta', text });
    }
    if (Array.isArray(d.tool_calls)) {
      for (const call of d.tool_calls) if (isObject(call)) out += this.toolCall(call);
    }
    if (typeof choice.finish_reason === 'string') {
      this.stopReason = stopReasonOf(choice.finish_reason);
      out += this.close();
    }
    return out;
  }

  /** The chat stream ended (`[DONE]`): the last block closes, then `message_delta` and `message_stop`. */
  finish(): string {
    if (this.finished) return '';
    this.finished = true;
    const usage = this.usage ?? anthropicUsage(undefined);
    return (
      this.start({}) +
      this.close() +
      event('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null },
        usage,
      }) +
      event('message_stop', { type: 'message_stop' })
    );
  }

  private start(c: Json): string {
    if (this.started) return '';
    this.started = true;
    const message = {
      id: messageId(c.id),
      type: 'message',
      role: 'assistant',
      model: typeof c.model === 'string' ? c.model : this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Chat streams count tokens only at the end: the final counts come in `message_delta`.
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    return event('message_start', { type: 'message_start', message }) + event('ping', { type: 'ping' });
  }

  private toolCall(call: Json): string {
    const position = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let block = this.toolBlocks.get(position);
    if (block === undefined) {
      out += this.close();
      this.index += 1;
      block = this.index;
      this.toolBlocks.set(position, block);
      this.open = 'tool_use';
      out += event('content_block_start', {
        type: 'content_block_start',
        index: block,
        content_block: { type: 'tool_use', id: toolUseId(call.id), name: String(fn.name ?? ''), input: {} },
      });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      out += event('content_block_delta', {
        type: 'content_block_delta',
        index: block,
        delta: { type: 'input_json_delta', partial_json: fn.arguments },
      });
    }
    return out;
  }

  private ensure(kind: OpenBlock, contentBlock: Json): string {
    if (this.open === kind && kind !== 'tool_use') return '';
    const out = this.close();
    this.index += 1;
    this.open = kind;
    return (
      out +
      event('content_block_start', {
        type: 'content_block_start',
        index: this.index,
        content_block: contentBlock,
      })
    );
  }

  private delta(delta: Json): string {
    return event('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }

  private close(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return event('content_block_stop', { type: 'content_block_stop', index: this.index });
  }
}

/** Anthropic's error types, by HTTP status (gateway statuses such as 412 and 446 included). */
export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402 || status === 412) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 504 || status === 408) return 'timeout_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** An error in Anthropic's shape: its type follows the status, as Anthropic's own errors do. */
export function anthropicErrorBody(status: number, message: string): Json {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

/** An SSE `error` event in Anthropic's shape. */
export const anthropicErrorEvent = (status: number, message: string): string =>
  event('error', anthropicErrorBody(status, message));

// Anthropic's published rule of thumb for images: about (width x height) / 750 tokens, 1,600 at most.
const IMAGE_TOKENS = 1600;
const CHARS_PER_TOKEN = 4;

/**
 * An estimate of a request's input tokens for providers without a counting endpoint: about four
 * characters a token over system, messages and tool definitions, and 1,600 tokens an image.
 */
export function estimateInputTokens(body: Json): number {
  let chars = 0;
  let images = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') chars += value.length;
    else if (Array.isArray(value)) for (const v of value) walk(v);
    else if (isObject(value)) {
      if (value.type === 'image' || value.type === 'document') {
        images += 1;
        return;
      }
      for (const [k, v] of Object.entries(value)) if (k !== 'cache_control' && k !== 'type') walk(v);
    } else if (typeof value === 'number' || typeof value === 'boolean') chars += String(value).length;
  };
  walk(body.system);
  walk(body.messages);
  walk(body.tools);
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
}
