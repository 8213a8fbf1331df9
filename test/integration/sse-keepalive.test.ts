import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { chunk, openSse, sseData, startFakeOpenAI, streamWords } from '../support/fake-openai';
import { responseEvents, startFakeApi } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';

// Keep-alive comments keep CloudFront's 60 s origin read timeout from cutting a stream whose upstream
// is silent (a reasoning model thinking); the interval is made small here so the test runs fast.
const { gw, fake, api } = useGateway({ fake: startFakeOpenAI, api: startFakeApi });
const saved = process.env.GATEWAY_SSE_KEEPALIVE_MS;
afterEach(() => {
  if (saved === undefined) delete process.env.GATEWAY_SSE_KEEPALIVE_MS;
  else process.env.GATEWAY_SSE_KEEPALIVE_MS = saved;
  loadSettings();
});

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Think hard' }] };

/** An upstream that sends its first chunk, then says nothing until `release` is called. */
function pausingUpstream() {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  fake.use(async (req, res) => {
    const model = String(req.body.model);
    openSse(res);
    res.write(sseData(chunk(model, { role: 'assistant', content: 'Let me' }, null, null)));
    await released;
    res.write(sseData(chunk(model, { content: ' think.' }, 'stop', null)));
    res.end(sseData('[DONE]'));
  });
  return release;
}

/** A fetch that hands the SDK its body while watching the raw bytes; releases the upstream on a comment. */
function watchingFetch(onRaw: (text: string) => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const decoder = new TextDecoder();
    const watch = new TransformStream<Uint8Array, Uint8Array>({
      transform(bytes, controller) {
        onRaw(decoder.decode(bytes, { stream: true }));
        controller.enqueue(bytes);
      },
    });
    return new Response(response.body.pipeThrough(watch), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

describe('SSE keep-alive during upstream silence', () => {
  it('writes a comment while the upstream is silent, and the openai SDK still parses the stream', async () => {
    process.env.GATEWAY_SSE_KEEPALIVE_MS = '100';
    loadSettings();
    const release = pausingUpstream();
    let raw = '';
    const client = gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
    const withWatch = client.withOptions({
      fetch: watchingFetch((text) => {
        raw += text;
        // The upstream speaks again only once the client has seen a keep-alive.
        if (raw.includes(': keep-alive\n\n')) release();
      }),
    });
    const stream = await withWatch.chat.completions.create({ ...ask, stream: true });
    let content = '';
    for await (const part of stream) content += part.choices[0]?.delta.content ?? '';
    expect(content).toBe('Let me think.');
    // The comment sits between whole events, never inside one.
    expect(raw).toMatch(/\n\n: keep-alive\n\n(: keep-alive\n\n)*data: /);
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('keeps a Responses stream alive too', async () => {
    process.env.GATEWAY_SSE_KEEPALIVE_MS = '100';
    loadSettings();
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    api.on('POST /v1/responses', async (req, res) => {
      const events = responseEvents(String(req.json.model), ['Hel', 'lo']);
      openSse(res);
      res.write(events[0]);
      await released;
      for (const e of events.slice(1)) res.write(e);
      res.end();
    });
    const res = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-provider-key',
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': api.url,
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'Think hard', stream: true }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.body).not.toBeNull();
    const decoder = new TextDecoder();
    let raw = '';
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      raw += decoder.decode(bytes, { stream: true });
      if (raw.includes(': keep-alive\n\n')) release();
    }
    expect(raw).toContain('\n\n: keep-alive\n\n');
    expect(raw).toContain('response.completed');
  });

  it('sends no comment when the upstream is not silent', async () => {
    // An interval far longer than the whole stream takes: nothing is ever silent that long.
    process.env.GATEWAY_SSE_KEEPALIVE_MS = '30000';
    loadSettings();
    fake.use((req, res) => streamWords(req, res, ['One', ' two', ' three']));
    let raw = '';
    const client = gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .withOptions({ fetch: watchingFetch((text) => (raw += text)) });
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let content = '';
    for await (const part of stream) content += part.choices[0]?.delta.content ?? '';
    expect(content).toBe('One two three');
    expect(raw).toContain('data: ');
    expect(raw).not.toContain('keep-alive');
  });
});
