import { EventStreamCodec } from '@smithy/core/event-streams';
import type { ProviderEvent, StreamDecoder } from '../types';

// The `application/vnd.amazon.eventstream` framing of ConverseStream: binary messages, each with a
// 4-byte total length prefix, headers (`:message-type`, `:event-type`, `:exception-type`) and a JSON body.

const decoder = new TextDecoder();
const encoder = new TextEncoder();
export const utf8 = {
  toUtf8: (bytes: Uint8Array) => decoder.decode(bytes),
  fromUtf8: (text: string) => encoder.encode(text),
};

// Far above any real event; a larger length prefix means the stream is not what we think it is.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export class AwsEventStreamDecoder implements StreamDecoder {
  private readonly codec = new EventStreamCodec(utf8.toUtf8, utf8.fromUtf8);
  private buffer: Uint8Array = new Uint8Array(0);

  push(bytes: Uint8Array): ProviderEvent[] {
    this.buffer = this.buffer.length === 0 ? bytes : concat(this.buffer, bytes);
    const events: ProviderEvent[] = [];
    while (this.buffer.length >= 4) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
      const length = view.getUint32(0, false);
      if (length < 16 || length > MAX_MESSAGE_BYTES) throw new Error('malformed event stream message');
      if (this.buffer.length < length) break;
      const message = this.codec.decode(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
      const header = (name: string) => {
        const h = message.headers[name];
        return h && typeof h.value === 'string' ? h.value : undefined;
      };
      const kind = header(':message-type');
      const data = utf8.toUtf8(message.body);
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
