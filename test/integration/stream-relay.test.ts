import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_USAGE,
  openSse as openAnthropicSse,
  sse,
  startFakeAnthropic,
} from '../support/fake-anthropic';
import { chunk, openSse, sleep, sseData, startFakeOpenAI } from '../support/fake-openai';
import { responseEvents, startFakeApi } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

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

/** An Anthropic stream of `words`, each event written on its own; `last` replaces the closing events. */
async function anthropicStream(res: ServerResponse, model: string, words: string[], last?: string) {
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
      message: { ...message, usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } },
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
  res.write(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
  res.write(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 7 },
    }),
  );
  res.end(sse('message_stop', { type: 'message_stop' }));
}

/** Reads an OpenAI-client stream to its end; returns the text and the error it ended with, if any. */
async function readChat(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  try {
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
  } catch (error) {
    return { text, error };
  }
  return { text, error: undefined };
}

async function readResponses(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) {
  let text = '';
  try {
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
  } catch (error) {
    return { text, error };
  }
  return { text, error: undefined };
}

const anthropicClient = (headers: Record<string, string>) =>
  new Anthropic({
    baseURL: gw.url.replace(/\/v1$/, ''),
    apiKey: 'sk-ant-caller',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': 'gwk_test_admin_key_0123456789', ...headers },
  });

describe('first_chunk_ms on every kind of stream', () => {
  const chat = (headers: Record<string, string>, model: string) => async () => {
    const { data, response } = await gw
      .client({ headers })
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    expect((await readChat(data)).error).toBeUndefined();
    return response.headers.get('x-gateway-request-id') as string;
  };
  const responses = (headers: () => Record<string, string>, model: string) => async () => {
    api.on('POST /v1/responses', (req, res) => {
      openSse(res);
      for (const e of responseEvents(String(req.json.model), ['Hi ', 'there'])) res.write(e);
      res.end();
    });
    const { data, response } = await gw
      .client({ headers: headers() })
      .responses.create({ model, input: 'hi', stream: true })
      .withResponse();
    expect((await readResponses(data)).error).toBeUndefined();
    return response.headers.get('x-gateway-request-id') as string;
  };
  const messages = (headers: () => Record<string, string>, model: string) => async () => {
    const stream = anthropicClient(headers()).messages.stream({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await stream.finalMessage();
    const { response } = await stream.withResponse();
    return response.headers.get('x-gateway-request-id') as string;
  };

  it.each([
    ['chat, passed through', () => chat({ 'x-gateway-custom-host': openai.url }, 'gpt-4o-mini')],
    ['chat, translated', () => chat(viaAnthropic(), 'claude-sonnet-4-6')],
    ['Responses', () => responses(() => ({ 'x-gateway-custom-host': api.url }), 'gpt-5.4-mini')],
    ['Responses through chat', () => responses(viaAnthropic, 'claude-sonnet-4-6')],
    ['Messages, native', () => messages(viaAnthropic, 'claude-sonnet-4-6')],
    [
      'Messages, translated',
      () =>
        messages(
          () => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url }),
          'gpt-4o-mini',
        ),
    ],
  ])('%s', async (_, run) => {
    const id = await run()();
    const log = await waitForLog(gw, id);
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
    const { data, response } = await gw
      .client({ headers: withConfig({ custom_host: openai.url, ...guard }) })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    const { text, error } = await readChat(data);
    expect(text).toBe('All is fine. ');
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain('no-secret');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(446);
    expect(log.error.code).toBe('guardrail_denied');
  });

  it('chat translated from Anthropic: the event is refused, never sent', async () => {
    anthropic.use((req, res) =>
      anthropicStream(
        res,
        String(req.body.model),
        ['All is fine. '],
        `event: content_block_delta\ndata: ${JSON.stringify({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'The secret is out.' },
        })}`,
      ),
    );
    const { data, response } = await gw
      .client({
        headers: withConfig({ provider: 'anthropic', custom_host: `${anthropic.url}/v1`, ...guard }),
      })
      .chat.completions.create({
        model: 'claude-sonnet-4-6',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    const { text, error } = await readChat(data);
    expect(text).toBe('All is fine. ');
    expect((error as APIError).message).toContain('no-secret');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
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
    const { data, response } = await gw
      .client({ headers: withConfig({ custom_host: api.url, ...guard }) })
      .responses.create({ model: 'gpt-5.4-mini', input: 'hi', stream: true })
      .withResponse();
    const { text, error } = await readResponses(data);
    expect(text).toBe('All is fine. ');
    expect(String(error)).toContain('no-secret');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(446);
  });
});

describe('a stream that fails after it began ends with an SSE error event', () => {
  it('chat translated from Anthropic: the upstream cut mid-stream', async () => {
    anthropic.use(async (req, res) => {
      await anthropicStream(res, String(req.body.model), ['Hello ', 'wor'], '');
    });
    const { data, response } = await gw
      .client({ headers: viaAnthropic() })
      .chat.completions.create({
        model: 'claude-sonnet-4-6',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    const { text, error } = await readChat(data);
    expect(text).toBe('Hello wor');
    expect(error).toBeInstanceOf(APIError);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
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
    const { data, response } = await gw
      .client({ headers: { 'x-gateway-custom-host': api.url } })
      .responses.create({ model: 'gpt-5.4-mini', input: 'hi', stream: true })
      .withResponse();
    const { text, error } = await readResponses(data);
    expect(text).toBe('Hi ');
    expect(error).toBeInstanceOf(Error);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBeGreaterThanOrEqual(500);
    expect(log.usage.estimated).toBe(true);
  });
});

describe('a translated stream the client abandons', () => {
  /** Anthropic streams two words at once, and its usage (message_delta) only after `delayMs`. */
  const lateUsage = (delayMs: number, closed: { value: boolean }) =>
    anthropic.use(async (req, res) => {
      res.on('close', () => {
        closed.value = true;
      });
      openAnthropicSse(res);
      const model = String(req.body.model);
      res.write(
        sse('message_start', {
          type: 'message_start',
          message: {
            id: 'msg_late',
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            usage: { input_tokens: 25, output_tokens: 1 },
          },
        }),
      );
      res.write(
        sse('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
      );
      for (const text of ['one ', 'two ']) {
        res.write(
          sse('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text },
          }),
        );
      }
      await sleep(delayMs);
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

  /** Polls a key's spend until it stops changing: settlements land just after the log entry. */
  async function settledSpend(slug: string): Promise<number> {
    const read = async () => Number((await gw.api('GET', `/virtual-keys/${slug}`)).body.spent);
    let last = await read();
    for (let i = 0; i < 100; i++) {
      await sleep(30);
      const now = await read();
      if (now === last && now > 0) return now;
      last = now;
    }
    return last;
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
    expect(await settledSpend('ant-late-usage')).toBeCloseTo(entry.cost, 12);
    for (let i = 0; i < 50 && !closed.value; i++) await sleep(20);
    expect(closed.value).toBe(true);
  });

  it('is charged an estimate when the usage does not come within GATEWAY_ABANDONED_STREAM_DRAIN_MS', async () => {
    await createAnthropicKey('ant-no-usage');
    const closed = { value: false };
    lateUsage(1500, closed);
    process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS = '50';
    try {
      const entry = await waitForLog(gw, await abandon('ant-no-usage'));
      expect(entry.status).toBe(499);
      expect(entry.usage.estimated).toBe(true);
      expect(entry.usage.prompt_tokens).toBeGreaterThan(0);
      expect(entry.usage.completion_tokens).toBeGreaterThan(0);
      expect(entry.usage.completion_tokens).not.toBe(40);
      expect(entry.cost).toBeGreaterThan(0);
      expect(await settledSpend('ant-no-usage')).toBeCloseTo(entry.cost, 12);
      // The upstream is cut once the drain window is over, long before the provider would have ended.
      for (let i = 0; i < 50 && !closed.value; i++) await sleep(20);
      expect(closed.value).toBe(true);
    } finally {
      delete process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS;
    }
  });
});
