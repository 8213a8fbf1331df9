import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { openSse as openAnthropicSse, sse, startFakeAnthropic } from '../support/fake-anthropic';
import { chunk, openSse, sleep, sseData, startFakeOpenAI } from '../support/fake-openai';
import { responseEvents, startFakeApi } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { settledSpend, waitForLog } from '../support/gateway';

// The one stream relay, through the real server and the official clients, for every kind of stream:
// chat passed through (OpenAI's wire format), chat translated (Anthropic's), the Responses API, and
// Anthropic's Messages API.

const { gw, openai, anthropic, api } = useGateway({
  openai: startFakeOpenAI,
  anthropic: startFakeAnthropic,
  api: startFakeApi,
});

const viaAnthropic = () => ({
  'x-gateway-provider': 'anthropic',
  'x-gateway-custom-host': `${anthropic.url}/v1`,
});
const withConfig = (config: Record<string, unknown>) => ({ 'x-gateway-config': JSON.stringify(config) });
const guard = { output_guardrails: [{ type: 'contains', words: ['secret'], id: 'no-secret' }] };

/**
 * An Anthropic stream of `words`, each event written on its own, then its usage (`message_delta`) and
 * end; `last` replaces those closing events, and `holdMs` holds them back.
 */
async function anthropicStream(
  res: ServerResponse,
  model: string,
  words: string[],
  { last, holdMs = 0 }: { last?: string; holdMs?: number } = {},
) {
  openAnthropicSse(res);
  const message = {
    id: 'msg_relay',
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
  };
  res.write(
    sse('message_start', {
      type: 'message_start',
      message: { ...message, usage: { input_tokens: 25, output_tokens: 1 } },
    }),
  );
  res.write(
    sse('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
  );
  for (const text of words) {
    res.write(
      sse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text },
      }),
    );
    await sleep(5);
  }
  if (last !== undefined) {
    res.end(last);
    return;
  }
  await sleep(holdMs);
  if (res.destroyed) return;
  res.write(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
  res.write(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 40 },
    }),
  );
  res.end(sse('message_stop', { type: 'message_stop' }));
}

/** What a client saw of a stream read to its end (the text, the error it ended with) and its log entry. */
async function outcome(stream: AsyncIterable<unknown>, textOf: (part: unknown) => string, id: string | null) {
  let text = '';
  let error: unknown;
  try {
    for await (const part of stream) text += textOf(part);
  } catch (e) {
    error = e;
  }
  return { text, error, log: await waitForLog(gw, id as string) };
}

/** A chat completion streamed through the gateway with `headers`, read to its end. */
async function chatThrough(headers: Record<string, string>, model: string) {
  const { data, response } = await gw
    .client({ headers })
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
    .withResponse();
  return outcome(
    data,
    (p) => (p as OpenAI.Chat.Completions.ChatCompletionChunk).choices[0]?.delta.content ?? '',
    response.headers.get('x-gateway-request-id'),
  );
}

/** A Responses stream through the gateway with `headers`, read to its end. */
async function responsesThrough(headers: Record<string, string>, model: string) {
  const { data, response } = await gw
    .client({ headers })
    .responses.create({ model, input: 'hi', stream: true })
    .withResponse();
  return outcome(
    data,
    (e) => {
      const event = e as OpenAI.Responses.ResponseStreamEvent;
      return event.type === 'response.output_text.delta' ? event.delta : '';
    },
    response.headers.get('x-gateway-request-id'),
  );
}

const anthropicClient = (headers: Record<string, string>) =>
  new Anthropic({
    baseURL: gw.url.replace(/\/v1$/, ''),
    apiKey: 'sk-ant-caller',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': 'gwk_test_admin_key_0123456789', ...headers },
  });

describe('first_chunk_ms on every kind of stream', () => {
  const answerResponses = () =>
    api.on('POST /v1/responses', (req, res) => {
      openSse(res);
      for (const e of responseEvents(String(req.json.model), ['Hi ', 'there'])) res.write(e);
      res.end();
    });
  const messages = async (headers: Record<string, string>, model: string) => {
    const stream = anthropicClient(headers).messages.stream({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await stream.finalMessage();
    const { response } = await stream.withResponse();
    return {
      error: undefined,
      log: await waitForLog(gw, response.headers.get('x-gateway-request-id') as string),
    };
  };

  it.each([
    ['chat, passed through', () => chatThrough({ 'x-gateway-custom-host': openai.url }, 'gpt-4o-mini')],
    ['chat, translated', () => chatThrough(viaAnthropic(), 'claude-sonnet-4-6')],
    [
      'Responses',
      () => {
        answerResponses();
        return responsesThrough({ 'x-gateway-custom-host': api.url }, 'gpt-5.4-mini');
      },
    ],
    ['Responses through chat', () => responsesThrough(viaAnthropic(), 'claude-sonnet-4-6')],
    ['Messages, native', () => messages(viaAnthropic(), 'claude-sonnet-4-6')],
    [
      'Messages, translated',
      () => messages({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url }, 'gpt-4o-mini'),
    ],
  ])('%s', async (_, run) => {
    const { error, log } = await run();
    expect(error).toBeUndefined();
    expect(log.status).toBe(200);
    expect(log.stream).toBe(true);
    expect(typeof log.first_chunk_ms).toBe('number');
    expect(log.first_chunk_ms).toBeGreaterThanOrEqual(0);
  });
});

describe('output guardrails see a last event that came without its closing blank line', () => {
  it('chat passed through: the event is refused, never sent', async () => {
    openai.use(async (req, res) => {
      const model = String(req.body.model);
      openSse(res);
      res.write(sseData(chunk(model, { role: 'assistant', content: 'All is fine. ' })));
      await sleep(10);
      // The final event, then the end of the body, with no blank line after it.
      res.end(`data: ${JSON.stringify(chunk(model, { content: 'The secret is out.' }, 'stop'))}`);
    });
    const { text, error, log } = await chatThrough(
      withConfig({ custom_host: openai.url, ...guard }),
      'gpt-4o-mini',
    );
    expect(text).toBe('All is fine. ');
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain('no-secret');
    expect(log.status).toBe(446);
    expect(log.error.code).toBe('guardrail_denied');
  });

  it('chat translated from Anthropic: the event is refused, never sent', async () => {
    anthropic.use((req, res) =>
      anthropicStream(res, String(req.body.model), ['All is fine. '], {
        last: `event: content_block_delta\ndata: ${JSON.stringify({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'The secret is out.' },
        })}`,
      }),
    );
    const { text, error, log } = await chatThrough(
      withConfig({ provider: 'anthropic', custom_host: `${anthropic.url}/v1`, ...guard }),
      'claude-sonnet-4-6',
    );
    expect(text).toBe('All is fine. ');
    expect((error as APIError).message).toContain('no-secret');
    expect(log.status).toBe(446);
  });

  it('Responses: the event is refused, never sent', async () => {
    api.on('POST /v1/responses', (req, res) => {
      openSse(res);
      const events = responseEvents(String(req.json.model), ['All is fine. ', 'The secret is out.']);
      const last = events.findIndex((e) => e.includes('The secret is out.'));
      for (const e of events.slice(0, last)) res.write(e);
      res.end((events[last] as string).trimEnd());
    });
    const { text, error, log } = await responsesThrough(
      withConfig({ custom_host: api.url, ...guard }),
      'gpt-5.4-mini',
    );
    expect(text).toBe('All is fine. ');
    expect(String(error)).toContain('no-secret');
    expect(log.status).toBe(446);
  });
});

describe('a stream that fails after it began ends with an SSE error event', () => {
  it('chat translated from Anthropic: the stream ends before the message is complete', async () => {
    anthropic.use((req, res) =>
      anthropicStream(res, String(req.body.model), ['Hello ', 'wor'], { last: '' }),
    );
    const { text, error, log } = await chatThrough(viaAnthropic(), 'claude-sonnet-4-6');
    expect(text).toBe('Hello wor');
    expect(error).toBeInstanceOf(APIError);
    expect(log.status).toBe(502);
    expect(log.error.code).toBe('stream_truncated');
    expect(typeof log.first_chunk_ms).toBe('number');
  });

  it('Responses: the provider closes the connection mid-stream', async () => {
    api.on('POST /v1/responses', async (req, res) => {
      openSse(res);
      const events = responseEvents(String(req.json.model), ['Hi ', 'there']);
      for (const e of events.slice(0, 5)) res.write(e);
      await sleep(10);
      res.destroy();
    });
    const { text, error, log } = await responsesThrough({ 'x-gateway-custom-host': api.url }, 'gpt-5.4-mini');
    expect(text).toBe('Hi ');
    expect(error).toBeInstanceOf(Error);
    expect(log.status).toBeGreaterThanOrEqual(500);
    expect(log.usage.estimated).toBe(true);
  });
});

describe('a translated stream the client abandons', () => {
  /** Anthropic streams two words, and its usage (message_delta) only after `holdMs`. */
  const lateUsage = (holdMs: number, closed: { value: boolean }) =>
    anthropic.use(async (req, res) => {
      res.on('close', () => {
        closed.value = true;
      });
      await anthropicStream(res, String(req.body.model), ['one ', 'two '], { holdMs });
    });

  async function createAnthropicKey(slug: string) {
    const res = await gw.api('POST', '/virtual-keys', {
      name: slug,
      slug,
      provider: 'anthropic',
      key: 'sk-ant-budget',
      custom_host: `${anthropic.url}/v1`,
      budget_limit: 5,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  async function abandon(slug: string): Promise<string> {
    const stream = await gw
      .client({ headers: { 'x-gateway-provider': `@${slug}` } })
      .chat.completions.create({
        model: 'claude-sonnet-4-6',
        messages: [{ role: 'user', content: 'go' }],
        stream: true,
      })
      .withResponse();
    for await (const part of stream.data) if (part.choices[0]?.delta.content) break;
    return stream.response.headers.get('x-gateway-request-id') as string;
  }

  it("is charged Anthropic's usage from message_delta when it arrives after the client left", async () => {
    await createAnthropicKey('ant-late-usage');
    const closed = { value: false };
    lateUsage(300, closed);
    const entry = await waitForLog(gw, await abandon('ant-late-usage'));
    expect(entry.status).toBe(499);
    expect(entry.usage).toMatchObject({ prompt_tokens: 25, completion_tokens: 40 });
    expect(entry.usage.estimated).toBeUndefined();
    // claude-sonnet-4-6: 3 USD per million input tokens, 15 per million output tokens.
    expect(entry.cost).toBeCloseTo((25 * 3 + 40 * 15) / 1e6, 12);
    expect(await settledSpend(gw, 'ant-late-usage')).toBeCloseTo(entry.cost, 12);
    for (let i = 0; i < 50 && !closed.value; i++) await sleep(20);
    expect(closed.value).toBe(true);
  });

  it('is charged an estimate when the usage does not come within GATEWAY_ABANDONED_STREAM_DRAIN_MS', async () => {
    await createAnthropicKey('ant-no-usage');
    const closed = { value: false };
    lateUsage(1500, closed);
    process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS = '50';
    loadSettings();
    try {
      const entry = await waitForLog(gw, await abandon('ant-no-usage'));
      expect(entry.status).toBe(499);
      expect(entry.usage.estimated).toBe(true);
      expect(entry.usage.prompt_tokens).toBeGreaterThan(0);
      expect(entry.usage.completion_tokens).toBeGreaterThan(0);
      expect(entry.usage.completion_tokens).not.toBe(40);
      expect(entry.cost).toBeGreaterThan(0);
      expect(await settledSpend(gw, 'ant-no-usage')).toBeCloseTo(entry.cost, 12);
      // The upstream is cut once the drain window is over, long before the provider would have ended.
      for (let i = 0; i < 50 && !closed.value; i++) await sleep(20);
      expect(closed.value).toBe(true);
    } finally {
      delete process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS;
      loadSettings();
    }
  });
});
