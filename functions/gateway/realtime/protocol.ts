import { newId } from '../../core/ids';

// The realtime wire contract of the gateway: close codes, the subprotocols a browser uses to carry what
// other clients send as headers, `error` events, and API Gateway's message size limit.

export const CLOSE_CODES = {
  normal: 1000,
  /** API Gateway's code for a binary frame, which it does not accept. */
  unsupportedData: 1003,
  /** API Gateway's code for a message over its size limit. */
  messageTooBig: 1009,
  upstreamError: 1011,
  sessionLimit: 4000,
  budgetExhausted: 4001,
} as const;

/** API Gateway's limit for one WebSocket message, either way; frames of 32 KB are reassembled up to it. */
export const MAX_MESSAGE_BYTES = 128 * 1024;

/** The subprotocol the gateway selects; the OpenAI SDKs and browsers offer it first. */
export const REALTIME_SUBPROTOCOL = 'realtime';

// Subprotocols carrying a value, as `<prefix><value>`, and the request header each one stands for.
// `openai-insecure-api-key.` is what OpenAI's own browser clients send: it reads like `Authorization:
// Bearer`, so the gateway key when no `gateway-key.` is given, the provider's key otherwise.
const VALUE_PROTOCOLS: ReadonlyArray<{ prefix: string; header: string; value?: (v: string) => string }> = [
  { prefix: 'gateway-key.', header: 'x-gateway-api-key' },
  { prefix: 'openai-insecure-api-key.', header: 'authorization', value: (v) => `Bearer ${v}` },
  { prefix: 'gateway-provider.', header: 'x-gateway-provider' },
  { prefix: 'gateway-virtual-key.', header: 'x-gateway-virtual-key' },
  { prefix: 'gateway-config.', header: 'x-gateway-config' },
  { prefix: 'gateway-trace-id.', header: 'x-gateway-trace-id' },
];
const BETA_PROTOCOL = 'openai-beta.realtime-v1';

export interface SubprotocolOffer {
  /** Headers the offered subprotocols stand for. */
  headers: Record<string, string>;
  /** What to answer in `Sec-WebSocket-Protocol`: never a protocol that carries a value. */
  selected: string | undefined;
}

/** Reads `Sec-WebSocket-Protocol` (a comma-separated list of tokens). */
export function parseSubprotocols(header: string | undefined): SubprotocolOffer {
  const offered = (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const headers: Record<string, string> = {};
  for (const protocol of offered) {
    if (protocol === BETA_PROTOCOL) {
      headers['openai-beta'] = 'realtime=v1';
      continue;
    }
    const known = VALUE_PROTOCOLS.find((p) => protocol.startsWith(p.prefix));
    if (!known) continue;
    const value = protocol.slice(known.prefix.length);
    if (value === '' || headers[known.header] !== undefined) continue;
    headers[known.header] = known.value ? known.value(value) : value;
  }
  return { headers, selected: offered.includes(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : undefined };
}

/**
 * The request's headers with what its subprotocols carry. A real header wins over a subprotocol, so a
 * server-side client that sends both gets exactly what its headers say.
 */
export function withSubprotocolHeaders(headers: Record<string, string>): {
  headers: Record<string, string>;
  selected: string | undefined;
} {
  const offer = parseSubprotocols(headers['sec-websocket-protocol']);
  const merged = { ...headers };
  for (const [name, value] of Object.entries(offer.headers)) {
    if (merged[name] === undefined) merged[name] = value;
  }
  delete merged['sec-websocket-protocol'];
  return { headers: merged, selected: offer.selected };
}

// Query parameters under which people try to pass a key; named in the 401 so the fix is obvious.
const KEY_PARAMS = ['api_key', 'api-key', 'apikey', 'key', 'x-gateway-api-key', 'gateway_key', 'token'];

export function keyInQuery(query: Record<string, string | undefined>): string | undefined {
  return Object.keys(query).find((k) => KEY_PARAMS.includes(k.toLowerCase()));
}

/** An OpenAI realtime `error` event. */
export function errorEvent(type: string, code: string, message: string, param: string | null = null): string {
  return JSON.stringify({
    type: 'error',
    event_id: `event_gw_${newId()}`,
    error: { type, code, message, param, event_id: null },
  });
}

export const byteLength = (data: string | Uint8Array) =>
  typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;

export function exceedsMessageLimit(data: string | Uint8Array, limit = MAX_MESSAGE_BYTES): boolean {
  return byteLength(data) > limit;
}

// Events whose `delta` is base64 audio: deltas add up, so one large event can be sent as several.
const AUDIO_DELTAS = new Set(['response.output_audio.delta', 'response.audio.delta']);

/**
 * An upstream event as messages the client can receive (each at most `limit` bytes): itself when it fits,
 * an audio delta cut into several deltas of the same item, or undefined when it cannot be cut losslessly.
 */
export function splitForClient(text: string, limit = MAX_MESSAGE_BYTES): string[] | undefined {
  if (Buffer.byteLength(text) <= limit) return [text];
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const delta = event.delta;
  if (!AUDIO_DELTAS.has(String(event.type)) || typeof delta !== 'string') return undefined;
  const overhead = Buffer.byteLength(JSON.stringify({ ...event, delta: '' }));
  // Whole base64 quanta (4 characters, 3 bytes) per piece, so every piece decodes on its own.
  const room = Math.floor((limit - overhead) / 4) * 4;
  if (room <= 0) return undefined;
  const pieces: string[] = [];
  for (let at = 0; at < delta.length; at += room) {
    pieces.push(JSON.stringify({ ...event, delta: delta.slice(at, at + room) }));
  }
  return pieces;
}
