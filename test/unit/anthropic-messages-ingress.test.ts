import { describe, expect, it } from 'vitest';
import {
  AnthropicEventWriter,
  anthropicErrorBody,
  estimateInputTokens,
  stopReasonOf,
  toAnthropicMessage,
  toChatRequest,
  validateMessagesRequest,
} from '../../functions/providers/anthropic/messages-ingress';
import { type Json, messageExtras, requestExtras } from '../../functions/providers/shared/openai-shapes';

const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter(Boolean)
    .map((e) => {
      const [event, data] = e.split('\n');
      return { event: event?.slice('event: '.length), data: JSON.parse(data?.slice('data: '.length) ?? '') };
    });

describe('toChatRequest', () => {
  it('maps system blocks, turns, tools, tool choice and parameters to the chat shape', () => {
    const { chat, unsupported } = toChatRequest({
      model: 'm',
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      stream: true,
      metadata: { user_id: 'u1' },
      system: [
        { type: 'text', text: 'One.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Two.' },
      ],
      thinking: { type: 'enabled', budget_tokens: 2000 },
      tools: [{ name: 'f', description: 'F', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
            { type: 'text', text: 'Look.' },
          ],
        },
      ],
    });
    expect(unsupported).toBeUndefined();
    // What goes on the wire: thinking and cache_control ride along as extras only Bedrock and Gemini read.
    expect(requestExtras(chat)).toEqual({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    const messages = chat.messages as Json[];
    expect(messages.map((m) => messageExtras(m))).toEqual([
      { cache: true },
      undefined,
      { thinking: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }] },
      undefined,
      undefined,
    ]);
    expect(JSON.parse(JSON.stringify(chat))).toEqual({
      model: 'm',
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
      user: 'u1',
      tools: [
        {
          type: 'function',
          function: { name: 'f', description: 'F', parameters: { type: 'object', properties: {} } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      messages: [
        { role: 'system', content: 'One.\n\nTwo.' },
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: 'Calling.',
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 't1', content: 'Error: boom' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
            { type: 'text', text: 'Look.' },
          ],
        },
      ],
    });
  });

  it.each([
    ['auto', 'auto'],
    ['any', 'required'],
    ['none', 'none'],
  ])('tool_choice %s is %s', (type, expected) => {
    const { chat } = toChatRequest({ model: 'm', messages: [], tool_choice: { type } });
    expect(chat.tool_choice).toBe(expected);
  });

  it('names what only Anthropic can take: server tools, documents, file images', () => {
    expect(
      toChatRequest({
        model: 'm',
        messages: [],
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      }).unsupported?.message,
    ).toContain('"web_search" (web_search_20250305)');
    expect(
      toChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'x' } }] }],
      }).unsupported,
    ).toMatchObject({ param: 'messages.0.content.0' });
    expect(
      toChatRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }],
      }).unsupported?.message,
    ).toContain('source type "file"');
  });
});

describe('validateMessagesRequest', () => {
  it('asks for model, max_tokens (not to count) and user/assistant messages', () => {
    expect(() => validateMessagesRequest({ messages: [] }, true)).toThrow('model');
    expect(() => validateMessagesRequest({ model: 'm', messages: [] }, true)).toThrow('max_tokens');
    expect(() => validateMessagesRequest({ model: 'm', messages: [] }, false)).not.toThrow();
    expect(() =>
      validateMessagesRequest({ model: 'm', messages: [{ role: 'system', content: 'x' }] }, false),
    ).toThrow("messages.0.role: Input should be 'user' or 'assistant'");
  });
});

describe('toAnthropicMessage', () => {
  it('turns a chat completion into a Message with thinking, text, tool use, stop reason and usage', () => {
    const message = toAnthropicMessage(
      {
        id: 'chatcmpl-abc',
        model: 'gpt-x',
        choices: [
          {
            message: {
              role: 'assistant',
              content: 'Sure.',
              reasoning_content: 'Think.',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 10 } },
      },
      'asked',
    );
    expect(message).toEqual({
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [
        { type: 'thinking', thinking: 'Think.', signature: '' },
        { type: 'text', text: 'Sure.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 10,
      },
    });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ])('finish reason %s is stop reason %s', (finish, stop) => {
    expect(stopReasonOf(finish)).toBe(stop);
  });
});

describe('AnthropicEventWriter', () => {
  const c = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: 'chatcmpl-1',
    model: 'gpt-x',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it("writes Anthropic's event sequence: thinking, text and a tool call, with usage at the end", () => {
    const w = new AnthropicEventWriter('asked');
    let out = w.chunk(c({ role: 'assistant', content: '' }));
    out += w.chunk(c({ reasoning_content: 'Hmm' }));
    out += w.chunk(c({ content: 'Hel' }));
    out += w.chunk(c({ content: 'lo' }));
    out += w.chunk(c({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '' } }] }));
    out += w.chunk(c({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }));
    out += w.chunk(c({}, 'tool_calls'));
    out += w.chunk({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } });
    out += w.finish();
    const list = events(out);
    expect(list.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of list) expect(e.data.type).toBe(e.event);
    expect(list[0]?.data.message).toMatchObject({
      id: 'msg_1',
      model: 'gpt-x',
      role: 'assistant',
      content: [],
    });
    expect(list[2]?.data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    expect(list[7]?.data).toEqual({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'text_delta', text: 'lo' },
    });
    expect(list[9]?.data).toEqual({
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
    });
    expect(list[10]?.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"a":1}' });
    expect(list[12]?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: {
        input_tokens: 9,
        output_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('opens a block per parallel tool call and finishes an empty stream properly', () => {
    const w = new AnthropicEventWriter('m');
    const out =
      w.chunk(c({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }] })) +
      w.chunk(c({ tool_calls: [{ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }] }));
    const starts = events(out).filter((e) => e.event === 'content_block_start');
    expect(starts.map((e) => e.data.index)).toEqual([0, 1]);
    expect(events(new AnthropicEventWriter('m').finish()).map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'message_delta',
      'message_stop',
    ]);
  });
});

describe('errors and estimates', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [412, 'billing_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [446, 'invalid_request_error'],
    [500, 'api_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('status %i is an Anthropic %s', (status, type) => {
    expect(anthropicErrorBody(status, 'm')).toEqual({ type: 'error', error: { type, message: 'm' } });
  });

  it('estimates about four characters a token, and 1,600 an image', () => {
    expect(
      estimateInputTokens({ system: 'x'.repeat(40), messages: [{ role: 'user', content: 'y'.repeat(40) }] }),
    ).toBe(21);
    expect(
      estimateInputTokens({
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'z'.repeat(9999) } }] },
        ],
      }),
    ).toBe(1601);
  });
});
