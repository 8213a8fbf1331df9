import { describe, expect, it } from 'vitest';
import {
  chatToResponse,
  ResponsesEventWriter,
  responsesToChat,
} from '../../functions/providers/shared/responses-chat';

const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter(Boolean)
    .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));

describe('responsesToChat', () => {
  it('maps instructions, messages, function calls and outputs, tools and parameters', () => {
    expect(
      responsesToChat(
        {
          model: 'm',
          instructions: 'Be brief.',
          max_output_tokens: 50,
          temperature: 0.1,
          parallel_tool_calls: false,
          stream: true,
          tool_choice: { type: 'function', name: 'f' },
          text: { format: { type: 'json_schema', name: 's', schema: { type: 'object' }, strict: true } },
          tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
          input: [
            { role: 'developer', content: 'Dev.' },
            {
              type: 'message',
              role: 'user',
              content: [
                { type: 'input_text', text: 'Hi' },
                { type: 'input_image', image_url: 'https://x/y.png' },
              ],
            },
            { type: 'reasoning', id: 'rs_1', summary: [] },
            { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
            { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{"a":1}' },
            { type: 'function_call_output', call_id: 'c1', output: 'one' },
            { type: 'function_call_output', call_id: 'c2', output: 'two' },
          ],
        },
        'google',
      ),
    ).toEqual({
      model: 'm',
      max_tokens: 50,
      temperature: 0.1,
      parallel_tool_calls: false,
      stream: true,
      stream_options: { include_usage: true },
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: {
        type: 'json_schema',
        json_schema: { name: 's', schema: { type: 'object' }, strict: true },
      },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: false } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Dev.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'tool', tool_call_id: 'c2', content: 'two' },
      ],
    });
  });

  it.each([
    [{ tools: [{ type: 'file_search', vector_store_ids: ['vs'] }] }, 'file_search'],
    [{ tools: [{ type: 'mcp', server_label: 'x' }] }, 'mcp'],
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'item_reference'],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input_file'],
  ])('refuses %j with a 400 naming %s and the provider', (extra, name) => {
    expect(() => responsesToChat({ model: 'm', input: 'x', ...extra }, 'bedrock')).toThrow(
      expect.objectContaining({
        status: 400,
        message: expect.stringMatching(new RegExp(`${name}.*bedrock|bedrock.*${name}`)),
      }),
    );
  });
});

describe('chatToResponse', () => {
  it('turns a completion into a Response with items, status and usage', () => {
    const r = chatToResponse(
      {
        model: 'g',
        created: 5,
        choices: [
          {
            message: { content: 'Hi', tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }] },
            finish_reason: 'length',
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 } },
      },
      { model: 'm', input: 'x' },
    );
    expect(r).toMatchObject({
      object: 'response',
      created_at: 5,
      model: 'g',
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: {
        input_tokens: 3,
        output_tokens: 2,
        total_tokens: 5,
        input_tokens_details: { cached_tokens: 1 },
      },
    });
    expect(r.output).toMatchObject([
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
      },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}', status: 'completed' },
    ]);
  });
});

describe('ResponsesEventWriter', () => {
  const c = (delta: Record<string, unknown>, finish: string | null = null) => ({
    model: 'g',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it('writes numbered events: text, then a function call, then response.completed with usage', () => {
    const w = new ResponsesEventWriter({ model: 'm', input: 'x' });
    let out = w.chunk(c({ role: 'assistant', content: '' }));
    out += w.chunk(c({ content: 'He' })) + w.chunk(c({ content: 'y' }));
    out += w.chunk(c({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a"' } }] }));
    out += w.chunk(c({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }));
    out += w.chunk(c({}, 'tool_calls'));
    out += w.chunk({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 6 } });
    out += w.end();
    const list = events(out);
    expect(list.map((e) => e.sequence_number)).toEqual(list.map((_, i) => i));
    expect(list.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[6]).toMatchObject({ text: 'Hey', output_index: 0 });
    expect(list[12]).toMatchObject({ arguments: '{"a":1}', output_index: 1 });
    const done = list[14].response;
    expect(done).toMatchObject({
      status: 'completed',
      model: 'g',
      usage: { input_tokens: 4, output_tokens: 6 },
    });
    expect(done.output.map((o: { type: string }) => o.type)).toEqual(['message', 'function_call']);
  });

  it('numbers an error event after the last event', () => {
    const w = new ResponsesEventWriter({ model: 'm' });
    const first = events(w.chunk(c({ content: 'a' })));
    const error = events(w.error('stream_truncated', 'cut'))[0];
    expect(error).toEqual({
      type: 'error',
      sequence_number: first.length,
      code: 'stream_truncated',
      message: 'cut',
      param: null,
    });
  });
});
