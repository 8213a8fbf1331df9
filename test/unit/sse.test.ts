import { describe, expect, it } from 'vitest';
import { SseParser, sseErrorEvent } from '../../functions/core/sse';

describe('SseParser', () => {
  it('splits events across arbitrary chunk boundaries, keeping raw text', () => {
    const parser = new SseParser();
    const text = 'data: {"a":1}\n\nevent: ping\ndata: x\n\ndata: [DONE]\n\n';
    const events = [];
    for (const piece of text.match(/.{1,3}/gs) ?? []) events.push(...parser.push(Buffer.from(piece)));
    expect(events.map((e) => e.data)).toEqual(['{"a":1}', 'x', '[DONE]']);
    expect(events[1]?.event).toBe('ping');
    expect(events.map((e) => e.raw).join('')).toBe(text);
    expect(parser.flush()).toBeUndefined();
  });

  it('handles CRLF and CR framing, comments, multi-line data and a missing space after the colon', () => {
    const parser = new SseParser();
    const events = parser.push(': comment\r\n\r\ndata:one\r\ndata: two\r\n\r\ndata: three\r\r');
    expect(events.map((e) => e.data)).toEqual([undefined, 'one\ntwo', 'three']);
  });

  it('decodes UTF-8 split inside a character', () => {
    const parser = new SseParser();
    const bytes = Buffer.from('data: héllo 🌍\n\n');
    const events = [
      ...parser.push(bytes.subarray(0, 8)),
      ...parser.push(bytes.subarray(8, 15)),
      ...parser.push(bytes.subarray(15)),
    ];
    expect(events[0]?.data).toBe('héllo 🌍');
  });

  it('returns an unterminated last event on flush', () => {
    const parser = new SseParser();
    expect(parser.push('data: tail')).toEqual([]);
    expect(parser.flush()?.data).toBe('tail');
  });

  it('formats an error event the OpenAI SDK raises', () => {
    expect(sseErrorEvent({ error: { message: 'm' } })).toBe(
      'event: error\ndata: {"error":{"message":"m"}}\n\n',
    );
  });
});
