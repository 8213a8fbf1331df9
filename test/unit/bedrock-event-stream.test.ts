import { EventStreamCodec, Int64 } from '@smithy/core/event-streams';
import { describe, expect, it } from 'vitest';
import { AwsEventStreamDecoder } from '../../functions/providers/bedrock/event-stream';

// The ConverseStream decoder reads AWS's binary framing itself; the SDK's codec encodes the messages here.

const codec = new EventStreamCodec(
  (b) => new TextDecoder().decode(b),
  (s) => new TextEncoder().encode(s),
);

function message(headers: Parameters<typeof codec.encode>[0]['headers'], body: string): Uint8Array {
  return codec.encode({ headers, body: new TextEncoder().encode(body) });
}

describe('the Bedrock event-stream decoder', () => {
  it('reads string headers past headers of every other type, across split chunks', () => {
    const bytes = message(
      {
        ':message-type': { type: 'string', value: 'event' },
        flag: { type: 'boolean', value: true },
        off: { type: 'boolean', value: false },
        byte: { type: 'byte', value: 7 },
        short: { type: 'short', value: 300 },
        int: { type: 'integer', value: 70_000 },
        long: { type: 'long', value: Int64.fromNumber(2 ** 40) },
        blob: { type: 'binary', value: new Uint8Array([1, 2, 3]) },
        at: { type: 'timestamp', value: new Date(0) },
        id: { type: 'uuid', value: '6f1c3e2a-3b4c-4d5e-8f90-a1b2c3d4e5f6' },
        ':event-type': { type: 'string', value: 'contentBlockDelta' },
      },
      '{"delta":{"text":"hi"}}',
    );
    const decoder = new AwsEventStreamDecoder();
    const cut = 20;
    expect(decoder.push(bytes.subarray(0, cut))).toEqual([]);
    expect(decoder.push(bytes.subarray(cut))).toEqual([
      { event: 'contentBlockDelta', data: '{"delta":{"text":"hi"}}' },
    ]);
  });

  it('refuses a message whose checksum does not match', () => {
    const bytes = message(
      { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: 'x' } },
      '{"a":1}',
    );
    const corrupt = bytes.slice();
    corrupt.set([(corrupt.at(-6) as number) ^ 0xff], corrupt.length - 6);
    expect(() => new AwsEventStreamDecoder().push(corrupt)).toThrow(/checksum/);
    const prelude = bytes.slice();
    prelude.set([(prelude[9] as number) ^ 0xff], 9);
    expect(() => new AwsEventStreamDecoder().push(prelude)).toThrow(/checksum/);
  });
});
