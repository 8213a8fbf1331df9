import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningGateway, startGateway } from '../../local/server';
import { type FakeOpenAI, openSse, sendJson, sseData, startFakeOpenAI } from '../support/fake-openai';
import { type FakeRealtime, startFakeRealtime } from '../support/fake-realtime';

// The embedded DynamoDB on disk, so that its files can be searched for credentials.
const ADMIN_KEY = 'gwk_masking_admin_key_0123456789';
const VK_SECRET = 'sk-live-vk-secret-MASKME-0123456789abcdef';
const PASSTHROUGH = 'sk-proj-passthrough-MASKME-9876543210';
const CONFIG_KEY = 'sk-config-inline-MASKME-5555555555aaaa';
const messages = [{ role: 'user' as const, content: 'hi' }];

let gw: RunningGateway;
let fake: FakeOpenAI;
let dataDir: string;
let realtime: FakeRealtime;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-mask-'));
  fake = await startFakeOpenAI();
  realtime = await startFakeRealtime();
  gw = await startGateway({ port: 0, dataDir, adminKey: ADMIN_KEY });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await realtime?.close();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => fake.reset());

const keyOf = (authorization: unknown) => String(authorization ?? '').replace(/^Bearer /, '');

/** OpenAI's 401, which quotes the key it was given, whole and cut. */
function echoKey() {
  fake.use((req, res) => {
    const key = keyOf(req.headers.authorization);
    sendJson(res, 401, {
      error: {
        message: `Incorrect API key provided: ${key}. Also seen as ${key.slice(0, 12)}****${key.slice(-4)}.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
  });
}

function client(apiKey: string, headers: Record<string, string>) {
  return new OpenAI({
    baseURL: gw.url,
    apiKey,
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, ...headers },
  });
}

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Every 8-character slice of a secret that is not part of the masked form `sk-...abcd`. */
function expectNoSecret(text: string, secrets: string[]) {
  for (const secret of secrets) {
    expect(text).not.toContain(secret);
    for (let i = 0; i + 8 <= secret.length; i++) expect(text).not.toContain(secret.slice(i, i + 8));
  }
}

describe('credentials in provider errors', () => {
  it('never reach the client, the log entry or any file under the data dir', async () => {
    expect(
      (
        await api('POST', '/virtual-keys', {
          name: 'vk',
          slug: 'echoed',
          provider: 'openai',
          key: VK_SECRET,
          custom_host: fake.url,
        })
      ).status,
    ).toBe(201);
    echoKey();
    const calls = [
      client('sk-unused-by-vk', { 'x-gateway-provider': '@echoed' }),
      client(PASSTHROUGH, { 'x-gateway-custom-host': fake.url }),
      client('sk-unused-by-config', {
        'x-gateway-config': JSON.stringify({ api_key: CONFIG_KEY, custom_host: fake.url }),
      }),
    ];
    const ids: string[] = [];
    for (const c of calls) {
      const err = (await c.chat.completions
        .create({ model: 'gpt-4o-mini', messages })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.AuthenticationError>;
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(err.message).toContain('Incorrect API key provided: sk-...');
      expectNoSecret(JSON.stringify({ message: err.message, error: err.error }), [
        VK_SECRET,
        PASSTHROUGH,
        CONFIG_KEY,
      ]);
      ids.push(err.headers?.get('x-gateway-request-id') as string);
    }
    expect(fake.requests.map((r) => keyOf(r.headers.authorization))).toEqual([
      VK_SECRET,
      PASSTHROUGH,
      CONFIG_KEY,
    ]);

    // A provider error inside a 200 stream, and one in the Responses API's stream.
    fake.use((req, res) => {
      openSse(res);
      res.end(
        sseData({
          error: {
            message: `Invalid key ${keyOf(req.headers.authorization)}`,
            type: 'invalid_request_error',
          },
        }),
      );
    });
    const stream = await client(PASSTHROUGH, { 'x-gateway-custom-host': fake.url }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
    });
    const streamError = await (async () => {
      for await (const _ of stream) {
        // nothing arrives before the error
      }
    })().catch((e: unknown) => e);
    expect(String((streamError as Error).message)).toContain('Invalid key sk-...');
    expectNoSecret(JSON.stringify(streamError), [PASSTHROUGH]);

    const logs = await api('GET', '/logs?limit=100');
    const entries = await Promise.all(
      (logs.body.data as Array<{ id: string }>).map((e) => api('GET', `/logs/${e.id}`).then((r) => r.body)),
    );
    expect(entries.map((e) => e.id)).toEqual(expect.arrayContaining(ids));
    expectNoSecret(JSON.stringify([logs.body, entries]), [VK_SECRET, PASSTHROUGH, CONFIG_KEY, ADMIN_KEY]);

    // Only the owner-only secret files hold the virtual key's credential.
    const files = filesUnder(dataDir).filter((f) => !f.startsWith(join(dataDir, 'secrets')));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = readFileSync(file).toString('latin1');
      for (const secret of [VK_SECRET, PASSTHROUGH, CONFIG_KEY, ADMIN_KEY]) {
        expect(bytes.includes(secret), `${secret} in ${file}`).toBe(false);
        expect(bytes.includes(secret.slice(-12)), `${secret} in ${file}`).toBe(false);
      }
    }
  });

  it('are masked in realtime error events relayed from the provider', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/v1/realtime?model=gpt-realtime`, {
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': realtime.url,
        authorization: `Bearer ${PASSTHROUGH}`,
      },
    });
    const events: string[] = [];
    const gotError = new Promise<string>((resolve) =>
      ws.on('message', (data) => {
        const text = data.toString();
        events.push(text);
        if (text.includes('"type":"error"')) resolve(text);
      }),
    );
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    // Wait for the provider's session: the relay has connected upstream.
    while (realtime.sessions.length === 0) await new Promise((r) => setTimeout(r, 10));
    const session = realtime.sessions[0];
    const key = keyOf(session?.headers.authorization);
    expect(key).toBe(PASSTHROUGH);
    session?.socket.send(
      JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: `Incorrect API key provided: ${key}` },
      }),
    );
    const error = await gotError;
    expect(error).toContain('Incorrect API key provided: sk-...');
    expectNoSecret(events.join('\n'), [PASSTHROUGH]);
    ws.close();
  });
});
