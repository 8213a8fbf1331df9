import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { openEventStream, streamMessages } from '../support/fake-bedrock';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';
import { AWS_KEYS, PROVIDER_FAKES } from '../support/provider-fakes';

// Claude on Bedrock through the real server: Anthropic's model names, thinking and prompt caching as
// Converse takes them, driven by `@anthropic-ai/sdk` and `openai` against the fake Bedrock Runtime.

const fakes = useGateway(PROVIDER_FAKES);
const { gw } = fakes;

const config = (region: string) =>
  JSON.stringify({ provider: 'bedrock', api_key: AWS_KEYS, custom_host: fakes.bedrock.url, region });

const claude = (region = 'eu-west-1') =>
  new Anthropic({
    baseURL: gw.url.replace(/\/v1$/, ''),
    authToken: ADMIN_KEY,
    apiKey: null,
    defaultHeaders: { 'x-gateway-config': config(region) },
    maxRetries: 0,
  });

const pathModel = (i = 0) =>
  decodeURIComponent(/\/model\/([^/]+)\//.exec(fakes.bedrock.requests[i]?.path ?? '')?.[1] ?? '');

describe("Anthropic's model names on Bedrock", () => {
  it('maps a name to the inference profile of the region, streamed and not, and prices it', async () => {
    const ask = {
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user' as const, content: 'Hi' }],
    };
    const { data, response } = await claude('eu-west-1').messages.create(ask).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect(pathModel(0)).toBe('eu.anthropic.claude-sonnet-4-5-20250929-v1:0');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.cost).toBeGreaterThan(0);

    const streamed = await claude('ap-southeast-2')
      .messages.stream({ ...ask, model: 'claude-opus-4-1-20250805' })
      .finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect(pathModel(1)).toBe('apac.anthropic.claude-opus-4-1-20250805-v1:0');
  });

  it('maps dated names on the chat route too, and passes Bedrock ids through as given', async () => {
    const client = gw.client({ headers: { 'x-gateway-config': config('us-east-1') } });
    await client.chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(pathModel(0)).toBe('us.anthropic.claude-3-5-haiku-20241022-v1:0');
    await client.chat.completions.create({
      model: 'anthropic.claude-3-haiku-20240307-v1:0',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(pathModel(1)).toBe('anthropic.claude-3-haiku-20240307-v1:0');
  });
});

const CACHE_POINT = { cachePoint: { type: 'default' } };

describe('thinking and prompt caching on Bedrock Converse', () => {
  const ask = {
    model: 'claude-sonnet-4-5',
    max_tokens: 4000,
    thinking: { type: 'enabled' as const, budget_tokens: 2048 },
    system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
    tools: [
      {
        name: 'get_weather',
        input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
        cache_control: { type: 'ephemeral' as const },
      },
    ],
    messages: [
      {
        role: 'user' as const,
        content: [{ type: 'text' as const, text: 'Hi', cache_control: { type: 'ephemeral' as const } }],
      },
    ],
  };

  it('sends thinking and cache points, and answers signed thinking with cache usage, whole', async () => {
    const message = await claude().messages.create(ask);
    const sent = fakes.bedrock.requests[0]?.body;
    expect(sent.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(sent.system).toEqual([{ text: 'Be brief.' }, CACHE_POINT]);
    expect(sent.toolConfig.tools.at(-1)).toEqual(CACHE_POINT);
    expect(sent.messages[0].content).toEqual([{ text: 'Hi' }, CACHE_POINT]);
    expect(message.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Let me think.',
      signature: 'EqQBCgIYAhIMbedrock',
    });
    expect(message.usage).toMatchObject({
      input_tokens: 30,
      cache_read_input_tokens: 10,
      cache_creation_input_tokens: 6,
    });
  });

  it('streams thinking_delta and signature_delta, with cache usage in message_delta', async () => {
    const deltas: string[] = [];
    const stream = claude().messages.stream(ask);
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta') deltas.push(e.delta.type);
    });
    const final = await stream.finalMessage();
    expect(deltas.slice(0, 4)).toEqual([
      'thinking_delta',
      'thinking_delta',
      'thinking_delta',
      'signature_delta',
    ]);
    expect(final.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Let me think.',
      signature: 'EqQBCgIYAhIMbedrock',
    });
    expect(final.usage).toMatchObject({
      input_tokens: 30,
      output_tokens: 9,
      cache_read_input_tokens: 10,
      cache_creation_input_tokens: 6,
    });
  });

  it('carries thinking and redacted thinking back as reasoningContent blocks', async () => {
    await claude().messages.create({
      ...ask,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Use the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
      ],
    });
    expect(fakes.bedrock.requests[0]?.body.messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: 'Use the tool.', signature: 'sig-1' } } },
      { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } },
      { toolUse: { toolUseId: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } } },
    ]);
  });

  it('streams a redacted reasoning block as a redacted_thinking block', async () => {
    fakes.bedrock.use(async (_req, res) => {
      openEventStream(res);
      for (const m of streamMessages([
        { reasoningContent: { redactedContent: 'c2VjcmV0' } },
        { text: 'Done.' },
      ]))
        res.write(m);
      res.end();
    });
    const final = await claude().messages.stream(ask).finalMessage();
    expect(final.content).toEqual([
      { type: 'redacted_thinking', data: 'c2VjcmV0' },
      { type: 'text', text: 'Done.' },
    ]);
  });

  it('takes thinking on the chat route, and answers reasoning_content with its signed blocks', async () => {
    const reply = await gw
      .client({ headers: { 'x-gateway-config': config('us-east-1') } })
      .chat.completions.create({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'Hi' }],
        // @ts-expect-error: Anthropic's thinking, which the gateway takes on chat for Claude
        thinking: { type: 'enabled', budget_tokens: 1500 },
      });
    expect(fakes.bedrock.requests[0]?.body.additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 1500 },
    });
    const message = reply.choices[0]?.message as unknown as Record<string, unknown>;
    expect(message.reasoning_content).toBe('Let me think.');
    expect(message.thinking_blocks).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAhIMbedrock' },
    ]);
  });
});
