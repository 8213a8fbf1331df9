import { describe, expect, it } from 'vitest';
import { ChatStreamAccumulator } from '../../functions/gateway/chat-stream-accumulator';

describe('ChatStreamAccumulator', () => {
  it('joins content per choice, keeps finish reasons and the usage chunk', () => {
    const acc = new ChatStreamAccumulator();
    acc.add({
      id: 'c',
      model: 'm',
      created: 1,
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }],
    });
    acc.add({
      choices: [
        { index: 1, delta: { content: 'B' } },
        { index: 0, delta: { content: 'lo' } },
      ],
    });
    acc.add({
      choices: [
        { index: 0, delta: {}, finish_reason: 'stop' },
        { index: 1, delta: {}, finish_reason: 'length' },
      ],
    });
    acc.add({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });
    expect(acc.result()).toMatchObject({
      id: 'c',
      model: 'm',
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' },
        { index: 1, message: { content: 'B' }, finish_reason: 'length' },
      ],
      usage: { total_tokens: 3 },
    });
  });

  it('assembles parallel tool calls by index', () => {
    const acc = new ChatStreamAccumulator();
    acc.add({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x"' } }],
          },
        },
      ],
    });
    acc.add({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }],
          },
        },
      ],
    });
    acc.add({
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }],
    });
    const message = (acc.result().choices as Array<{ message: { tool_calls: unknown } }>)[0]?.message;
    expect(message?.tool_calls).toEqual([
      { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
      { id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } },
    ]);
  });

  it('never throws on odd chunks', () => {
    const acc = new ChatStreamAccumulator();
    for (const odd of [
      {},
      { choices: null },
      { choices: [null, 5, { delta: null }] },
      { choices: [{ delta: { tool_calls: [null] } }] },
    ]) {
      expect(() => acc.add(odd as Record<string, unknown>)).not.toThrow();
    }
    expect(acc.result().usage).toBeNull();
  });
});
