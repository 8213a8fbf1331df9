import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outliveInvocation } from '../../functions/core/after-invocation';
import { LogStore } from '../../functions/store/log-store';
import { type RunningGateway, startGateway } from '../../local/server';
import { chunk, type FakeOpenAI, openSse, sleep, sseData, startFakeOpenAI } from '../support/fake-openai';
import { ADMIN_KEY } from '../support/gateway';
import { startLocalProcess, waitForOutput } from '../support/local-process';
import { sampleLogEntry } from '../support/log-entry';
import { threadNices } from '../support/threads';

// The local server as a person runs it: a line per request, HOST, the root, and stopping with Ctrl-C.

let fake: FakeOpenAI;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-server-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the local server', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  beforeAll(async () => {
    gw = await startGateway({
      port: 0,
      dataDir: tempDir(),
      inMemory: true,
      adminKey: ADMIN_KEY,
      requestLog: (line) => lines.push(line),
    });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('prints one line per request: method, path, status, latency, request id and user', async () => {
    fake.reset();
    const client = new OpenAI({
      baseURL: gw.url,
      apiKey: 'sk-x',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-custom-host': fake.url },
    });
    const { response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], user: 'alice@example.com' })
      .withResponse();
    const id = response.headers.get('x-gateway-request-id');
    await fetch(`${gw.url}/nope`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    await sleep(50);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^POST /v1/chat/completions 200 \\d+\\.\\dms req=${id} user=alice@example\\.com$`),
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^GET \/v1\/nope 404 \d+\.\dms/));
  });

  it('sends a person who opens the root to the dashboard', async () => {
    const res = await fetch(gw.url.replace(/\/v1$/, '/'), { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard');
  });
});

describe('stopping the local server', () => {
  it('lets the after-send work its invocations left finish and write before it closes the store', async () => {
    const dataDir = tempDir();
    const first = await startGateway({ port: 0, dataDir, adminKey: ADMIN_KEY });
    // Work an invocation left after its reply (its log entry, say), not yet done when the stop begins.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const id = '01JLEFTBEHINDBYANINVOCAT10';
    outliveInvocation(
      gate.then(() => new LogStore().write(sampleLogEntry({ id, organisation_id: first.organisationId }))),
    );
    let closed = false;
    const closing = first.close().then(() => {
      closed = true;
    });
    await sleep(100);
    expect(closed).toBe(false);
    release();
    await closing;

    const second = await startGateway({ port: 0, dataDir, adminKey: ADMIN_KEY });
    try {
      const res = await fetch(`${second.url}/logs/${id}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(id);
    } finally {
      await second.close();
    }
  });
});

describe('npm start', () => {
  it('binds the interface HOST names, and warns when that is not loopback', async () => {
    const local = await startLocalProcess({ GATEWAY_DATA_DIR: tempDir(), HOST: '127.0.0.2' });
    try {
      expect(local.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/v1$/);
      expect((await fetch(`${local.url}/health`)).status).toBe(200);
      expect(local.output()).not.toContain('reachable from other machines');
    } finally {
      local.child.kill('SIGTERM');
      await local.exited;
    }
    const open = await startLocalProcess({ GATEWAY_DATA_DIR: tempDir(), HOST: '0.0.0.0' });
    try {
      expect(open.output()).toContain('reachable from other machines over plain HTTP');
      expect((await fetch(`${open.url}/health`)).status).toBe(200);
    } finally {
      open.child.kill('SIGTERM');
      await open.exited;
    }
  }, 60_000);

  it('runs its embedded DynamoDB on one thread below the others (GATEWAY_STORE_NICE, 19 unless set)', async () => {
    // The server's threads start at this process's priority; the store's alone is then lowered.
    const base = threadNices(process.pid).get(process.pid);
    const niceThreads = async (env: Record<string, string>) => {
      const started = await startLocalProcess({ GATEWAY_DATA_DIR: tempDir(), ...env });
      try {
        expect((await fetch(`${started.url}/health`)).status).toBe(200);
        const nices = [...threadNices(started.child.pid as number).values()];
        return { lowered: nices.filter((n) => n !== base), all: nices.length };
      } finally {
        started.child.kill('SIGTERM');
        await started.exited;
      }
    };
    const byDefault = await niceThreads({});
    expect(byDefault.lowered).toEqual([19]);
    expect(byDefault.all).toBeGreaterThan(2);
    expect((await niceThreads({ GATEWAY_STORE_NICE: '5' })).lowered).toEqual([5]);
    expect((await niceThreads({ GATEWAY_STORE_NICE: '0' })).lowered).toEqual([]);
    await expect(
      startLocalProcess({ GATEWAY_DATA_DIR: tempDir(), GATEWAY_STORE_NICE: '-5' }),
    ).rejects.toThrow(/GATEWAY_STORE_NICE must be an integer from 0 to 19, not "-5"/);
  }, 60_000);

  it('logs requests at info, is quiet at GATEWAY_LOG_LEVEL=warn', async () => {
    const quiet = await startLocalProcess({
      GATEWAY_DATA_DIR: tempDir(),
      GATEWAY_LOG_LEVEL: 'warn',
      GATEWAY_ADMIN_KEY: 'gwk_quiet_server_key_0123456789',
      POWERTOOLS_LOG_LEVEL: '',
    });
    try {
      await fetch(`${quiet.url}/health`);
      // A model request the handlers log at info ("request completed"): not printed at warn either.
      await fetch(`${quiet.url}/chat/completions`, {
        method: 'POST',
        headers: {
          'x-gateway-api-key': 'gwk_quiet_server_key_0123456789',
          'x-gateway-custom-host': 'http://127.0.0.1:1/v1',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      });
      await sleep(100);
      expect(quiet.output()).not.toContain('GET /v1/health');
      expect(quiet.output()).not.toContain('"level":"INFO"');
    } finally {
      quiet.child.kill('SIGTERM');
      await quiet.exited;
    }
  }, 60_000);

  it('cuts the streams still running on a second Ctrl-C, names them, and still logs them', async () => {
    const dataDir = tempDir();
    const first = await startLocalProcess({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: 'gwk_cut_streams_key_0123456789',
      GATEWAY_LOG_LEVEL: 'info',
    });
    // A stream that would run for a minute.
    fake.use(async (req, res) => {
      openSse(res);
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(sseData(chunk(String(req.body.model), { content: `${i} ` })));
        await sleep(300);
      }
      res.end(sseData('[DONE]'));
    });
    const client = new OpenAI({
      baseURL: first.url,
      apiKey: 'sk-x',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': 'gwk_cut_streams_key_0123456789',
        'x-gateway-custom-host': fake.url,
      },
    });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count' }], stream: true })
      .withResponse();
    const id = response.headers.get('x-gateway-request-id') as string;
    const reading = (async () => {
      try {
        for await (const _ of stream) {
          // keep reading until the gateway cuts the stream
        }
      } catch {
        // the cut ends the stream with an error on the client's side
      }
    })();
    await sleep(400);
    first.child.kill('SIGINT');
    await waitForOutput(first, /Ctrl-C again to cut them/);
    first.child.kill('SIGINT');
    await waitForOutput(first, /Cutting 1 request/);
    expect(first.output()).toContain(`POST /v1/chat/completions (${id})`);
    expect(await first.exited).toBe(0);
    await reading;
    fake.reset();

    const second = await startLocalProcess({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: 'gwk_cut_streams_key_0123456789',
    });
    try {
      const res = await fetch(`${second.url}/logs/${id}`, {
        headers: { 'x-gateway-api-key': 'gwk_cut_streams_key_0123456789' },
      });
      expect(res.status).toBe(200);
      const log = (await res.json()) as { status: number; stream: boolean };
      expect(log.status).toBe(499);
      expect(log.stream).toBe(true);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 60_000);
});
