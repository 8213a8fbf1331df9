import type { ProviderEvent, StreamDecoder } from '../types';

// The `application/vnd.amazon.eventstream` framing of ConverseStream: binary messages, each with a
// 4-byte total length prefix, headers (`:message-type`, `:event-type`, `:exception-type`) and a JSON body.
// Decoded here in a few lines: the SDK's codec brought 16 KB of event-stream serde into every bundle.

const decoder = new TextDecoder();
const text = (bytes: Uint8Array) => decoder.decode(bytes);

// Far above any real event; a larger length prefix means the stream is not what we think it is.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

// Value sizes of the fixed-length header types, by type byte (0 and 1 are booleans with no value bytes).
const FIXED_SIZES: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };
const BYTES = 6;
const STRING = 7;

// CRC-32 (IEEE), the checksum of the prelude and of each message. Computed here: loading node:zlib for it
// would cost every cold start a few milliseconds; the table is built with the first message.
let crcTable: Uint32Array | undefined;

function crc32(bytes: Uint8Array): number {
  crcTable ??= Uint32Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function malformed(why: string): Error {
  return new Error(`malformed event stream message: ${why}`);
}

/** One whole message: prelude (total length, headers length, CRC), headers, body, message CRC. */
function decodeMessage(bytes: Uint8Array): { headers: Map<string, string>; body: Uint8Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const total = bytes.length;
  const end = 12 + view.getUint32(4, false);
  if (end > total - 4) throw malformed('headers longer than the message');
  if (view.getUint32(8, false) !== crc32(bytes.subarray(0, 8))) throw malformed('prelude checksum mismatch');
  if (view.getUint32(total - 4, false) !== crc32(bytes.subarray(0, total - 4)))
    throw malformed('message checksum mismatch');
  const headers = new Map<string, string>();
  let at = 12;
  while (at < end) {
    const nameLength = bytes[at] as number;
    const name = text(bytes.subarray(at + 1, at + 1 + nameLength));
    at += 1 + nameLength;
    const type = bytes[at++] as number;
    if (type === BYTES || type === STRING) {
      const length = view.getUint16(at, false);
      if (type === STRING) headers.set(name, text(bytes.subarray(at + 2, at + 2 + length)));
      at += 2 + length;
    } else {
      const size = FIXED_SIZES[type];
      if (size === undefined) throw malformed(`unknown header type ${type}`);
      at += size;
    }
  }
  if (at !== end) throw malformed('headers overrun their length');
  return { headers, body: bytes.subarray(end, total - 4) };
}

export class AwsEventStreamDecoder implements StreamDecoder {
  private buffer: Uint8Array = new Uint8Array(0);

  push(bytes: Uint8Array): ProviderEvent[] {
    this.buffer = this.buffer.length === 0 ? bytes : concat(this.buffer, bytes);
    const events: ProviderEvent[] = [];
    while (this.buffer.length >= 4) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
      const length = view.getUint32(0, false);
      if (length < 16 || length > MAX_MESSAGE_BYTES) throw new Error('malformed event stream message');
      if (this.buffer.length < length) break;
      const message = decodeMessage(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
      const header = (name: string) => message.headers.get(name);
      const kind = header(':message-type');
      const data = text(message.body);
      if (kind === 'event') events.push({ event: header(':event-type'), data });
      else if (kind === 'exception') events.push({ event: header(':exception-type'), data, exception: true });
      else if (kind === 'error') {
        events.push({
          event: header(':error-code'),
          data: JSON.stringify({ message: header(':error-message') ?? data }),
          exception: true,
        });
      }
    }
    return events;
  }

  flush(): ProviderEvent[] {
    // A partial message at the end is a cut stream; the translator's `complete` flag says so.
    this.buffer = new Uint8Array(0);
    return [];
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
