import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { chunk, openSse, sendJson, sleep, sseData, startFakeOpenAI } from '../support/fake-openai';
import { video } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { createVirtualKey, settledSpend as spendOf, waitForLog } from '../support/gateway';

// Every priced operation reserves the most it can cost before its call, like chat. An embedding of a
// 100,000-character input is bounded by the 100,002 bytes of the input's JSON; the fake reports exactly
// that many tokens, so each request costs its whole reservation (text-embedding-3-large, 0.13 USD per
// million: 0.01300026 USD). A DALL·E 3 HD portrait costs 0.12 USD, which is also its reservation.
const INPUT = 'a'.repeat(100_000);
const EMBEDDING_TOKENS = INPUT.length + 2;
const EMBEDDING_USD = (EMBEDDING_TOKENS * 0.13) / 1e6;
const IMAGE_USD = 0.12;

const { gw, fake } = useGateway({ fake: startFakeOpenAI });
const settledSpend = (slug: string) => spendOf(gw, slug);
beforeEach(() => {
  fake.use(async (req, res) => {
    // Slow enough that every request of a flood is in flight before the first is settled.
    await sleep(20);
    if (req.path.startsWith('/v1/embeddings')) {
      sendJson(res, 200, {
        object: 'list',
        model: req.body.model,
        data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
        usage: { prompt_tokens: EMBEDDING_TOKENS, total_tokens: EMBEDDING_TOKENS },
      });
    } else {
      sendJson(res, 200, { created: 1, data: [{ url: 'https://images.example/1.png' }] });
    }
  });
});

const newKey = (slug: string, body: Record<string, unknown> = {}) =>
  createVirtualKey(gw, fake.url, slug, body);

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => {
      if (!(e instanceof OpenAI.APIError)) throw e;
      expect(e.status).toBe(412);
      expect(e.code).toBe('budget_exceeded');
      return 412;
    },
  );

describe('every priced operation reserves its cost', () => {
  it('concurrent embeddings against a budget worth 10 of them serve 10 and spend at most the limit', async () => {
    const limit = EMBEDDING_USD * 10.5;
    await newKey('vk-embed', { budget_limit: limit });
    const client = gw.client({ headers: { 'x-gateway-provider': '@vk-embed' } });
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        statusOf(
          client.embeddings.create({
            model: 'text-embedding-3-large',
            input: INPUT,
            encoding_format: 'float',
          }),
        ),
      ),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(10);
    expect(fake.requests.length).toBe(10);
    const spent = await settledSpend('vk-embed');
    expect(spent).toBeCloseTo(EMBEDDING_USD * 10, 10);
    expect(spent).toBeLessThanOrEqual(limit);
  });

  it('concurrent image generations against a budget worth 3 of them serve 3 and spend at most the limit', async () => {
    const limit = IMAGE_USD * 3 + 0.05;
    await newKey('vk-images', { budget_limit: limit });
    const client = gw.client({ headers: { 'x-gateway-provider': '@vk-images' } });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () =>
        statusOf(
          client.images.generate({
            model: 'dall-e-3',
            prompt: 'a lighthouse',
            quality: 'hd',
            size: '1024x1792',
          }),
        ),
      ),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(3);
    expect(fake.requests.length).toBe(3);
    const spent = await settledSpend('vk-images');
    expect(spent).toBeCloseTo(IMAGE_USD * 3, 10);
    expect(spent).toBeLessThanOrEqual(limit);
  });

  it('an unpriced embedding model is refused under a budget and served without one', async () => {
    await newKey('vk-embed-budget', { budget_limit: 5 });
    await newKey('vk-embed-free');
    const create = (slug: string) =>
      gw
        .client({ headers: { 'x-gateway-provider': `@${slug}` } })
        .embeddings.create({ model: 'house-embedder', input: 'hi', encoding_format: 'float' });
    const refused = await create('vk-embed-budget').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_priced');
    expect(fake.requests.length).toBe(0);
    expect((await create('vk-embed-free')).data).toHaveLength(1);
  });

  it('speech reserves its cost: a budget smaller than one input is refused before the call', async () => {
    // tts-1 costs 15 USD per million characters: 10,000 characters are 0.15 USD.
    await newKey('vk-speech', { budget_limit: 0.1 });
    const client = gw.client({ headers: { 'x-gateway-provider': '@vk-speech' } });
    const refused = await client.audio.speech
      .create({ model: 'tts-1', voice: 'alloy', input: 'b'.repeat(10_000) })
      .catch((e: unknown) => e);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(412);
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).toBe('virtual_key');
    expect(fake.requests.length).toBe(0);
  });
});

describe('videos reserve their cost', () => {
  it('refuses a video the budget cannot cover, and charges a created one so the next no longer fits', async () => {
    // sora-2 costs 0.10 USD a second: 8 seconds reserve 0.80 USD, and the creation is charged that price.
    // Changed: a creation used to be charged nothing, and the price only once a read through the gateway
    // showed the video completed, so two creations fitted a 1 USD budget (#20, nothing free by accident).
    fake.use((req, res) =>
      sendJson(
        res,
        200,
        video(
          req.path === '/v1/videos' ? 'video_budget1' : (req.path.split('/').pop() ?? ''),
          'sora-2',
          req.method === 'POST' ? 'queued' : 'completed',
        ),
      ),
    );
    await newKey('vk-video-small', { budget_limit: 0.5 });
    await newKey('vk-video', { budget_limit: 1 });
    const create = (slug: string) =>
      gw
        .client({ headers: { 'x-gateway-provider': `@${slug}` } })
        .videos.create({ model: 'sora-2', prompt: 'A lighthouse', seconds: '8' });

    const refused = await create('vk-video-small').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(412);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('budget_exceeded');
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).toBe('virtual_key');
    expect(fake.requests.length).toBe(0);

    const { data: first, response } = await create('vk-video').withResponse();
    expect(first.status).toBe('queued');
    expect((await waitForLog(gw, response.headers.get('x-gateway-request-id') ?? '')).cost).toBeCloseTo(
      0.8,
      10,
    );
    expect(await settledSpend('vk-video')).toBeCloseTo(0.8, 10);
    const over = await create('vk-video').catch((e: unknown) => e);
    expect((over as InstanceType<typeof OpenAI.APIError>).status).toBe(412);
    expect(fake.requests.length).toBe(1);

    // Reading it back completed charges nothing more.
    const done = await gw
      .client({ headers: { 'x-gateway-provider': '@vk-video' } })
      .videos.retrieve('video_budget1');
    expect(done.status).toBe('completed');
    expect(await settledSpend('vk-video')).toBeCloseTo(0.8, 10);
  });
});

describe('refusals name one holder, whichever refuses first', () => {
  it('names the virtual key before the user when both refuse', async () => {
    const ws = await gw.api('POST', '/workspaces', { name: 'ws-order', slug: 'ws-order' });
    expect(ws.status).toBe(201);
    const patched = await gw.api('PATCH', '/workspaces/ws-order', {
      policy: { user_limits: { budget_limit: 0.000001 } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const key = await gw.api('POST', '/api-keys', {
      name: 'order',
      type: 'workspace',
      workspace: 'ws-order',
      scopes: ['completions.write'],
    });
    expect(key.status).toBe(201);
    const vk = await gw.api('POST', '/virtual-keys?workspace=ws-order', {
      name: 'vk-order',
      slug: 'vk-order',
      workspace: 'ws-order',
      provider: 'openai',
      key: 'sk-budget',
      custom_host: fake.url,
      budget_limit: 0.000001,
    });
    expect(vk.status, JSON.stringify(vk.body)).toBe(201);
    const client = gw.client({ gatewayKey: key.body.key, headers: { 'x-gateway-provider': '@vk-order' } });
    for (let i = 0; i < 3; i++) {
      const error = await client.embeddings
        .create({ model: 'text-embedding-3-large', input: INPUT, user: 'carol', encoding_format: 'float' })
        .then(
          () => undefined,
          (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
        );
      expect(error?.status).toBe(412);
      expect(error?.param).toBe('virtual_key');
    }
    expect(fake.requests.length).toBe(0);
  });
});

describe('a stream the client abandons', () => {
  /** A provider that streams three words at once and its usage chunk only after `delayMs`. */
  const lateUsage = (delayMs: number) =>
    fake.use(async (req, res) => {
      const model = String(req.body.model);
      openSse(res);
      for (const word of ['one ', 'two ', 'three ']) res.write(sseData(chunk(model, { content: word })));
      await sleep(delayMs);
      if (res.destroyed) return;
      res.write(sseData(chunk(model, {}, 'stop')));
      res.write(
        sseData({
          id: 'chatcmpl-late',
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [],
          usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        }),
      );
      res.end(sseData('[DONE]'));
    });

  async function abandon(slug: string): Promise<string> {
    const stream = await gw
      .client({ headers: { 'x-gateway-provider': `@${slug}` } })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'go' }],
        stream: true,
      })
      .withResponse();
    for await (const _ of stream.data) break;
    return stream.response.headers.get('x-gateway-request-id') as string;
  }

  it("is charged the provider's usage when it arrives after the client left", async () => {
    await newKey('vk-late-usage', { budget_limit: 5 });
    lateUsage(300);
    const entry = await waitForLog(gw, await abandon('vk-late-usage'));
    expect(entry.status).toBe(499);
    expect(entry.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(entry.usage.estimated).toBeUndefined();
    // gpt-4o-mini: 0.15 USD per million input tokens, 0.60 per million output tokens.
    expect(entry.cost).toBeCloseTo((11 * 0.15 + 7 * 0.6) / 1e6, 12);
    expect(await settledSpend('vk-late-usage')).toBeCloseTo(entry.cost, 12);
  });

  it('falls back to the estimate when the usage does not come within GATEWAY_ABANDONED_STREAM_DRAIN_MS', async () => {
    await newKey('vk-no-usage', { budget_limit: 5 });
    lateUsage(1500);
    process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS = '50';
    loadSettings();
    try {
      const entry = await waitForLog(gw, await abandon('vk-no-usage'));
      expect(entry.status).toBe(499);
      expect(entry.usage.estimated).toBe(true);
      expect(entry.usage.completion_tokens).toBeGreaterThan(0);
      expect(entry.cost).toBeGreaterThan(0);
    } finally {
      delete process.env.GATEWAY_ABANDONED_STREAM_DRAIN_MS;
      loadSettings();
    }
  });
});
