import type { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../support/fake-anthropic';
import { startFakeBedrock } from '../support/fake-bedrock';
import { startFakeGoogle } from '../support/fake-google';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

// The Responses API on providers without one, through the `openai` client, against fakes that speak
// each provider's own wire format.

const { gw, anthropic, bedrock, google } = useGateway({
  anthropic: startFakeAnthropic,
  bedrock: startFakeBedrock,
  google: startFakeGoogle,
});

const AWS_KEYS = JSON.stringify({ access_key_id: 'AKIDEXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG' });
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const cases = [
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    fake: () => anthropic,
    headers: () => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${anthropic.url}/v1` }),
    image: 'I see a base64 image.',
    call: 'Let me check.',
    // Where the effort's budget goes, and the signature Claude gives its thinking.
    thinking: (b: Body) => ({ budget: b.thinking, max: b.max_tokens }),
    signature: 'EqQBCgIYAhIM',
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
    image: 'I see a png image.',
    call: 'Checking.',
    thinking: (b: Body) => ({
      budget: b.additionalModelRequestFields?.thinking,
      max: b.inferenceConfig?.maxTokens,
    }),
    signature: 'EqQBCgIYAhIMbedrock',
  },
  {
    provider: 'google',
    model: 'gemini-2.5-flash',
    fake: () => google,
    headers: () => ({ 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url }),
    image: 'I see an inline image.',
    call: '',
    thinking: (b: Body) => ({
      budget: b.generationConfig?.thinkingConfig && {
        type: 'enabled',
        budget_tokens: b.generationConfig.thinkingConfig.thinkingBudget,
      },
      max: b.generationConfig?.maxOutputTokens,
    }),
    signature: undefined,
  },
];

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

// biome-ignore lint/suspicious/noExplicitAny: provider request bodies of three shapes, read field by field
type Body = Record<string, any>;

describe.each(cases)('Responses on $provider', (c) => {
  const client = () => gw.client({ headers: c.headers() });

  it('answers text with instructions, logs usage and cost', async () => {
    const { data, response } = await client()
      .responses.create({
        model: c.model,
        instructions: 'Be brief.',
        input: 'Say hello',
        max_output_tokens: 100,
      })
      .withResponse();
    expect(data).toMatchObject({ object: 'response', status: 'completed', output_text: 'Echo: Say hello' });
    expect(data.id).toMatch(/^resp_/);
    expect(data.usage?.input_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(c.fake().requests[0]?.body)).toContain('Be brief.');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ operation: 'responses.create', provider: c.provider, status: 200 });
    expect(log.cost).toBeGreaterThan(0);
  });

  it('streams the full event sequence, numbered from 0', async () => {
    const events: ResponseStreamEvent[] = [];
    const stream = client().responses.stream({ model: c.model, input: 'Say hello' });
    stream.on('event', (e) => events.push(e));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Echo: Say hello');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
  });

  it('takes an image', async () => {
    const data = await client().responses.create({
      model: c.model,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: PNG, detail: 'auto' },
            { type: 'input_text', text: 'What is this?' },
          ],
        },
      ],
    });
    expect(data.output_text).toBe(c.image);
  });

  it('calls a function and takes its output back, streamed and not', async () => {
    const first = await client().responses.create({
      model: c.model,
      input: 'Weather in Paris?',
      tools: [weather],
    });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: 'Paris' });
    expect(first.output_text).toBe(c.call);

    const streamed = await client()
      .responses.stream({ model: c.model, input: 'Weather in Paris?', tools: [weather] })
      .finalResponse();
    expect(streamed.output.find((o) => o.type === 'function_call')).toMatchObject({ name: 'get_weather' });

    const second = await client().responses.create({
      model: c.model,
      tools: [weather],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        call as never,
        { type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: 'Sunny' },
      ],
    });
    expect(second.output_text).toContain('Sunny');
  });

  it('maps reasoning.effort to a thinking budget and answers reasoning items, streamed and not', async () => {
    const data = await client().responses.create({
      model: c.model,
      input: 'Say hello',
      reasoning: { effort: 'low' },
    });
    expect(c.thinking(c.fake().requests[0]?.body)).toEqual({
      budget: { type: 'enabled', budget_tokens: 2048 },
      // Claude's output limit must hold the budget; Gemini needs none.
      max: c.provider === 'google' ? undefined : 2048 + 4096,
    });
    expect(data.reasoning?.effort).toBe('low');
    expect(data.output_text).toBe('Echo: Say hello');
    expect(data.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'Let me think.' }],
      status: 'completed',
    });
    expect((data.output[0] as { encrypted_content?: string }).encrypted_content).toBe(c.signature);

    const types: string[] = [];
    const stream = client().responses.stream({
      model: c.model,
      input: 'Say hello',
      max_output_tokens: 1500,
      reasoning: { effort: 'high' },
    });
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    // An output limit bounds the budget: thinking counts in it.
    expect(c.thinking(c.fake().requests[1]?.body).budget).toEqual({ type: 'enabled', budget_tokens: 1499 });
    expect(final.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'Let me think.' }],
    });
    expect((final.output[0] as { encrypted_content?: string }).encrypted_content).toBe(c.signature);
    expect(final.output_text).toBe('Echo: Say hello');
    expect(types.slice(2, 5)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
    ]);
    expect(types).toContain('response.reasoning_text.done');
  });

  it('carries a signed reasoning item back with the function call that follows it', async () => {
    const first = await client().responses.create({
      model: c.model,
      input: 'Weather in Paris?',
      tools: [weather],
      reasoning: { effort: 'minimal' },
    });
    const call = first.output.find((o) => o.type === 'function_call') as { call_id: string };
    const second = await client().responses.create({
      model: c.model,
      tools: [weather],
      reasoning: { effort: 'minimal' },
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...(first.output as never[]),
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny' },
      ],
    });
    expect(second.output_text).toContain('Sunny');
    const sent = JSON.stringify(c.fake().requests[1]?.body);
    if (c.signature) expect(sent).toContain(c.signature);
    else expect(sent).not.toContain('Let me think.');
  });

  it('stores its responses: GET, previous_response_id (streamed), DELETE, then a 404', async () => {
    const first = await client().responses.create({ model: c.model, input: 'My name is Ada.' });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    expect(await client().responses.retrieve(first.id)).toEqual(first);

    const second = await client()
      .responses.stream({
        model: c.model,
        input: 'Say hello',
        previous_response_id: first.id,
        instructions: 'Be brief.',
      })
      .finalResponse();
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe('Echo: Say hello');
    // The earlier turn and its answer went to the provider before the new input.
    const sent = JSON.stringify(c.fake().requests[1]?.body);
    expect(sent.indexOf('My name is Ada.')).toBeGreaterThan(-1);
    expect(sent.indexOf('Echo: My name is Ada.')).toBeGreaterThan(sent.indexOf('My name is Ada.'));
    expect(sent.indexOf('Say hello')).toBeGreaterThan(sent.indexOf('Echo: My name is Ada.'));
    expect((await client().responses.retrieve(second.id)).output_text).toBe('Echo: Say hello');

    expect(await client().responses.delete(first.id)).toEqual({
      id: first.id,
      object: 'response',
      deleted: true,
    });
    const gone = (await client()
      .responses.retrieve(first.id)
      .catch((e: unknown) => e)) as APIError;
    expect(gone.status).toBe(404);
    expect(gone.error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
    expect(gone.message).toContain(first.id);

    const unstored = await client().responses.create({ model: c.model, input: 'Hi', store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    const never = (await client()
      .responses.retrieve(unstored.id)
      .catch((e: unknown) => e)) as APIError;
    expect(never.status).toBe(404);
  });

  it('refuses OpenAI-only tools and previous_response_id with a 400 naming them', async () => {
    const tool = (await client()
      .responses.create({ model: c.model, input: 'News?', tools: [{ type: 'web_search' }] })
      .catch((e: unknown) => e)) as APIError;
    expect(tool.status).toBe(400);
    expect(tool.message).toContain('web_search');
    expect(tool.message).toContain(c.provider);
    const previous = (await client()
      .responses.create({ model: c.model, input: 'Go on', previous_response_id: 'resp_1' })
      .catch((e: unknown) => e)) as APIError;
    expect(previous.status).toBe(400);
    expect(previous.message).toContain('previous_response_id');
    expect(c.fake().requests).toHaveLength(0);
  });
});
