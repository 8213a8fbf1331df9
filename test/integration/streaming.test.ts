import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { chunk, openSse, sleep, sseData, startFakeOpenAI, streamWords } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Say hello' }] };

describe('streaming chat completions', () => {
  it('delivers the first chunk before the upstream has sent the second', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let releasedByClient = false;
    let winner = '';
    fake.use(async (req, res) => {
      const model = String(req.body.model);
      openSse(res);
      res.write(sseData(chunk(model, { role: 'assistant', content: 'first' }, null, null)));
      // Hold the second chunk until the client has the first (or give up after 5 s and let the test fail).
      winner = await Promise.race([released.then(() => 'client'), sleep(3000).then(() => 'timeout')]);
      res.write(sseData(chunk(model, { content: ' second' }, 'stop', null)));
      res.write(
        sseData({
          id: 'x',
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        }),
      );
      res.end(sseData('[DONE]'));
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const contents: string[] = [];
    for await (const part of stream) {
      const text = part.choices[0]?.delta.content;
      if (text) contents.push(text);
      if (text === 'first') {
        releasedByClient = true;
        release();
      }
    }
    expect(releasedByClient).toBe(true);
    expect(winner).toBe('client');
    expect(contents.join('')).toBe('first second');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      stream: true,
      status: 200,
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    });
  });

  it('asks the upstream for usage, hides the usage chunk from a client that did not ask, and logs the reassembled message', async () => {
    fake.use((req, res) => streamWords(req, res, ['Hel', 'lo', '!'], 20));
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect(parts.every((p) => p.choices.length > 0)).toBe(true);
    expect(parts.some((p) => p.usage)).toBe(false);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.response.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'Hello!' },
      finish_reason: 'stop',
    });
    expect(log.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(log.cost).toBeCloseTo((12 * 0.15 + 3 * 0.6) / 1e6, 12);
    expect(log.request.stream_options).toBeUndefined();
  });

  it('keeps the usage chunk for a client that asked for it', async () => {
    fake.use((req, res) => streamWords(req, res, ['a', 'b']));
    const stream = await client().chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const part of stream) if (part.usage) usage = part.usage;
    expect(usage).toEqual({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 });
  });

  it('reassembles streamed tool calls for the log', async () => {
    fake.use(async (req, res) => {
      const model = String(req.body.model);
      openSse(res);
      res.write(
        sseData(
          chunk(model, {
            role: 'assistant',
            content: null,
            tool_calls: [
              { index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } },
            ],
          }),
        ),
      );
      res.write(sseData(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] })));
      res.write(sseData(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] })));
      res.write(sseData(chunk(model, {}, 'tool_calls')));
      res.end(sseData('[DONE]'));
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    let finish: string | null | undefined;
    for await (const part of stream) finish = part.choices[0]?.finish_reason ?? finish;
    expect(finish).toBe('tool_calls');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.response.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
    ]);
    expect(log.response.choices[0].finish_reason).toBe('tool_calls');
  });

  it('survives empty-choices and usage-only chunks and \\r\\n framing', async () => {
    fake.use(async (req, res) => {
      const model = String(req.body.model);
      openSse(res);
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model, choices: [] })}\r\n\r\n`,
      );
      res.write(`: keep-alive comment\r\n\r\n`);
      res.write(`data: ${JSON.stringify(chunk(model, { content: 'ok' }, 'stop'))}\r\n\r\n`);
      res.end('data: [DONE]\r\n\r\n');
    });
    const stream = await client().chat.completions.create({ ...ask, stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('ok');
  });

  it('ends a stream the upstream cuts with an SSE error event, never a silent truncation, and logs it', async () => {
    fake.use(async (req, res) => {
      openSse(res);
      res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'partial' })));
      await sleep(20);
      res.socket?.destroy();
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    let text = '';
    const failure = await (async () => {
      try {
        for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
      } catch (error) {
        return error;
      }
    })();
    expect(text).toBe('partial');
    expect(failure).toBeInstanceOf(APIError);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(502);
    expect(log.error).toMatchObject({ origin: expect.any(String) });
    expect(log.response.choices[0].message.content).toBe('partial');
  });

  it('ends with an SSE error when the upstream closes cleanly without [DONE]', async () => {
    fake.use(async (req, res) => {
      openSse(res);
      res.end(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'half' })));
    });
    const stream = await client().chat.completions.create({ ...ask, stream: true });
    await expect(async () => {
      for await (const _ of stream) {
        // drain
      }
    }).rejects.toThrow(/ended the stream before it was complete/);
  });

  it('passes a provider error event inside a 200 stream on to the client as an error', async () => {
    fake.use(async (req, res) => {
      openSse(res);
      res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'a' })));
      res.end(
        sseData({
          error: { message: 'Overloaded mid-stream', type: 'server_error', code: 'overloaded', param: null },
        }),
      );
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    await expect(async () => {
      for await (const _ of stream) {
        // drain
      }
    }).rejects.toThrow(/Overloaded mid-stream/);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(502);
    expect(log.error.message).toBe('Overloaded mid-stream');
  });

  it('stops the upstream call when the client disconnects, and still logs the request', async () => {
    let upstreamClosed = false;
    fake.use(async (req, res) => {
      openSse(res);
      res.on('close', () => {
        upstreamClosed = true;
      });
      res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'tick' })));
      for (let i = 0; i < 100 && !upstreamClosed; i++) {
        await sleep(50);
        if (!res.writableEnded && !upstreamClosed)
          res.write(sseData(chunk(String(req.body.model), { content: '.' })));
      }
      if (!upstreamClosed) res.end(sseData('[DONE]'));
    });
    const { data: stream, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    for await (const part of stream) {
      if (part.choices[0]?.delta.content === 'tick') break; // leaving the loop aborts the request
    }
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(499);
    expect(log.stream).toBe(true);
    for (let i = 0; i < 50 && !upstreamClosed; i++) await sleep(20);
    expect(upstreamClosed).toBe(true);
  });
});

describe('a streamed event goes out as soon as it is complete, not with a later one', () => {
  /**
   * The upstream writes its stream up to `held` (in pieces cut at `splits`, a few ms apart), then holds
   * the rest until the client has read the first chunk, or for 3 s. Returns what the client read and
   * which came first: the client's release or the timeout.
   */
  async function heldStream(
    cut: (events: string[]) => { held: number; splits?: number[] },
    headers: Record<string, string> = {},
  ) {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let winner = '';
    fake.use(async (req, res) => {
      const model = String(req.body.model);
      const events = [
        sseData(chunk(model, { role: 'assistant', content: 'first' })),
        sseData(chunk(model, { content: ' second' }, 'stop')),
        sseData(chunk(model, {}, null, { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 })),
        sseData('[DONE]'),
      ];
      const all = events.join('');
      const { held, splits = [] } = cut(events);
      openSse(res);
      let from = 0;
      for (const at of [...splits, held]) {
        res.write(all.slice(from, at));
        from = at;
        await sleep(10);
      }
      winner = await Promise.race([released.then(() => 'client'), sleep(3000).then(() => 'timeout')]);
      res.end(all.slice(held));
    });
    const stream = await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url, ...headers } })
      .chat.completions.create({ ...ask, stream: true });
    let text = '';
    for await (const part of stream) {
      const content = part.choices[0]?.delta.content ?? '';
      if (content === 'first') release();
      text += content;
    }
    return { text, winner };
  }

  it('sends the first event while the rest of the read that completed it is the start of the next', async () => {
    const seen = await heldStream((events) => ({ held: (events[0] as string).length + 20 }));
    expect(seen).toEqual({ text: 'first second', winner: 'client' });
  });

  it('sends the first event once its last bytes arrive, when the upstream wrote it in two pieces', async () => {
    const seen = await heldStream((events) => ({ held: (events[0] as string).length, splits: [25] }));
    expect(seen).toEqual({ text: 'first second', winner: 'client' });
  });

  it('sends the first event before the next one comes when output guardrails read the stream', async () => {
    const config = { output_guardrails: [{ type: 'contains', words: ['secret'], id: 'no-secret' }] };
    const seen = await heldStream((events) => ({ held: (events[0] as string).length }), {
      'x-gateway-config': JSON.stringify(config),
    });
    expect(seen).toEqual({ text: 'first second', winner: 'client' });
  });
});
