import { badRequest, providerFailure as failure } from '../../core/errors';
import { SseParser } from '../../core/sse';
import type { Json, ProviderEvent, StreamDecoder } from '../types';

export type { Json };

// Helpers every translated provider shares: reading the OpenAI request, building OpenAI replies and
// chunks, and mapping provider errors. Pure functions, no I/O.

export type Message = Json & { role: string };

export const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** A content part of an OpenAI message, reduced to what providers can take. */
export type ContentPart =
  | { kind: 'text'; text: string }
  | { kind: 'image'; url: string; data?: { mediaType: string; base64: string } };

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,(.*)$/s;

/** `data:image/png;base64,...` split into its media type and payload; undefined for other URLs. */
export function parseDataUrl(url: string): { mediaType: string; base64: string } | undefined {
  const m = DATA_URL.exec(url);
  return m ? { mediaType: m[1] ?? 'application/octet-stream', base64: m[2] ?? '' } : undefined;
}

/** A message's content as parts: a string is one text part; unknown part types are a 400. */
export function contentParts(content: unknown, at: string): ContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(`${at}.content must be a string or an array.`, at);
  const parts: ContentPart[] = [];
  content.forEach((p, i) => {
    if (!isObject(p)) return;
    if ((p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string') {
      parts.push({ kind: 'text', text: p.text });
    } else if (p.type === 'image_url') {
      const image = p.image_url;
      const url = typeof image === 'string' ? image : isObject(image) ? image.url : undefined;
      if (typeof url !== 'string' || url === '') {
        throw badRequest(`${at}.content[${i}].image_url.url must be a URL.`, `${at}.content[${i}]`);
      }
      parts.push({ kind: 'image', url, data: parseDataUrl(url) });
    } else if (p.type === 'refusal' && typeof p.refusal === 'string') {
      parts.push({ kind: 'text', text: p.refusal });
    } else {
      throw badRequest(
        `${at}.content[${i}] has a type this provider cannot take: ${String(p.type).slice(0, 40)}.`,
        `${at}.content[${i}]`,
        'unsupported_content',
      );
    }
  });
  return parts;
}

/** Text of a message or tool result, with any non-text parts left out. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    return content === null || content === undefined ? '' : JSON.stringify(content);
  return content
    .map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/**
 * What an Anthropic-format request carries that OpenAI's chat shape has no place for. The Messages
 * ingress sets it under a symbol on the chat body and its messages: translators that can use it (Bedrock,
 * Gemini) read it, and JSON (the OpenAI wire, the log) never shows it.
 */
export const ANTHROPIC_EXTRAS = Symbol('anthropic-extras');

export interface RequestExtras {
  /** Anthropic's `thinking` (`{type: "enabled", budget_tokens}`). */
  thinking?: Json;
  /** A tool definition carried `cache_control`: the prompt is cached up to the end of the tools. */
  cacheTools?: boolean;
}

export interface MessageExtras {
  /** A block of the message carried `cache_control`: the prompt is cached up to the end of it. */
  cache?: boolean;
  /** The assistant turn's `thinking` / `redacted_thinking` blocks, carried back with their signatures. */
  thinking?: Json[];
}

type WithExtras<T> = { [ANTHROPIC_EXTRAS]?: T };

export const requestExtras = (body: Json): RequestExtras | undefined =>
  (body as WithExtras<RequestExtras>)[ANTHROPIC_EXTRAS];

export const messageExtras = (message: Json): MessageExtras | undefined =>
  (message as WithExtras<MessageExtras>)[ANTHROPIC_EXTRAS];

/** `value` with `extras` attached (nothing when there are none). */
export function withExtras<T extends Json>(value: T, extras: RequestExtras | MessageExtras): T {
  const set = Object.entries(extras).filter(([, v]) => v !== undefined && v !== false);
  if (set.length > 0) (value as WithExtras<Json>)[ANTHROPIC_EXTRAS] = Object.fromEntries(set);
  return value;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The function tool calls of an assistant message. */
export function toolCallsOf(message: Json): ToolCall[] {
  if (!Array.isArray(message.tool_calls)) return [];
  const calls: ToolCall[] = [];
  for (const c of message.tool_calls) {
    if (!isObject(c) || !isObject(c.function)) continue;
    calls.push({
      id: typeof c.id === 'string' ? c.id : '',
      name: typeof c.function.name === 'string' ? c.function.name : '',
      arguments: typeof c.function.arguments === 'string' ? c.function.arguments : '{}',
    });
  }
  return calls;
}

/** Tool arguments as an object: providers want JSON values, OpenAI sends JSON text. */
export function parseArguments(text: string): Json {
  try {
    const v = JSON.parse(text || '{}');
    return isObject(v) ? v : { value: v };
  } catch {
    return { _raw: text };
  }
}

export interface FunctionTool {
  name: string;
  description?: string;
  parameters: Json;
}

export function functionTools(body: Json): FunctionTool[] {
  if (!Array.isArray(body.tools)) return [];
  const tools: FunctionTool[] = [];
  for (const t of body.tools) {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) continue;
    const f = t.function;
    if (typeof f.name !== 'string') continue;
    tools.push({
      name: f.name,
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      parameters: isObject(f.parameters) ? f.parameters : { type: 'object', properties: {} },
    });
  }
  return tools;
}

/** `tool_choice` reduced to its four meanings. */
export type ToolChoice = { mode: 'auto' | 'none' | 'required' } | { mode: 'function'; name: string };

export function toolChoiceOf(body: Json): ToolChoice | undefined {
  const c = body.tool_choice;
  if (c === 'auto' || c === 'none' || c === 'required') return { mode: c };
  if (isObject(c) && isObject(c.function) && typeof c.function.name === 'string') {
    return { mode: 'function', name: c.function.name };
  }
  return undefined;
}

export function maxTokensOf(body: Json): number | undefined {
  const v = body.max_completion_tokens ?? body.max_tokens;
  return typeof v === 'number' ? v : undefined;
}

export function stopSequencesOf(body: Json): string[] | undefined {
  if (typeof body.stop === 'string') return [body.stop];
  if (Array.isArray(body.stop)) return body.stop.filter((s): s is string => typeof s === 'string');
  return undefined;
}

/**
 * Where a chat message or stream delta carries Anthropic's thinking blocks with their signatures (and
 * redacted ones), beside `reasoning_content`: the name LiteLLM gave it, so clients that know it read it.
 */
export const THINKING_BLOCKS = 'thinking_blocks';

/** Thinking tokens for each OpenAI `reasoning_effort`, on providers that take a budget (README). */
export const THINKING_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
};

/** Anthropic's smallest thinking budget. */
const MIN_THINKING = 1024;

/**
 * Anthropic's `thinking` for a request's `reasoning_effort`, and the output limit to send with it:
 * thinking counts in `max_tokens`, so a limit the caller set bounds the budget (below 1,024 tokens
 * there is no thinking), and without one the limit is the budget plus `defaultMax`.
 */
export function thinkingForEffort(
  body: Json,
  defaultMax: number,
): { thinking: Json; maxTokens: number } | undefined {
  const effort = body.reasoning_effort;
  if (typeof effort !== 'string' || !Object.hasOwn(THINKING_BUDGET, effort)) return undefined;
  const limit = maxTokensOf(body);
  const budget = Math.min(THINKING_BUDGET[effort] as number, limit === undefined ? Infinity : limit - 1);
  if (budget < MIN_THINKING) return undefined;
  return {
    thinking: { type: 'enabled', budget_tokens: budget },
    maxTokens: limit ?? budget + defaultMax,
  };
}

export const numberOr = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** An OpenAI usage object from the counts providers give. */
export function openAIUsage(
  prompt: number,
  completion: number,
  cached: number,
  reasoning = 0,
  /** Prompt tokens written to the provider's cache (Anthropic, Bedrock); OpenAI has no field for them. */
  cacheWrites = 0,
): Json {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: {
      cached_tokens: cached,
      ...(cacheWrites > 0 ? { cache_creation_tokens: cacheWrites } : {}),
    },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

export function completionId(): string {
  return `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** What identifies a stream's chunks; set from the first provider event. */
export interface ChunkHeader {
  id: string;
  model: string;
  created: number;
}

export function chunk(h: ChunkHeader, delta: Json, finishReason: string | null = null): Json {
  return {
    id: h.id,
    object: 'chat.completion.chunk',
    created: h.created,
    model: h.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/**
 * The key of the gateway's own fields in a chat chunk: the usage chunk's `cost`, and the `prompt_usage`
 * a provider reports before its stream ends (for Anthropic's `message_start`).
 */
export const GATEWAY_FIELDS = 'x-gateway';

/** The usage-only chunk OpenAI sends last when `stream_options.include_usage` is set. */
export function usageChunk(h: ChunkHeader, usage: Json): Json {
  return {
    id: h.id,
    object: 'chat.completion.chunk',
    created: h.created,
    model: h.model,
    choices: [],
    usage,
  };
}

/** OpenAI error types by status, for providers whose own types mean nothing to OpenAI clients. */
export function errorTypeFor(status: number): string {
  if (status === 400 || status === 413 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return 'api_error';
}

/** A provider's error read out of its own format; the type follows the status when it names none. */
export function providerFailure(status: number, message: string, type?: string, code?: string | null) {
  return failure(status, type ?? errorTypeFor(status), message, code ?? null);
}

/** SSE framing, shared by Anthropic and Gemini. */
export class SseDecoder implements StreamDecoder {
  private readonly parser = new SseParser();
  push(bytes: Uint8Array): ProviderEvent[] {
    return this.events(this.parser.push(bytes));
  }
  flush(): ProviderEvent[] {
    const rest = this.parser.flush();
    return rest ? this.events([rest]) : [];
  }
  private events(list: ReturnType<SseParser['push']>): ProviderEvent[] {
    const out: ProviderEvent[] = [];
    for (const ev of list) if (ev.data !== undefined) out.push({ event: ev.event, data: ev.data });
    return out;
  }
}
