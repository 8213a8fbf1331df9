import type { HttpBody } from '../core/http';
import { tryJson } from '../core/request-body';
import { SseParser } from '../core/sse';
import type { Json } from '../providers/types';

/** How one wire format writes the chat pipeline's stream: a chunk, the end, an error, a cut. */
export interface ChatStreamWriter {
  chunk(chunk: Json): string;
  /** After `[DONE]`. */
  end(): string;
  /** The pipeline's SSE `error` event (OpenAI's `{error: {type, code, message}}`). */
  error(error: { type?: unknown; code?: unknown; message?: unknown } | undefined): string;
  /** The stream stopped with neither `[DONE]` nor an error. */
  truncated(): string;
}

/**
 * The chat pipeline's stream (OpenAI chunks, `[DONE]`, `error` events) in another wire format
 * (Anthropic's events, the Responses events): each batch the pipeline writes is rewritten and written
 * at once, and nothing after the end or an error.
 */
export async function* reframeChatStream(chat: HttpBody, writer: ChatStreamWriter): AsyncGenerator<string> {
  const parser = new SseParser();
  let ended = false;
  const rewrite = (events: ReturnType<SseParser['push']>): string => {
    let out = '';
    for (const ev of events) {
      if (ev.data === undefined || ended) continue;
      if (ev.event === 'error') {
        out += writer.error((tryJson(ev.data) as { error?: Record<string, unknown> } | undefined)?.error);
        ended = true;
      } else if (ev.data.trim() === '[DONE]') {
        out += writer.end();
        ended = true;
      } else {
        const c = tryJson(ev.data);
        if (c && typeof c === 'object' && !Array.isArray(c)) out += writer.chunk(c as Json);
      }
    }
    return out;
  };
  for await (const piece of typeof chat === 'string' ? [chat] : chat) {
    const out = rewrite(parser.push(piece));
    if (out) yield out;
  }
  const rest = parser.flush();
  const out = rest ? rewrite([rest]) : '';
  if (out) yield out;
  if (!ended) yield writer.truncated();
}
