import Anthropic from '@anthropic-ai/sdk';
import type {
  MessageCreateParamsStreaming,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { anthropicDefault, message, openSse, plan, sse, streamEvents } from '../support/fake-anthropic';
import { chunk, completion, sendJson, sseData } from '../support/fake-openai';
import { sendJson as sendUpstreamJson } from '../support/fake-upstream';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';
import { AWS_KEYS, PROVIDER_FAKES } from '../support/provider-fakes';

// Anthropic's Messages API through the real server, driven by the official `@anthropic-ai/sdk` client
// as Claude Code drives it, against fakes that speak each provider's own wire format.

const { gw, anthropic, bedrock, google, openai } = useGateway(PROVIDER_FAKES);

const root = () => gw.url.replace(/\/v1$/, '');

/** A client as Claude Code configures it: ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_CUSTOM_HEADERS. */
const claude = (headers: Record<string, string>, auth: { authToken?: string; apiKey?: string } = {}) =>
  new Anthropic({
    baseURL: root(),
    authToken: auth.authToken ?? (auth.apiKey ? null : ADMIN_KEY),
    apiKey: auth.apiKey ?? null,
    defaultHeaders: headers,
    maxRetries: 0,
  });

const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

interface Case {
  provider: string;
  model: string;
  headers: () => Record<string, string>;
  fake: () => { requests: Array<{ path: string; body: Record<string, unknown> }> };
  /** What the fake answers to "Say hello" and to an image. */
  echo: string;
  image: string;
  toolId: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number };
  /** `message_start`'s usage: the provider's early count, or the gateway's estimate when it counts last. */
  startUsage: Record<string, unknown>;
  /** Tokens the provider reports written to its cache for a request with `cache_control`. */
  cacheWrites: number;
}

const cases: Case[] = [
  {
    provider: 'bedrock',
    model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
    headers: () => ({
      'x-gateway-config': JSON.stringify({
        provider: 'bedrock',
        api_key: AWS_KEYS,
        custom_host: bedrock.url,
        region: 'eu-west-1',
      }),
    }),
    fake: () => bedrock,
    echo: 'Echo: Say hello',
    image: 'I see a png image.',
    toolId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
    usage: { input_tokens: 30, output_tokens: 9, cache_read_input_tokens: 10 },
    // The count_tokens estimate of `{role: "user", content: "Say hello"}`: about four characters a token.
    startUsage: { input_tokens: 4, output_tokens: 0, cache_read_input_tokens: 0 },
    cacheWrites: 6,
  },
  {
    provider: 'google',
    model: 'gemini-2.5-flash',
    headers: () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url }),
    fake: () => google,
    echo: 'Echo: Say hello',
    image: 'I see an inline image.',
    toolId: '',
    usage: { input_tokens: 20, output_tokens: 12, cache_read_input_tokens: 20 },
    startUsage: { input_tokens: 20, output_tokens: 0, cache_read_input_tokens: 20 },
    cacheWrites: 0,
  },
];

describe.each(cases)('translated to $provider', (c) => {
  const client = () => claude(c.headers());

  it('answers a Message with text, stop reason and Anthropic usage, and logs user, usage and cost', async () => {
    const { data, response } = await client()
      .messages.create({
        model: c.model,
        max_tokens: 256,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
        ],
        metadata: { user_id: 'user-42' },
      })
      .withResponse();
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: c.echo }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...c.usage, cache_creation_input_tokens: c.cacheWrites },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(response.headers.get('x-gateway-provider')).toBe(c.provider);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      operation: 'messages.create',
      provider: c.provider,
      user: 'user-42',
      status: 200,
    });
    expect(log.usage.prompt_tokens).toBe(
      c.usage.input_tokens + c.usage.cache_read_input_tokens + c.cacheWrites,
    );
    expect(log.cost).toBeGreaterThan(0);
  });

  it("streams Anthropic's exact event sequence, with final usage in message_delta", async () => {
    const events: RawMessageStreamEvent[] = [];
    const stream = client().messages.stream({
      model: c.model,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    stream.on('streamEvent', (e) => events.push(structuredClone(e)));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: c.echo }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject(c.usage);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(1);
    const start = events.find((e) => e.type === 'message_start');
    expect(start?.type === 'message_start' && start.message.usage).toEqual({
      cache_creation_input_tokens: 0,
      ...c.startUsage,
    });
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta?.type === 'message_delta' && delta.usage).toEqual({
      ...c.usage,
      cache_creation_input_tokens: 0,
    });
  });

  it('sends a base64 image', async () => {
    const data = await client().messages.create({
      model: c.model,
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    });
    expect(data.content).toEqual([{ type: 'text', text: c.image }]);
  });

  it('calls a tool, takes its result back, streamed and not', async () => {
    const ask = {
      model: c.model,
      max_tokens: 200,
      tools: [weatherTool],
      tool_choice: { type: 'auto' as const },
      messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
    };
    const first = await client().messages.create(ask);
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    if (c.toolId) expect(use?.id).toBe(c.toolId);

    const streamed = await client().messages.stream(ask).finalMessage();
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ input: { city: 'Paris' } });

    const second = await client().messages.create({
      ...ask,
      messages: [
        ...ask.messages,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: use?.id ?? '', content: [{ type: 'text', text: 'Sunny' }] },
          ],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]?.type).toBe('text');
    expect(JSON.stringify(second.content)).toContain('Sunny');
  });

  it('refuses a server tool with a 400 in Anthropic shape naming the tool and the provider', async () => {
    const error = await client()
      .messages.create({
        model: c.model,
        max_tokens: 100,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        messages: [{ role: 'user', content: 'News?' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const e = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(e.message).toContain('web_search');
    expect(e.message).toContain(c.provider);
    expect(c.fake().requests).toHaveLength(0);
  });
});

/** A Claude Code request as recorded: system blocks with cache_control, many tools, thinking, user id. */
function claudeCodeRequest(model: string): MessageCreateParamsStreaming {
  const tools = [
    'Task',
    'Bash',
    'Glob',
    'Grep',
    'Read',
    'Edit',
    'Write',
    'WebFetch',
    'TodoWrite',
    'get_weather',
  ].map((name) => ({
    name,
    description: `${name} tool`,
    input_schema: {
      type: 'object' as const,
      properties: { city: { type: 'string' }, path: { type: 'string' } },
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    },
  }));
  return {
    model,
    max_tokens: 32000,
    system: [
      {
        type: 'text',
        text: "You are Claude Code, Anthropic's official CLI for Claude.",
        cache_control: { type: 'ephemeral' },
      },
      { type: 'text', text: 'You are an interactive CLI tool.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>Context.</system-reminder>' },
          { type: 'text', text: 'Say hello', cache_control: { type: 'ephemeral' } },
        ],
      },
    ],
    tools,
    thinking: { type: 'enabled', budget_tokens: 31999 },
    metadata: { user_id: 'user_abc123_account__session_9f8e' },
    stream: true,
  };
}

describe('a recorded Claude Code request', () => {
  it('to Bedrock: translated (thinking and cache points as Converse takes them), logged under its user id', async () => {
    const { data, response } = await claude(cases[0]?.headers() ?? {}, { apiKey: ADMIN_KEY })
      .messages.create(claudeCodeRequest(cases[0]?.model ?? ''))
      .withResponse();
    const blocks: string[] = [];
    for await (const e of data) if (e.type === 'content_block_start') blocks.push(e.content_block.type);
    expect(blocks).toEqual(['thinking', 'text', 'tool_use']);
    const sent = bedrock.requests[0]?.body;
    expect(sent.system).toEqual([
      {
        text: "You are Claude Code, Anthropic's official CLI for Claude.\n\nYou are an interactive CLI tool.",
      },
      { cachePoint: { type: 'default' } },
    ]);
    expect(sent.toolConfig.tools).toHaveLength(10);
    expect(sent.additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 31999 },
    });
    expect(JSON.stringify(sent)).not.toContain('cache_control');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.user).toBe('user_abc123_account__session_9f8e');
  });

  it('to Anthropic: passed through unchanged, with every anthropic-* header', async () => {
    const body = claudeCodeRequest('claude-sonnet-4-6');
    const { data, response } = await claude(
      {
        'x-gateway-provider': 'anthropic',
        'x-gateway-custom-host': `${anthropic.url}/v1`,
        'x-gateway-api-key': ADMIN_KEY,
        'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
        'anthropic-version': '2023-01-01',
      },
      { apiKey: 'sk-ant-passthrough' },
    )
      // Claude Code's SDK marks its beta calls with `?beta=true`.
      .beta.messages.create(body, { query: { beta: true } })
      .withResponse();
    const events: unknown[] = [];
    for await (const e of data) events.push(e);
    // What the fake sent, in its order (the SDK keeps pings to itself).
    const fake = anthropic.requests[0] as Parameters<typeof plan>[0];
    const sentEvents = streamEvents(fake, plan(fake)).map((e) => JSON.parse(e.split('data: ')[1] as string));
    expect(events).toEqual(sentEvents.filter((e) => e.type !== 'ping'));
    const sent = anthropic.requests[0];
    expect(sent?.path).toBe('/v1/messages?beta=true');
    expect(sent?.body).toEqual(body);
    expect(sent?.headers['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14');
    expect(sent?.headers['anthropic-version']).toBe('2023-01-01');
    expect(sent?.headers['x-api-key']).toBe('sk-ant-passthrough');
    expect(sent?.headers['x-gateway-api-key']).toBeUndefined();
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      operation: 'messages.create',
      provider: 'anthropic',
      user: 'user_abc123_account__session_9f8e',
      usage: { prompt_tokens: 30, completion_tokens: 7 },
    });
    // 20 fresh input at $3, 10 cached at $0.30, 7 output at $15, per million.
    expect(log.cost).toBeCloseTo(0.000168, 9);
  });
});

describe('natively to Anthropic', () => {
  const client = () =>
    claude(
      {
        'x-gateway-provider': 'anthropic',
        'x-gateway-custom-host': `${anthropic.url}/v1`,
        'x-gateway-api-key': ADMIN_KEY,
      },
      {
        apiKey: 'sk-ant-key',
      },
    );

  it("relays Anthropic's stream as is: thinking with its signature, text and tool input", async () => {
    anthropic.use(async (req, res) => {
      openSse(res);
      const m = message(req, []);
      const events = [
        sse('message_start', {
          type: 'message_start',
          message: { ...m, usage: { input_tokens: 20, output_tokens: 1 } },
        }),
        sse('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        }),
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'thinking_delta', thinking: 'Hmm.' },
        }),
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM' },
        }),
        sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
        sse('content_block_start', {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
        }),
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '{"city":' },
        }),
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
        }),
        sse('content_block_stop', { type: 'content_block_stop', index: 1 }),
        sse('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: 12 },
        }),
        sse('message_stop', { type: 'message_stop' }),
      ];
      for (const e of events) res.write(e);
      res.end();
    });
    const { data: stream, response } = await client()
      .messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 2048,
        stream: true,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather?' }],
      })
      .withResponse();
    const deltas: string[] = [];
    for await (const e of stream) if (e.type === 'content_block_delta') deltas.push(e.delta.type);
    expect(deltas).toEqual(['thinking_delta', 'signature_delta', 'input_json_delta', 'input_json_delta']);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      stream: true,
      status: 200,
      usage: { prompt_tokens: 20, completion_tokens: 12 },
    });
    expect(log.response.choices[0].message.tool_calls[0].function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
  });

  it("keeps Anthropic's own errors, status and type", async () => {
    anthropic.use((_req, res) =>
      sendUpstreamJson(res, 529, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      }),
    );
    const error = (await client()
      .messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(529);
    expect(error.error).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });

  it('ends a cut stream with an Anthropic error event', async () => {
    anthropic.use(async (req, res) => {
      openSse(res);
      res.write(sse('message_start', { type: 'message_start', message: message(req, []) }));
      res.end();
    });
    const stream = client().messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain('ended the stream before it was complete');
  });

  it('applies the guardrails: input redaction rewrites the native body, an output deny ends the stream', async () => {
    const guarded = (config: Record<string, unknown>) =>
      claude(
        {
          'x-gateway-api-key': ADMIN_KEY,
          'x-gateway-config': JSON.stringify({
            provider: 'anthropic',
            custom_host: `${anthropic.url}/v1`,
            ...config,
          }),
        },
        { apiKey: 'sk-ant-key' },
      );
    const { response } = await guarded({ input_guardrails: [{ type: 'pii', action: 'redact' }] })
      .messages.create({
        model: 'claude-sonnet-4-6',
        max_tokens: 100,
        system: 'Card 4111 1111 1111 1111 in the system.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Card 4111 1111 1111 1111' }] }],
      })
      .withResponse();
    const sent = anthropic.requests[0]?.body;
    expect(sent.system).toBe('Card [REDACTED_CREDIT_CARD] in the system.');
    expect(sent.messages[0].content).toEqual([{ type: 'text', text: 'Card [REDACTED_CREDIT_CARD]' }]);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(JSON.stringify(log.request)).not.toContain('4111');

    const stream = guarded({
      output_guardrails: [{ type: 'contains', words: ['hello'], action: 'deny' }],
    }).messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(text).not.toContain('hello');
  });

  it('counts tokens natively', async () => {
    anthropic.use((req, res) =>
      req.path === '/v1/messages/count_tokens'
        ? sendUpstreamJson(res, 200, { input_tokens: 1234 })
        : anthropicDefault(req, res),
    );
    const counted = await client().messages.countTokens({
      model: 'claude-sonnet-4-6',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(counted).toEqual({ input_tokens: 1234 });
    expect(anthropic.requests[0]?.path).toBe('/v1/messages/count_tokens');
  });
});

describe('translated to OpenAI and OpenAI-compatible servers', () => {
  const client = (auth?: { apiKey?: string }) =>
    claude({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url }, auth);

  it('maps the request to chat and the reply back, streamed with tool calls', async () => {
    openai.use((req, res) => {
      const model = String(req.body.model);
      if (!req.body.stream) return sendJson(res, 200, completion(model, 'Hi there'));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseData(chunk(model, { role: 'assistant', content: '' })));
      res.write(sseData(chunk(model, { content: 'Checking.' })));
      res.write(
        sseData(
          chunk(model, {
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          }),
        ),
      );
      res.write(
        sseData(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] })),
      );
      res.write(sseData(chunk(model, {}, 'tool_calls')));
      res.write(
        sseData({
          ...chunk(model, {}),
          choices: [],
          usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
        }),
      );
      res.end(sseData('[DONE]'));
    });
    const plain = await client().messages.create({
      model: 'gpt-4.1-mini',
      max_tokens: 50,
      stop_sequences: ['END'],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Hi' }],
      metadata: { user_id: 'u-1' },
    });
    expect(plain).toMatchObject({
      content: [{ type: 'text', text: 'Hi there' }],
      usage: { input_tokens: 12, output_tokens: 5 },
    });
    expect(openai.requests[0]?.body).toMatchObject({
      model: 'gpt-4.1-mini',
      max_tokens: 50,
      stop: ['END'],
      tool_choice: 'required',
      parallel_tool_calls: false,
      user: 'u-1',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherTool.input_schema } }],
      messages: [{ role: 'user', content: 'Hi' }],
    });

    const final = await client({ apiKey: ADMIN_KEY })
      .messages.stream({
        model: 'gpt-4.1-mini',
        max_tokens: 50,
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Weather?' }],
      })
      .finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(final).toMatchObject({ stop_reason: 'tool_use', usage: { input_tokens: 11, output_tokens: 6 } });
  });

  it('sends base64 and URL images as image_url parts, and tool results as tool messages', async () => {
    await client().messages.create({
      model: 'gpt-4.1-mini',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_9', content: 'Sunny', is_error: false },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'text', text: 'And these?' },
          ],
        },
      ],
    });
    expect(openai.requests[0]?.body.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_9',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_9', content: 'Sunny' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'text', text: 'And these?' },
        ],
      },
    ]);
  });

  it('ends a stream the provider cuts with an Anthropic error event', async () => {
    openai.use((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseData(chunk(String(req.body.model), { content: 'Half' })));
      res.end();
    });
    const error = await client()
      .messages.stream({ model: 'gpt-4.1-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
  });

  it('estimates count_tokens without calling the provider', async () => {
    const counted = await client().messages.countTokens({
      model: 'gpt-4.1-mini',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello to everyone in the room' }],
    });
    expect(counted.input_tokens).toBeGreaterThan(5);
    expect(counted.input_tokens).toBeLessThan(30);
    expect(openai.requests).toHaveLength(0);
  });
});

describe('translated to Azure OpenAI and an OpenAI-compatible provider', () => {
  it('Azure OpenAI: the deployment URL, streamed and not', async () => {
    const client = claude({
      'x-gateway-config': JSON.stringify({
        provider: 'azure-openai',
        api_key: 'azure-key',
        custom_host: openai.url.replace(/\/v1$/, ''),
        deployment_id: 'prod-gpt4o',
        api_version: '2024-10-21',
      }),
    });
    const ask = { model: 'gpt-4o', max_tokens: 20, messages: [{ role: 'user' as const, content: 'Hi' }] };
    expect((await client.messages.create(ask)).content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect((await client.messages.stream(ask).finalMessage()).content).toEqual([
      { type: 'text', text: 'Echo: Hi' },
    ]);
    expect(openai.requests[0]?.path).toBe(
      '/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21',
    );
    expect(openai.requests[0]?.headers['api-key']).toBe('azure-key');
  });

  it('groq through a virtual key, with the gateway key in x-api-key (ANTHROPIC_API_KEY)', async () => {
    const created = await gw.api('POST', '/virtual-keys', {
      name: 'groq',
      slug: 'groq-anthropic-ingress',
      provider: 'groq',
      key: 'gsk-groq',
      custom_host: openai.url,
    });
    expect(created.status).toBe(201);
    const client = claude({ 'x-gateway-provider': '@groq-anthropic-ingress' }, { apiKey: ADMIN_KEY });
    const { data, response } = await client.messages
      .create({
        model: 'llama-3.3-70b-versatile',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Echo: Hi' }]);
    expect(openai.requests[0]?.headers.authorization).toBe('Bearer gsk-groq');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ provider: 'groq', virtual_key: 'groq-anthropic-ingress' });
  });
});

describe('gateway errors in Anthropic shape', () => {
  it('401 for a bad key, as an AuthenticationError', async () => {
    const error = await claude({ 'x-gateway-provider': 'google' }, { authToken: 'gwk_wrong' })
      .messages.create({
        model: 'gemini-2.5-flash',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });
  });

  it('400 for a request without max_tokens', async () => {
    const res = await fetch(`${root()}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': ADMIN_KEY,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'max_tokens: Field required (an integer of at least 1)',
      },
    });
  });

  it('446 for a guardrail denial, streamed or not, and 412 for an exhausted budget', async () => {
    const headers = {
      'x-gateway-config': JSON.stringify({
        provider: 'openai',
        custom_host: openai.url,
        input_guardrails: [{ type: 'contains', words: ['forbidden'], action: 'deny' }],
      }),
    };
    const denied = (await claude(headers)
      .messages.create({
        model: 'gpt-4.1-mini',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'a forbidden word' }],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(denied.status).toBe(446);
    expect(denied.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(openai.requests).toHaveLength(0);

    const created = await gw.api('POST', '/virtual-keys', {
      name: 'spent',
      slug: 'anthropic-spent',
      provider: 'openai',
      key: 'sk-x',
      custom_host: openai.url,
      budget_limit: 0.000001,
    });
    expect(created.status).toBe(201);
    // The budget is smaller than the most the call could cost: its reservation is refused at once.
    const refused = (await claude({ 'x-gateway-provider': '@anthropic-spent' })
      .messages.create({
        model: 'gpt-4.1-mini',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .then(() => undefined)
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError> | undefined;
    expect(refused?.status).toBe(412);
    expect(refused?.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
  });
});
