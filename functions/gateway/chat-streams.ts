import { type GatewayError, streamedProviderError } from '../core/errors';
import type { UsageLogDraft } from '../core/log-entry';
import { tryJson } from '../core/request-body';
import { credentialMasker } from '../core/secret-mask';
import { parseEvent, SseFrames, sseErrorEvent } from '../core/sse';
import type { ChatContext, ChatTranslation, Json } from '../providers/types';
import { ChatStreamAccumulator } from './chat-stream-accumulator';
import { costOf, readUsage } from './pricing';
import { closedEvent, type RelayChunk, type StreamFormat, type StreamResult } from './stream-relay';
import type { ResolvedTarget } from './target';

// The chat stream formats of the relay: an OpenAI-format stream passed on, and a provider's own stream
// (Anthropic, Bedrock, Gemini) translated into `chat.completion.chunk` events. Either is written for the
// client in OpenAI's wire format, or in another (Anthropic's events, the Responses events) by a writer.

const isJson = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const usageOnly = (c: Json) => Array.isArray(c.choices) && c.choices.length === 0 && !!c.usage;

/** How the chat stream is written for the client: its chunks, its end (`[DONE]`), and an error. */
export interface ChatStreamWriter {
  chunk(chunk: Json): string;
  end(): string;
  error(error: GatewayError): string;
}

/** OpenAI's wire format: `data:` chunks, `[DONE]`, and the SSE `error` event every OpenAI SDK raises. */
const OPENAI_WRITER: ChatStreamWriter = {
  chunk: (c) => `data: ${JSON.stringify(c)}\n\n`,
  end: () => 'data: [DONE]\n\n',
  error: (e) => sseErrorEvent(e.toBody()),
};

export interface ChatStreamOptions {
  target: ResolvedTarget;
  log: UsageLogDraft;
  /** The client did not ask for usage: the usage chunk becomes an SSE comment with the cost. */
  dropUsageChunk: boolean;
  /** The client's wire format, when it is not OpenAI's. */
  writer?: ChatStreamWriter;
}

/**
 * The usage chunk with the request's cost in its `x-gateway` extension; when the client did not ask for
 * usage, only the cost, as an SSE comment that clients skip (and other wire formats have no place for).
 */
function withCost(chunk: Json, options: ChatStreamOptions): string {
  const { target, log } = options;
  const model = typeof chunk.model === 'string' ? chunk.model : log.model;
  const cost = costOf(target.provider.name, model, readUsage(chunk.usage), log.operatorPrices);
  if (options.dropUsageChunk) {
    return cost === null || options.writer ? '' : `: x-gateway-cost ${cost}\n\n`;
  }
  return (options.writer ?? OPENAI_WRITER).chunk({ ...chunk, 'x-gateway': { cost } });
}

/** A reassembled chat stream as the log takes it. */
export function chatResult(acc: ChatStreamAccumulator): StreamResult {
  const response = acc.result();
  return { response, usage: readUsage(acc.usage), model: response.model, generated: acc.generated() };
}

const view = (bytes: Uint8Array) =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
const has = (bytes: Uint8Array, text: string) => view(bytes).includes(text);
const utf8 = (bytes: Uint8Array) => view(bytes).toString('utf8');
const bytesOf = (piece: RelayChunk) => (typeof piece === 'string' ? Buffer.from(piece) : piece);

/**
 * An OpenAI-format stream, passed on as the upstream's bytes. Only events that may matter are decoded
 * and parsed as they pass (`[DONE]`, an error, the usage chunk, whose cost is added); the rest are read
 * for the log once the stream is over, or at once when output guardrails read the text (`guarded`) or
 * the client's wire format is another (`writer`).
 */
export function chatPassthrough(options: ChatStreamOptions & { guarded: boolean }): StreamFormat {
  const { target, writer } = options;
  const eager = options.guarded || !!writer;
  const frames = new SseFrames();
  const acc = new ChatStreamAccumulator();
  // Events not read yet, in order (an unguarded stream reads them for the log at the end).
  const unread: Array<Uint8Array | Json> = [];
  let done = false;
  let usage = false;
  let failure: GatewayError | undefined;

  const read = (c: Json) => (eager ? acc.add(c) : unread.push(c));
  const parse = (bytes: Uint8Array): Json | undefined => {
    const data = parseEvent(utf8(bytes)).data;
    const c = data === undefined ? undefined : tryJson(data);
    return isJson(c) ? c : undefined;
  };
  /** The replacement of one event, or undefined to pass its bytes on as they are. */
  const take = (bytes: Uint8Array): string | undefined => {
    // Another wire format has no place for OpenAI's comments, or for anything after the end.
    const pass = writer ? '' : undefined;
    if (writer && done) return pass;
    // Prefilters: an error has an `error` member or event name, the usage chunk a non-null `usage`.
    if (
      !writer &&
      !has(bytes, '[DONE]') &&
      !has(bytes, '"error"') &&
      !has(bytes, 'event:') &&
      !(has(bytes, '"usage"') && !has(bytes, '"usage":null'))
    ) {
      if (!eager) unread.push(bytes);
      else {
        const c = parse(bytes);
        if (c) acc.add(c);
      }
      return undefined;
    }
    const ev = parseEvent(utf8(bytes));
    if (ev.data === undefined) return pass;
    if (ev.data.trim() === '[DONE]') {
      done = true;
      return writer ? writer.end() : undefined;
    }
    const chunk = tryJson(ev.data);
    if (ev.event === 'error' || (isJson(chunk) && chunk.error)) {
      // The provider's error becomes the SSE `error` event every client and SDK recognises; it may
      // echo its credential, so the client and the log see it masked.
      const masker = credentialMasker(target.apiKey);
      failure = streamedProviderError(
        masker.maskValue(isJson(chunk) ? chunk : { message: ev.data.slice(0, 1000) }),
      );
      return (writer ?? OPENAI_WRITER).error(failure);
    }
    if (!isJson(chunk)) return pass;
    read(chunk);
    if (usageOnly(chunk)) {
      usage = true;
      return withCost(chunk, options);
    }
    return writer ? writer.chunk(chunk) : undefined;
  };
  const relay = (bytes: Uint8Array, ends: number[]): RelayChunk => {
    const pieces: RelayChunk[] = [];
    let start = 0;
    let from = 0;
    for (const end of ends) {
      // Nothing the provider sends after its error reaches the client.
      if (failure) break;
      const replaced = take(bytes.subarray(start, end));
      if (replaced !== undefined) {
        pieces.push(bytes.subarray(from, start), replaced);
        from = end;
      }
      start = end;
    }
    if (pieces.length === 0) return bytes.subarray(0, start);
    pieces.push(bytes.subarray(from, start));
    // Another wire format is all text, OpenAI's is the upstream's bytes with the events replaced.
    if (writer) return pieces.filter((p) => typeof p === 'string').join('');
    return Buffer.concat(pieces.map(bytesOf));
  };
  const readAll = () => {
    for (const item of unread.splice(0)) {
      const c = item instanceof Uint8Array ? parse(item) : item;
      if (c) acc.add(c);
    }
  };

  return {
    push(bytes) {
      const batch = frames.push(bytes);
      return relay(batch.bytes, batch.ends);
    },
    flush() {
      const rest = frames.flush();
      if (!rest) return '';
      return closedEvent(utf8(bytesOf(relay(rest, [rest.length]))));
    },
    end: () => '',
    get complete() {
      return done;
    },
    get failure() {
      return failure;
    },
    settled: () => done || usage || !!failure,
    checkedText() {
      readAll();
      return acc.checkedText();
    },
    errorEvent: (error) => (writer ?? OPENAI_WRITER).error(error),
    result() {
      readAll();
      return chatResult(acc);
    },
  };
}

/**
 * A provider's own stream (SSE or AWS event stream): each upstream event becomes zero or more OpenAI
 * chunks, written as soon as the event is complete, and `[DONE]` once the provider said it is.
 */
export function translatedChat(
  options: ChatStreamOptions & { translation: ChatTranslation; context: ChatContext },
): StreamFormat {
  const writer = options.writer ?? OPENAI_WRITER;
  const decoder = options.translation.decoder();
  const translator = options.translation.stream(options.context);
  const acc = new ChatStreamAccumulator();
  let ended = false;

  const write = (chunks: Json[]): string => {
    let out = '';
    for (const c of chunks) {
      acc.add(c);
      out += usageOnly(c) ? withCost(c, options) : writer.chunk(c);
    }
    return out;
  };
  // Read through a call: the failure changes as events are pushed.
  const failed = (): GatewayError | undefined => translator.failure;
  const translate = (events: ReturnType<typeof decoder.push>): string => {
    let out = '';
    for (const ev of events) {
      // Nothing the provider sends after its error reaches the client.
      if (failed()) break;
      out += write(translator.push(ev));
      const failure = failed();
      if (failure) out += writer.error(failure);
    }
    return out;
  };

  return {
    push: (bytes) => translate(decoder.push(bytes)),
    flush: () => translate(decoder.flush()),
    end() {
      ended = true;
      return write(translator.end()) + writer.end();
    },
    get complete() {
      return translator.complete;
    },
    get failure() {
      return translator.failure;
    },
    // The translators hand out the usage with the end of the message: asking for it early is harmless.
    settled: () => !!translator.failure || (translator.complete && translator.end().length > 0),
    checkedText: () => acc.checkedText(),
    errorEvent: (error) => writer.error(error),
    result() {
      // A stream the client left after the provider's end still has its usage read for the log.
      if (translator.complete && !ended) for (const c of translator.end()) acc.add(c);
      return chatResult(acc);
    },
  };
}
