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

export function parseEvent(raw: string): SseEvent {
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

/** Complete events split off a byte stream: their bytes, and where each ends in them. */
export interface SseBatch {
  bytes: Uint8Array;
  ends: number[];
}

const LF = 10;
const CR = 13;

/**
 * Splits SSE bytes at event boundaries as `SseParser` does (LF LF, CR LF CR LF or CR CR), without
 * decoding them, so that a relay can pass the upstream bytes on as they came.
 */
export class SseFrames {
  private held: Uint8Array = new Uint8Array(0);

  /** Feeds bytes; returns the events completed by them, contiguous from the first byte held. */
  push(chunk: Uint8Array): SseBatch {
    const data = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const ends: number[] = [];
    // Bytes held were scanned already, except for a boundary they may end in the middle of.
    for (let i = Math.max(0, this.held.length - 3); i < data.length; i++) {
      const b = data[i];
      if (b === LF) {
        if (data[i + 1] === LF) ends.push(i + 2);
        else continue;
      } else if (b === CR) {
        if (data[i + 1] === LF && data[i + 2] === CR && data[i + 3] === LF) ends.push(i + 4);
        else if (data[i + 1] === CR) ends.push(i + 2);
        else continue;
      } else continue;
      i = (ends.at(-1) as number) - 1;
    }
    const end = ends.at(-1) ?? 0;
    this.held = data.subarray(end);
    return { bytes: data.subarray(0, end), ends };
  }

  /** What remains after the stream ended: the bytes of an event with no closing blank line, if any. */
  flush(): Uint8Array | undefined {
    const rest = this.held;
    this.held = new Uint8Array(0);
    return Buffer.from(rest).toString('utf8').trim() === '' ? undefined : rest;
  }
}

/** An SSE `error` event in the OpenAI error shape, which the OpenAI SDKs raise as an APIError. */
export function sseErrorEvent(body: unknown): string {
  return `event: error\ndata: ${JSON.stringify(body)}\n\n`;
}
