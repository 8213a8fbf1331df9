import { afterEach, describe, expect, it } from 'vitest';
import { applyPricingFile, clearPricingOverrides, costOf, priceOf } from '../../functions/gateway/pricing';
import {
  AnthropicStream,
  fromAnthropicResponse,
  toAnthropicRequest,
} from '../../functions/providers/anthropic/chat-completions';
import { toChatRequest } from '../../functions/providers/anthropic/messages-ingress';
import { ConverseStream, toConverseRequest } from '../../functions/providers/bedrock/chat-completions';
import { AwsEventStreamDecoder } from '../../functions/providers/bedrock/event-stream';
import { bedrockModelId } from '../../functions/providers/bedrock/model-ids';
import {
  fromGeminiResponse,
  GeminiStream,
  geminiSchema,
  toGeminiRequest,
} from '../../functions/providers/google/chat-completions';
import { awsEvent } from '../support/fake-bedrock';

const sse = (type: string, data: Record<string, unknown>) => ({
  event: type,
  data: JSON.stringify({ type, ...data }),
});

describe('anthropic translation', () => {
  it('lifts system and developer messages, merges turns, defaults max_tokens, maps tool_choice', () => {
    const out = toAnthropicRequest(
      {
        messages: [
          { role: 'system', content: 'A' },
          { role: 'developer', content: [{ type: 'text', text: 'B' }] },
          { role: 'user', content: 'hi' },
          { role: 'user', content: 'again' },
        ],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: 'required',
        parallel_tool_calls: false,
        max_completion_tokens: 50,
      },
      'claude-haiku-4-5',
      false,
    );
    expect(out.system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ]);
    expect(out.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'text', text: 'again' },
        ],
      },
    ]);
    expect(out.max_tokens).toBe(50);
    expect(out.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(out.tools).toEqual([{ name: 'f', input_schema: { type: 'object', properties: {} } }]);
    expect(toAnthropicRequest({ messages: [{ role: 'user', content: 'x' }] }, 'm', true)).toMatchObject({
      max_tokens: 4096,
      stream: true,
    });
  });

  it('keeps thinking as reasoning_content and counts cached tokens in the prompt', () => {
    const out = fromAnthropicResponse(
      {
        id: 'msg_1',
        model: 'claude-sonnet-4-5',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'ok' },
        ],
        stop_reason: 'max_tokens',
        usage: {
          input_tokens: 5,
          cache_read_input_tokens: 7,
          cache_creation_input_tokens: 1,
          output_tokens: 3,
        },
      },
      'm',
    );
    expect(out.choices).toEqual([
      expect.objectContaining({
        finish_reason: 'length',
        message: expect.objectContaining({ content: 'ok', reasoning_content: 'hmm' }),
      }),
    ]);
    expect(out.usage).toMatchObject({
      prompt_tokens: 13,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 7 },
    });
  });

  it('streams thinking, text, tool input, finish and usage; ignores ping and unknown events', () => {
    const s = new AnthropicStream('m');
    const chunks = [
      sse('message_start', {
        message: { id: 'msg_9', model: 'claude', usage: { input_tokens: 4, output_tokens: 1 } },
      }),
      sse('ping', {}),
      sse('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      sse('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'why' } }),
      sse('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hi' } }),
      sse('content_block_start', {
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
      }),
      sse('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
      sse('something_new', {}),
      sse('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      sse('message_stop', {}),
    ].flatMap((e) => s.push(e));
    const deltas = chunks.map((c) => (c.choices as Array<{ delta: unknown; finish_reason: unknown }>)[0]);
    expect(deltas.map((d) => d?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'why' },
      { content: 'Hi' },
      { tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
      {},
    ]);
    expect(deltas[5]?.finish_reason).toBe('tool_calls');
    expect(chunks[0]?.id).toBe('msg_9');
    expect(s.complete).toBe(true);
    expect(s.end()[0]).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 9 } });
  });

  it('turns an error event into a provider failure with the matching status', () => {
    const s = new AnthropicStream('m');
    s.push(sse('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(s.failure).toMatchObject({ status: 529, message: 'Overloaded', origin: 'provider' });
    expect(s.push({ event: undefined, data: 'not json' })).toEqual([]);
  });
});

describe('bedrock translation', () => {
  it('builds Converse messages, images as bytes, tool config and inference config', () => {
    const out = toConverseRequest({
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      max_tokens: 10,
      stop: 'X',
    });
    expect(out).toEqual({
      system: [{ text: 'S' }],
      messages: [{ role: 'user', content: [{ image: { format: 'jpeg', source: { bytes: 'AAAA' } } }] }],
      inferenceConfig: { maxTokens: 10, stopSequences: ['X'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }],
        toolChoice: { tool: { name: 'f' } },
      },
    });
  });

  it('decodes event-stream frames cut at any byte, and translates them', () => {
    const bytes = Buffer.concat([
      awsEvent('messageStart', { role: 'assistant' }),
      awsEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
      awsEvent('messageStop', { stopReason: 'max_tokens' }),
      awsEvent('metadata', { usage: { inputTokens: 3, outputTokens: 2, cacheReadInputTokens: 1 } }),
    ]);
    const decoder = new AwsEventStreamDecoder();
    const events = [];
    for (let i = 0; i < bytes.length; i += 7) events.push(...decoder.push(bytes.subarray(i, i + 7)));
    expect(events.map((e) => e.event)).toEqual([
      'messageStart',
      'contentBlockDelta',
      'messageStop',
      'metadata',
    ]);
    const s = new ConverseStream('amazon.nova-lite-v1:0');
    const chunks = events.flatMap((e) => s.push(e));
    expect(chunks.map((c) => (c.choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason)).toEqual([
      null,
      null,
      'length',
    ]);
    expect(s.end()[0]).toMatchObject({
      usage: { prompt_tokens: 4, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 } },
    });
  });

  it('maps stream exceptions to their HTTP status', () => {
    const s = new ConverseStream('m');
    s.push({ event: 'validationException', data: '{"message":"bad"}', exception: true });
    expect(s.failure).toMatchObject({
      status: 400,
      message: 'bad',
      code: 'validationException',
      origin: 'provider',
    });
  });
});

describe('gemini translation', () => {
  it('maps roles, tool results by the name of their call, response_format and tool_choice', () => {
    const out = toGeminiRequest({
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'plain text' },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'r', schema: { type: 'object', additionalProperties: false } },
      },
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    expect(out.contents).toEqual([
      { role: 'user', parts: [{ text: 'q' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'f', args: { x: 1 } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: 'plain text' } } }] },
    ]);
    expect(out.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'object' },
    });
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
    expect(geminiSchema({ $schema: 'x', properties: { a: { additionalProperties: true } } })).toEqual({
      properties: { a: {} },
    });
  });

  it('synthesises stable tool call ids and reports tool_calls, thoughts and usage', () => {
    const reply = {
      responseId: 'r1',
      candidates: [
        {
          content: { parts: [{ text: 'think', thought: true }, { functionCall: { name: 'f', args: {} } }] },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 2,
        thoughtsTokenCount: 3,
        cachedContentTokenCount: 4,
      },
    };
    const a = fromGeminiResponse(reply, 'gemini-2.5-flash');
    const b = fromGeminiResponse(reply, 'gemini-2.5-flash');
    const message = (
      a.choices as Array<{ message: { tool_calls: Array<{ id: string }> }; finish_reason: string }>
    )[0];
    expect(message?.finish_reason).toBe('tool_calls');
    expect(message?.message.tool_calls[0]?.id).toBe(
      (b.choices as Array<{ message: { tool_calls: Array<{ id: string }> } }>)[0]?.message.tool_calls[0]?.id,
    );
    expect(a.usage).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 5,
      completion_tokens_details: { reasoning_tokens: 3 },
    });
  });

  it('survives events with no candidates and reports an in-stream error', () => {
    const s = new GeminiStream('g');
    expect(s.push({ event: undefined, data: '{"usageMetadata":{"promptTokenCount":1}}' })).toHaveLength(1);
    expect(s.push({ event: undefined, data: '{"candidates":[]}' })).toEqual([]);
    s.push({
      event: undefined,
      data: '{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}',
    });
    expect(s.failure).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
  });
});

describe('pricing overrides', () => {
  afterEach(() => clearPricingOverrides());

  it('reads LiteLLM entries, strips provider prefixes, and wins over built-in prices', () => {
    const n = applyPricingFile({
      sample_spec: { input_cost_per_token: 'x' },
      'groq/llama-3.3-70b-versatile': {
        input_cost_per_token: 1e-6,
        output_cost_per_token: 2e-6,
        litellm_provider: 'groq',
      },
      'claude-haiku-4-5': {
        input_cost_per_token: 2e-6,
        output_cost_per_token: 4e-6,
        cache_read_input_token_cost: 1e-7,
        litellm_provider: 'anthropic',
      },
    });
    expect(n).toBe(2);
    expect(priceOf('groq', 'llama-3.3-70b-versatile')).toEqual({ input: 1, output: 2 });
    expect(
      costOf('anthropic', 'claude-haiku-4-5-20251001', {
        prompt_tokens: 10,
        completion_tokens: 1,
        total_tokens: 11,
        cached_tokens: 5,
      }),
    ).toBeCloseTo((5 * 2 + 5 * 0.1 + 4) / 1e6, 12);
  });

  it('prices Bedrock cross-region profiles by their model id', () => {
    expect(priceOf('bedrock', 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0')).toMatchObject({ input: 3 });
    expect(priceOf('ollama', 'llama3.2')).toBeUndefined();
  });
});

describe('Claude on Bedrock and thinking budgets', () => {
  it("maps Anthropic's names to the region's inference profile, and passes other ids through", () => {
    expect(bedrockModelId('claude-sonnet-4-5', 'us-west-2')).toBe(
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    );
    expect(bedrockModelId('claude-3-5-haiku-20241022', 'eu-central-1')).toBe(
      'eu.anthropic.claude-3-5-haiku-20241022-v1:0',
    );
    expect(bedrockModelId('claude-3-5-sonnet-20240620', 'ap-northeast-1')).toBe(
      'apac.anthropic.claude-3-5-sonnet-20240620-v1:0',
    );
    expect(bedrockModelId('claude-haiku-4-5-latest', 'us-gov-west-1')).toBe(
      'us-gov.anthropic.claude-haiku-4-5-20251001-v1:0',
    );
    expect(bedrockModelId('claude-opus-4-1', 'sa-east-1')).toBe('anthropic.claude-opus-4-1-20250805-v1:0');
    for (const id of [
      'eu.amazon.nova-pro-v1:0',
      'anthropic.claude-3-haiku-20240307-v1:0',
      'claude-unknown-9',
    ])
      expect(bedrockModelId(id, 'us-east-1')).toBe(id);
  });

  it('gives reasoning_effort a thinking budget on Claude only, bounded by the output limit', () => {
    const claude = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const ask = { messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'medium' };
    expect(toConverseRequest(ask, claude)).toMatchObject({
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 8192 } },
      inferenceConfig: { maxTokens: 8192 + 4096 },
    });
    expect(
      toConverseRequest({ ...ask, max_tokens: 900 }, claude).additionalModelRequestFields,
    ).toBeUndefined();
    expect(toConverseRequest(ask, 'amazon.nova-pro-v1:0').additionalModelRequestFields).toBeUndefined();
    expect(toAnthropicRequest({ ...ask, max_tokens: 3000 }, 'claude', false)).toMatchObject({
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 2999 },
    });
    expect(toGeminiRequest({ ...ask, reasoning_effort: 'minimal' }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it("gives Gemini the Messages ingress's thinking budget", () => {
    const { chat } = toChatRequest({
      model: 'gemini-2.5-pro',
      max_tokens: 5000,
      thinking: { type: 'enabled', budget_tokens: 3000 },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(toGeminiRequest(chat).generationConfig).toEqual({
      maxOutputTokens: 5000,
      thinkingConfig: { thinkingBudget: 3000, includeThoughts: true },
    });
  });

  it('streams Converse reasoning as reasoning_content, then its signature and redacted blocks', () => {
    const t = new ConverseStream('m');
    const deltas = [
      awsEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Hm.' } } }),
      awsEvent('contentBlockDelta', {
        contentBlockIndex: 0,
        delta: { reasoningContent: { signature: 'sig' } },
      }),
      awsEvent('contentBlockDelta', {
        contentBlockIndex: 1,
        delta: { reasoningContent: { redactedContent: 'eA==' } },
      }),
    ];
    const decoder = new AwsEventStreamDecoder();
    const chunks = deltas.flatMap((bytes) => decoder.push(bytes)).flatMap((ev) => t.push(ev));
    expect(chunks.map((c) => (c.choices as Array<{ delta: unknown }>)[0]?.delta)).toEqual([
      { reasoning_content: 'Hm.' },
      { thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig' }] },
      { thinking_blocks: [{ type: 'redacted_thinking', data: 'eA==' }] },
    ]);
  });
});
