import { APIError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { anthropicError } from '../support/fake-anthropic';
import { awsEvent, awsException, bedrockError, openEventStream } from '../support/fake-bedrock';
import { geminiError } from '../support/fake-google';
import { completion } from '../support/fake-openai';
import type { FakeUpstream } from '../support/fake-upstream';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';
import { AWS_KEYS, PROVIDER_FAKES } from '../support/provider-fakes';

// The same OpenAI-shaped requests, through the real server and the `openai` client, against fakes that
// speak each provider's own wire format.

const { gw, anthropic, bedrock, google, openai } = useGateway(PROVIDER_FAKES);

interface Case {
  provider: string;
  model: string;
  fake: () => FakeUpstream;
  /** Route headers: provider, custom host, credential. */
  headers: () => Record<string, string>;
  cost: number;
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number };
  imageUrlAccepted: boolean;
}

const cases: Case[] = [
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5-20250929',
    fake: () => anthropic,
    headers: () => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${anthropic.url}/v1` }),
    // 20 fresh input at $3, 10 cached at $0.30, 7 output at $15, per million.
    cost: 0.000168,
    usage: { prompt_tokens: 30, completion_tokens: 7, cached_tokens: 10 },
    imageUrlAccepted: true,
  },
  {
    provider: 'bedrock',
    model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
    fake: () => bedrock,
    headers: () => ({
      'x-gateway-config': JSON.stringify({
        provider: 'bedrock',
        api_key: AWS_KEYS,
        custom_host: bedrock.url,
        region: 'eu-west-1',
      }),
    }),
    // 30 fresh input at $1, 10 cached at $0.10, 9 output at $5, per million.
    cost: 0.000076,
    usage: { prompt_tokens: 40, completion_tokens: 9, cached_tokens: 10 },
    imageUrlAccepted: false,
  },
  {
    provider: 'google',
    model: 'gemini-2.5-flash',
    fake: () => google,
    headers: () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url }),
    // 20 fresh input at $0.30, 20 cached at $0.03, 8 output + 4 thinking at $2.50, per million.
    cost: 0.0000366,
    usage: { prompt_tokens: 40, completion_tokens: 12, cached_tokens: 20 },
    imageUrlAccepted: true,
  },
];

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe.each(cases)('$provider', (c) => {
  const client = () => gw.client({ headers: c.headers() });

  it('answers text with system and history, maps parameters, logs usage and cost', async () => {
    const { data, response } = await client()
      .chat.completions.create({
        model: c.model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'Say hello' },
        ],
        max_tokens: 100,
        temperature: 0.2,
        top_p: 0.9,
        stop: ['END'],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: Say hello');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({
      prompt_tokens: c.usage.prompt_tokens,
      completion_tokens: c.usage.completion_tokens,
      prompt_tokens_details: { cached_tokens: c.usage.cached_tokens },
    });
    expect(response.headers.get('x-gateway-provider')).toBe(c.provider);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      provider: c.provider,
      status: 200,
      usage: { prompt_tokens: c.usage.prompt_tokens },
    });
    expect(log.cost).toBeCloseTo(c.cost, 10);
    const sent = c.fake().requests[0];
    if (c.provider === 'anthropic') {
      expect(sent?.path).toBe('/v1/messages');
      expect(sent?.headers['x-api-key']).toBe('sk-provider-key');
      expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent?.body).toMatchObject({
        system: [{ type: 'text', text: 'Be brief.' }],
        max_tokens: 100,
        temperature: 0.2,
        top_p: 0.9,
        stop_sequences: ['END'],
      });
      expect(sent?.body.messages).toHaveLength(3);
    } else if (c.provider === 'bedrock') {
      expect(sent?.path).toBe(`/model/${encodeURIComponent(c.model)}/converse`);
      expect(String(sent?.headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=.*host.*, Signature=[0-9a-f]{64}$/,
      );
      expect(sent?.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
      expect(sent?.body).toMatchObject({
        system: [{ text: 'Be brief.' }],
        inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      });
    } else {
      expect(sent?.path).toBe(`/v1beta/models/${c.model}:generateContent`);
      expect(sent?.headers['x-goog-api-key']).toBe('sk-provider-key');
      expect(sent?.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { maxOutputTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      });
      expect(sent?.body.contents.map((x: { role: string }) => x.role)).toEqual(['user', 'model', 'user']);
    }
  });

  it('runs a tool round trip with ids kept', async () => {
    const ask: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client().chat.completions.create({
      model: c.model,
      messages: ask,
      tools: [weatherTool],
      tool_choice: 'auto',
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('no function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(call.id).toBeTruthy();

    const second = await client().chat.completions.create({
      model: c.model,
      messages: [
        ...ask,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' },
      ],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toContain('21');
    const sent = c.fake().requests[1]?.body;
    if (c.provider === 'anthropic') {
      expect(sent.tools[0]).toMatchObject({
        name: 'get_weather',
        input_schema: weatherTool.function.parameters,
      });
      expect(sent.messages[1].content).toContainEqual({
        type: 'tool_use',
        id: call.id,
        name: 'get_weather',
        input: { city: 'Paris' },
      });
      expect(sent.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.id });
    } else if (c.provider === 'bedrock') {
      expect(sent.toolConfig.tools[0].toolSpec).toMatchObject({
        name: 'get_weather',
        inputSchema: { json: weatherTool.function.parameters },
      });
      expect(sent.messages[1].content[0]).toEqual({
        toolUse: { toolUseId: call.id, name: 'get_weather', input: { city: 'Paris' } },
      });
      expect(sent.messages[2].content[0]).toEqual({
        toolResult: { toolUseId: call.id, content: [{ text: '{"temp":21}' }] },
      });
    } else {
      expect(sent.tools[0].functionDeclarations[0]).toMatchObject({ name: 'get_weather' });
      expect(sent.contents[1].parts[0].functionCall).toEqual({
        name: 'get_weather',
        args: { city: 'Paris' },
      });
      expect(sent.contents[2].parts[0]).toEqual({
        functionResponse: { name: 'get_weather', response: { temp: 21 } },
      });
    }
  });

  it('takes images as data URLs, and as links where the provider can', async () => {
    const withImage = (url: string): ChatCompletionMessageParam[] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    const inline = await client().chat.completions.create({ model: c.model, messages: withImage(PNG) });
    expect(inline.choices[0]?.message.content).toMatch(/I see an? (base64|png|inline) image/);
    const link = client().chat.completions.create({
      model: c.model,
      messages: withImage('https://example.com/cat.png'),
    });
    if (c.imageUrlAccepted) {
      expect((await link).choices[0]?.message.content).toMatch(/I see an? (url|linked) image/);
    } else {
      await expect(link).rejects.toMatchObject({ status: 400, code: 'unsupported_image_url' });
    }
  });

  it('streams incrementally with usage logged and cost right', async () => {
    const { data: stream, response } = await client()
      .chat.completions.create({
        model: c.model,
        messages: [{ role: 'user', content: 'Say hello to the whole wide world' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const deltas: string[] = [];
    let usage: unknown;
    let finish: string | null | undefined;
    for await (const part of stream) {
      const text = part.choices[0]?.delta.content;
      if (text) deltas.push(text);
      finish = part.choices[0]?.finish_reason ?? finish;
      if (part.usage) usage = part.usage;
    }
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Echo: Say hello to the whole wide world');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({
      prompt_tokens: c.usage.prompt_tokens,
      completion_tokens: c.usage.completion_tokens,
    });
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ stream: true, status: 200, usage: { prompt_tokens: c.usage.prompt_tokens } });
    expect(log.cost).toBeCloseTo(c.cost, 10);
    expect(log.response.choices[0].message.content).toBe('Echo: Say hello to the whole wide world');
  });

  it('streams tool calls', async () => {
    const stream = await client().chat.completions.create({
      model: c.model,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      stream: true,
    });
    let args = '';
    let name = '';
    let id = '';
    let sawUsageChunk = false;
    for await (const part of stream) {
      if (part.choices.length === 0) sawUsageChunk = true;
      for (const t of part.choices[0]?.delta.tool_calls ?? []) {
        args += t.function?.arguments ?? '';
        name += t.function?.name ?? '';
        id ||= t.id ?? '';
      }
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(id).toBeTruthy();
    // The usage chunk goes to the log only, unless the client asked for it.
    expect(sawUsageChunk).toBe(false);
  });

  it('keeps a provider error status and message, marked as the provider origin', async () => {
    c.fake().use(
      c.provider === 'anthropic'
        ? anthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your rate limit.')
        : c.provider === 'bedrock'
          ? bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.')
          : geminiError(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'),
    );
    const err = await client()
      .chat.completions.create({ model: c.model, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    expect(e.status).toBe(429);
    expect(e.message).toMatch(/rate limit|Too many requests|exhausted/);
    expect(e.headers?.get('x-gateway-error-origin')).toBe('provider');
  });
});

describe('errors inside streams', () => {
  it('Anthropic: an error event becomes an SSE error the SDK raises', async () => {
    anthropic.use(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'claude-haiku-4-5', usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`,
      );
      res.write(
        `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } })}\n\n`,
      );
      res.end(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`,
      );
    });
    const { data: stream, response } = await gw
      .client({
        headers: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${anthropic.url}/v1` },
      })
      .chat.completions.create({
        model: 'claude-haiku-4-5',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      })
      .withResponse();
    let text = '';
    const err = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('Hel');
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('Overloaded');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ status: 529, error: { origin: 'provider', type: 'overloaded_error' } });
  });

  it('Bedrock: an exception message becomes an SSE error; a cut stream too', async () => {
    bedrock.use(async (_req, res) => {
      openEventStream(res);
      res.write(awsEvent('messageStart', { role: 'assistant' }));
      res.write(awsEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }));
      res.end(awsException('throttlingException', 'Too many tokens, please wait.'));
    });
    const client = gw.client({
      headers: {
        'x-gateway-config': JSON.stringify({
          provider: 'bedrock',
          api_key: AWS_KEYS,
          custom_host: bedrock.url,
        }),
      },
    });
    const run = async () => {
      const stream = await client.chat.completions.create({
        model: 'amazon.nova-lite-v1:0',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      for await (const _ of stream) {
        // drain
      }
    };
    await expect(run()).rejects.toMatchObject({ message: expect.stringContaining('Too many tokens') });
    bedrock.use(async (_req, res) => {
      openEventStream(res);
      res.end(awsEvent('messageStart', { role: 'assistant' }));
    });
    await expect(run()).rejects.toMatchObject({ message: expect.stringContaining('before it was complete') });
  });

  it('Gemini: usage-only and empty-candidate events do not break the stream', async () => {
    google.use(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ usageMetadata: { promptTokenCount: 3 } })}\r\n\r\n`);
      res.write(`data: ${JSON.stringify({ candidates: [] })}\r\n\r\n`);
      res.write(
        `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } })}\r\n\r\n`,
      );
      res.end();
    });
    const stream = await gw
      .client({ headers: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url } })
      .chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('ok');
  });
});

describe('OpenAI-compatible providers', () => {
  it('Azure OpenAI: deployment URL, api-key header, api-version, reply passed through', async () => {
    const { data, response } = await gw
      .client({
        headers: {
          'x-gateway-config': JSON.stringify({
            provider: 'azure-openai',
            custom_host: openai.url.replace(/\/v1$/, ''),
            deployment_id: 'prod-gpt4o',
            api_version: '2024-10-21',
          }),
        },
      })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: Hi');
    expect(openai.requests[0]?.path).toBe(
      '/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21',
    );
    expect(openai.requests[0]?.headers['api-key']).toBe('sk-provider-key');
    expect(openai.requests[0]?.headers.authorization).toBeUndefined();
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.provider).toBe('azure-openai');
    expect(log.cost).toBeGreaterThan(0);
  });

  it('Azure OpenAI without a resource name or host is a 400 naming what is missing', async () => {
    const err = await gw
      .client({ headers: { 'x-gateway-provider': 'azure-openai' } })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining('resource_name') });
  });

  it('passes vendor/model names through untouched, and tells them from @slug/model', async () => {
    openai.use((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(String(req.body.model), 'hi')));
    });
    const data = await gw
      .client({ headers: { 'x-gateway-provider': 'together-ai', 'x-gateway-custom-host': openai.url } })
      .chat.completions.create({
        model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
        messages: [{ role: 'user', content: 'Hi' }],
      });
    expect(data.model).toBe('meta-llama/Llama-3.3-70B-Instruct-Turbo');
    expect(openai.requests[0]?.body.model).toBe('meta-llama/Llama-3.3-70B-Instruct-Turbo');
    expect(openai.requests[0]?.headers.authorization).toBe('Bearer sk-provider-key');
  });

  it('ollama needs a custom host, and adds /v1 to a bare server root', async () => {
    const missing = await gw
      .client({ headers: { 'x-gateway-provider': 'ollama' } })
      .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 400 });
    await gw
      .client({
        headers: { 'x-gateway-provider': 'ollama', 'x-gateway-custom-host': openai.url.replace(/\/v1$/, '') },
      })
      .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }] });
    expect(openai.requests[0]?.path).toBe('/v1/chat/completions');
  });
});

describe('fallback across providers', () => {
  it('moves from an overloaded Anthropic to Gemini within one config, and logs both attempts', async () => {
    anthropic.use(anthropicError(529, 'overloaded_error', 'Overloaded'));
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        {
          provider: 'anthropic',
          custom_host: `${anthropic.url}/v1`,
          api_key: 'sk-ant',
          override_params: { model: 'claude-haiku-4-5' },
        },
        {
          provider: 'google',
          custom_host: google.url,
          api_key: 'g-key',
          override_params: { model: 'gemini-2.5-flash' },
        },
      ],
    };
    const { data, response } = await gw
      .client({ headers: { 'x-gateway-config': JSON.stringify(config) } })
      .chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: Say hello');
    expect(response.headers.get('x-gateway-provider')).toBe('google');
    expect(anthropic.requests[0]?.headers['x-api-key']).toBe('sk-ant');
    expect(google.requests[0]?.headers['x-goog-api-key']).toBe('g-key');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.provider).toBe('google');
    expect(log.attempts.map((a: { provider: string; status: number }) => [a.provider, a.status])).toEqual([
      ['anthropic', 529],
      ['google', 200],
    ]);
  });
});

describe('provider account fields', () => {
  it('a Bedrock virtual key carries its region and credential; @slug/model keeps the model id whole', async () => {
    const created = await gw.api('POST', '/virtual-keys', {
      name: 'Bedrock EU',
      slug: 'bedrock-eu',
      provider: 'bedrock',
      key: AWS_KEYS,
      region: 'eu-central-1',
      custom_host: bedrock.url,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ region: 'eu-central-1', resource_name: null });
    expect(JSON.stringify(created.body)).not.toContain('AKIDEXAMPLE');
    const data = await gw.client().chat.completions.create({
      model: '@bedrock-eu/eu.amazon.nova-pro-v1:0',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(data.choices[0]?.message.content).toBe('Echo: Hi');
    expect(bedrock.requests[0]?.path).toBe(
      `/model/${encodeURIComponent('eu.amazon.nova-pro-v1:0')}/converse`,
    );
    expect(String(bedrock.requests[0]?.headers.authorization)).toContain(
      '/eu-central-1/bedrock/aws4_request',
    );
  });

  it('config validation lists every bad provider field', async () => {
    const err = await gw
      .client({
        headers: {
          'x-gateway-config': JSON.stringify({
            provider: 'bedrock',
            region: 'Mars',
            resource_name: 'bad name!',
          }),
        },
      })
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    expect((err as Error).message).toMatch(/config\.region .*config\.resource_name/);
  });
});
