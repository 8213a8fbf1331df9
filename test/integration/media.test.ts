import { APIError, toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { sendJson, sleep } from '../support/fake-openai';
import { formFields, startFakeApi, video } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';
import { schemaErrors } from '../support/openai-schema';

const { gw, fake } = useGateway({ fake: startFakeApi });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
const requestId = (response: Response) => response.headers.get('x-gateway-request-id') as string;
// Bytes that are not valid UTF-8, to prove uploads are relayed byte for byte.
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x80, 0xc3]);

describe('images', () => {
  it('generates with dall-e-3 and logs the per-image price by size and quality', async () => {
    const { data, response } = await client()
      .images.generate({ model: 'dall-e-3', prompt: 'A lighthouse', size: '1024x1792', quality: 'hd', n: 1 })
      .withResponse();
    expect(data.data?.[0]?.url).toBe('https://example.com/i.png');
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({ operation: 'images.generations', model: 'dall-e-3', status: 200 });
    expect(log.cost).toBeCloseTo(0.12, 12);
  });

  it('costs gpt-image-1 by the token usage it reports', async () => {
    const { response } = await client()
      .images.generate({ model: 'gpt-image-1', prompt: 'A lighthouse', size: '1024x1024', quality: 'low' })
      .withResponse();
    const log = await waitForLog(gw, requestId(response));
    expect(log.usage).toMatchObject({ prompt_tokens: 50, completion_tokens: 1050 });
    expect(log.cost).toBeCloseTo((50 * 5 + 1050 * 40) / 1e6, 12);
  });

  it('refuses a size that is not <width>x<height>', async () => {
    const failure = (await client()
      .images.generate({ model: 'dall-e-2', prompt: 'x', size: 'huge' as never })
      .catch((e: unknown) => e)) as APIError;
    expect(failure).toBeInstanceOf(APIError);
    expect(failure.status).toBe(400);
    expect(failure.param).toBe('size');
    expect(fake.requests).toHaveLength(0);
  });

  it('relays an edit upload byte for byte with the client boundary, and costs its token usage', async () => {
    const { data, response } = await client()
      .images.edit({
        model: 'gpt-image-1',
        image: await toFile(BINARY, 'photo.png', { type: 'image/png' }),
        prompt: 'Add a hat',
      })
      .withResponse();
    expect(data.data?.[0]?.b64_json).toBe('ZWRpdGVk');
    const upstream = fake.requests[0];
    expect(upstream?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upstream?.raw.includes(BINARY)).toBe(true);
    expect(formFields(upstream as never)).toMatchObject({ model: 'gpt-image-1', prompt: 'Add a hat' });
    const log = await waitForLog(gw, requestId(response));
    expect(log.request).toMatchObject({
      content_type: 'multipart/form-data',
      fields: { model: 'gpt-image-1', prompt: 'Add a hat' },
      files: [{ name: 'image', filename: 'photo.png', content_type: 'image/png', bytes: BINARY.length }],
    });
    expect(log.cost).toBeCloseTo((30 * 5 + 320 * 10 + 1050 * 40) / 1e6, 12);
  });

  it('relays a variation and prices it as dall-e-2', async () => {
    const { response } = await client()
      .images.createVariation({
        image: await toFile(BINARY, 'a.png', { type: 'image/png' }),
        size: '512x512',
      })
      .withResponse();
    const log = await waitForLog(gw, requestId(response));
    expect(log.cost).toBeCloseTo(0.018, 12);
  });
});

describe('video', () => {
  it('starts a generation and logs its price with the creation, never again when a read shows it completed', async () => {
    // Changed: the price used to be logged by the first read showing the video completed, so a video
    // nobody read back through the gateway was never paid for (#20, nothing is free by accident).
    const c = client();
    const { data: created, response } = await c.videos
      .create({ model: 'sora-2', prompt: 'A cat on a skateboard' })
      .withResponse();
    expect(created).toMatchObject({ id: 'video_fake1', status: 'queued' });
    const createdLog = await waitForLog(gw, requestId(response));
    // sora-2: $0.10 per second, 8 seconds.
    expect(createdLog).toMatchObject({ operation: 'videos.create', model: 'sora-2' });
    expect(createdLog.cost).toBeCloseTo(0.8, 12);

    fake.on('GET /v1/videos/{id}', (req, res) =>
      sendJson(res, 200, video(req.params.id ?? '', 'sora-2', 'completed')),
    );
    const read = await c.videos.retrieve('video_fake1').withResponse();
    expect(read.data.status).toBe('completed');
    expect((await waitForLog(gw, requestId(read.response))).cost).toBeNull();
  });

  it('logs the price of a completed video whose creation it did not see, once', async () => {
    fake.on('GET /v1/videos/{id}', (req, res) =>
      sendJson(res, 200, video(req.params.id ?? '', 'sora-2', 'completed')),
    );
    const c = client();
    const first = await c.videos.retrieve('video_once1').withResponse();
    const second = await c.videos.retrieve('video_once1').withResponse();
    expect(first.data.status).toBe('completed');
    const firstLog = await waitForLog(gw, requestId(first.response));
    const secondLog = await waitForLog(gw, requestId(second.response));
    expect(firstLog.cost).toBeCloseTo(0.8, 12);
    expect(secondLog.cost).toBeNull();
  });

  it('logs nothing to pay while the video is still in progress', async () => {
    fake.on('GET /v1/videos/{id}', (req, res) =>
      sendJson(res, 200, video(req.params.id ?? '', 'sora-2', 'in_progress')),
    );
    const { response } = await client().videos.retrieve('video_wip').withResponse();
    expect((await waitForLog(gw, requestId(response))).cost).toBeNull();
  });

  it('streams the video content through as binary', async () => {
    const res = await client().videos.downloadContent('video_fake1');
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([0, 0, 0, 24, 102, 116, 121, 112]));
    const log = await waitForLog(gw, requestId(res));
    expect(log.response).toEqual({ content_type: 'video/mp4', bytes: 8 });
  });
});

describe('audio', () => {
  it('transcribes an upload (whisper-1, per minute) and relays it byte for byte', async () => {
    const { data, response } = await client()
      .audio.transcriptions.create({
        model: 'whisper-1',
        file: await toFile(BINARY, 'talk.mp3', { type: 'audio/mpeg' }),
      })
      .withResponse();
    expect(data.text).toBe('Hello from the audio.');
    expect(fake.requests[0]?.raw.includes(BINARY)).toBe(true);
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({ operation: 'audio.transcriptions', model: 'whisper-1', status: 200 });
    expect(log.cost).toBeCloseTo(1.5 * 0.006, 12);
  });

  it('costs gpt-4o-transcribe by the token usage it reports', async () => {
    const { response } = await client()
      .audio.transcriptions.create({
        model: 'gpt-4o-transcribe',
        file: await toFile(BINARY, 't.wav', { type: 'audio/wav' }),
      })
      .withResponse();
    const log = await waitForLog(gw, requestId(response));
    expect(log.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20 });
    expect(log.cost).toBeCloseTo((10 * 2.5 + 90 * 6 + 20 * 10) / 1e6, 12);
  });

  it('translates an upload', async () => {
    const { data, response } = await client()
      .audio.translations.create({
        model: 'whisper-1',
        file: await toFile(BINARY, 'fr.mp3', { type: 'audio/mpeg' }),
      })
      .withResponse();
    expect(data).toEqual({ text: 'Hello in English.' });
    expect(schemaErrors('CreateTranslationResponseJson', data)).toEqual([]);
    expect((await waitForLog(gw, requestId(response))).cost).toBeCloseTo(0.5 * 0.006, 12);
    // Priced from verbose_json, which only the provider was asked for.
    expect(formFields(fake.requests[0] as NonNullable<(typeof fake.requests)[0]>).response_format).toBe(
      'verbose_json',
    );
  });

  it.each([
    ['text', 'Hello in English.\n'],
    ['srt', '1\n00:00:00,000 --> 00:00:01,500\nHello\n\n2\n00:00:01,500 --> 00:00:03,250\nin English.\n\n'],
    [
      'vtt',
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello\n\n00:00:01.500 --> 00:00:03.250\nin English.\n\n',
    ],
  ] as const)(
    'translates in the %s format the client asked for, priced by duration',
    async (format, text) => {
      const { data, response } = await client()
        .audio.translations.create({
          model: 'whisper-1',
          file: await toFile(BINARY, 'fr.mp3', { type: 'audio/mpeg' }),
          response_format: format,
        })
        .withResponse();
      expect(data).toBe(text);
      expect((await waitForLog(gw, requestId(response))).cost).toBeCloseTo(0.5 * 0.006, 12);
    },
  );

  it('refuses a transcription sent as JSON rather than multipart', async () => {
    const res = await fetch(`${gw.url}/audio/transcriptions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': 'gwk_test_admin_key_0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'whisper-1' }),
    });
    expect(res.status).toBe(400);
  });

  it('streams speech to the client as it arrives, and costs it per character', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let winner = '';
    fake.on('POST /v1/audio/speech', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.from('ID3-first'));
      winner = await Promise.race([released.then(() => 'client'), sleep(3000).then(() => 'timeout')]);
      res.end(Buffer.from('-rest'));
    });
    const input = 'Hello there, how are you?';
    const res = await client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const parts: Buffer[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(Buffer.from(value));
      release();
    }
    expect(winner).toBe('client');
    expect(Buffer.concat(parts).toString()).toBe('ID3-first-rest');
    const log = await waitForLog(gw, requestId(res));
    expect(log).toMatchObject({ operation: 'audio.speech', model: 'tts-1', response: { bytes: 14 } });
    expect(log.cost).toBeCloseTo((input.length * 15) / 1e6, 12);
  });

  it('cuts the speech transfer when the provider cuts it, and logs the failure', async () => {
    fake.on('POST /v1/audio/speech', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.from('partial'));
      await sleep(20);
      res.socket?.destroy();
    });
    const res = await client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x' });
    await expect(res.arrayBuffer()).rejects.toThrow();
    const log = await waitForLog(gw, requestId(res));
    expect(log.status).toBe(502);
    expect(log.cost).toBeNull();
  });
});
