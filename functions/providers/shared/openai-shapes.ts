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

export const numberOr = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** An OpenAI usage object from the counts providers give. */
export function openAIUsage(prompt: number, completion: number, cached: number, reasoning = 0): Json {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
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

export function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
