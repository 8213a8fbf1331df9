// Server-sent events, split incrementally. Each event keeps its raw text so it can be forwarded
// byte for byte; `data` joins the event's data lines as the SSE standard says.

export interface SseEvent {
  raw: string;
  event: string | undefined;
  data: string | undefined;
}

const BOUNDARY = /\r\n\r\n|\n\n|\r\r/g;

export class SseParser {
  private buffer = '';
  private readonly decoder = new TextDecoder();

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    BOUNDARY.lastIndex = 0;
    for (let m = BOUNDARY.exec(this.buffer); m; m = BOUNDARY.exec(this.buffer)) {
      const end = m.index + m[0].length;
      events.push(parseEvent(this.buffer.slice(start, end)));
      start = end;
    }
    if (start > 0) this.buffer = this.buffer.slice(start);
    return events;
  }

  /** What remains after the stream ended: an event with no closing blank line, if any. */
  flush(): SseEvent | undefined {
    this.buffer += this.decoder.decode();
    const rest = this.buffer;
    this.buffer = '';
    return rest.trim() === '' ? undefined : parseEvent(rest);
  }
}

function parseEvent(raw: string): SseEvent {
  let event: string | undefined;
  let data: string[] | undefined;
  for (const line of raw.split(/\r\n|\n|\r/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data ??= [];
      data.push(value);
    } else if (field === 'event') event = value;
  }
  return { raw, event, data: data?.join('\n') };
}

/** An SSE `error` event in the OpenAI error shape, which the OpenAI SDKs raise as an APIError. */
export function sseErrorEvent(body: unknown): string {
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}
