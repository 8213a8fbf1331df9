import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_CONTEXT_FRAME_FLAG } from '../../local/async-context-frame';
import { chunk, type FakeOpenAI, openSse, sleep, sseData, startFakeOpenAI } from '../support/fake-openai';
import { startLocalProcess } from '../support/local-process';

// The local runtime as a user runs it (`npm start` runs local/main.ts), in a child process.

let fake: FakeOpenAI;
let dataDir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-runtime-'));
});
afterAll(async () => {
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = (env: Record<string, string> = {}) => startLocalProcess({ GATEWAY_DATA_DIR: dataDir, ...env });

describe('npm start', () => {
  it('generates an admin key once, persists state, and finishes in-flight requests and their logs on Ctrl-C', async () => {
    const first = await start();
    const key = /(gwk_[A-Za-z0-9_-]{20,})/.exec(first.output())?.[1];
    expect(key).toBeTruthy();
    expect(first.output()).toContain('shown once');
    // On Node 22 (with process.execve) the server restarted itself in place with AsyncContextFrame
    // (local/async-context-frame.ts): the same process, and every step below runs in it. Elsewhere, as
    // started.
    const restarts = process.versions.node.startsWith('22.') && 'execve' in process;
    const cmdline = readFileSync(`/proc/${first.child.pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline.includes(ASYNC_CONTEXT_FRAME_FLAG)).toBe(restarts);

    const health = await fetch(`${first.url}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });

    // A slow stream is in flight when Ctrl-C arrives: it must complete and be logged.
    fake.use(async (req, res) => {
      openSse(res);
      for (const w of ['one', ' two', ' three']) {
        res.write(sseData(chunk(String(req.body.model), { content: w })));
        await sleep(300);
      }
      res.write(
        sseData({
          id: 'x',
          object: 'chat.completion.chunk',
          created: 1,
          model: req.body.model,
          choices: [],
          usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
        }),
      );
      res.end(sseData('[DONE]'));
    });
    const client = new OpenAI({
      baseURL: first.url,
      apiKey: 'sk-x',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': key as string, 'x-gateway-custom-host': fake.url },
    });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'count' }], stream: true })
      .withResponse();
    const id = response.headers.get('x-gateway-request-id') as string;
    let text = '';
    let signalled = false;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      if (!signalled) {
        signalled = true;
        first.child.kill('SIGINT');
      }
    }
    expect(text).toBe('one two three');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(dataDir, 'dynamodb'))).toBe(true);

    // Restart on the same data dir: same organisation, the key still works, no new key printed.
    const second = await start();
    try {
      expect(second.output()).not.toMatch(/gwk_/);
      const res = await fetch(`${second.url}/logs/${id}`, {
        headers: { 'x-gateway-api-key': key as string },
      });
      expect(res.status).toBe(200);
      const log = (await res.json()) as {
        status: number;
        response: { choices: Array<{ message: { content: string } }> };
        usage: unknown;
      };
      expect(log.status).toBe(200);
      expect(log.response.choices[0]?.message.content).toBe('one two three');
      expect(log.usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 60_000);

  it('keeps a body too large for a DynamoDB item in the blob store, with the entry intact', async () => {
    fake.reset();
    const gw = await start({ GATEWAY_ADMIN_KEY: 'gwk_runtime_test_key_123456' });
    try {
      const client = new OpenAI({
        baseURL: gw.url,
        apiKey: 'sk-x',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': 'gwk_runtime_test_key_123456',
          'x-gateway-custom-host': fake.url,
        },
      });
      const big = 'lorem ipsum '.repeat(50_000); // 600 KB
      const { response } = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: big }] })
        .withResponse();
      const id = response.headers.get('x-gateway-request-id') as string;
      let log:
        | { request: { messages: Array<{ content: string }> }; response: { choices: unknown[] } }
        | undefined;
      for (let i = 0; i < 50 && !log; i++) {
        const res = await fetch(`${gw.url}/logs/${id}`, {
          headers: { 'x-gateway-api-key': 'gwk_runtime_test_key_123456' },
        });
        if (res.status === 200) log = (await res.json()) as typeof log;
        else await sleep(50);
      }
      expect(log?.request.messages[0]?.content).toBe(big);
      expect(log?.response.choices).toHaveLength(1);
      const orgs = readdirSync(join(dataDir, 'blobs', 'logs'));
      expect(orgs.length).toBeGreaterThan(0);
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
  }, 60_000);

  it('uses the DynamoDB named by DYNAMODB_ENDPOINT instead of the embedded one', async () => {
    const external = dynalite({ createTableMs: 0 });
    await new Promise<void>((r) => external.listen(0, '127.0.0.1', () => r()));
    const endpoint = `http://127.0.0.1:${(external.address() as { port: number }).port}`;
    const creds = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };
    const gw = await start({
      DYNAMODB_ENDPOINT: endpoint,
      GATEWAY_ADMIN_KEY: 'gwk_external_store_key_12345',
      ...creds,
    });
    try {
      const res = await fetch(`${gw.url}/organisation`, {
        headers: { 'x-gateway-api-key': 'gwk_external_store_key_12345' },
      });
      expect(res.status).toBe(200);
      const db = new DynamoDBClient({
        endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      });
      const tables = await db.send(new ListTablesCommand({}));
      expect(tables.TableNames).toEqual(expect.arrayContaining(['gateway-control', 'gateway-logs-v2']));
      const control = await db.send(new ScanCommand({ TableName: 'gateway-control' }));
      expect(control.Items?.some((item) => item.sk?.S === 'ORG')).toBe(true);
      db.destroy();
    } finally {
      gw.child.kill('SIGTERM');
      await gw.exited;
      await new Promise<void>((r) => external.close(() => r()));
    }
  }, 60_000);

  it('a second start on a data dir in use says which process holds it and exits 1; a stale lock is taken over', async () => {
    const first = await start();
    try {
      const second = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts'], {
        cwd: process.cwd(),
        env: {
          ...process.env,
          PORT: '0',
          GATEWAY_DATA_DIR: dataDir,
          GATEWAY_ADMIN_KEY: '',
          DYNAMODB_ENDPOINT: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      second.stdout?.on('data', (d: Buffer) => {
        out += d;
      });
      second.stderr?.on('data', (d: Buffer) => {
        out += d;
      });
      const code = await new Promise<number | null>((r) => second.on('exit', (c: number | null) => r(c)));
      expect(code).toBe(1);
      expect(out).toContain(`data dir ${dataDir} is in use by process ${first.child.pid}`);
      expect(out).not.toContain('ECONNREFUSED');
    } finally {
      // Killed without a chance to clean up: its lock file stays behind, naming a process that is gone.
      first.child.kill('SIGKILL');
      await first.exited;
    }
    const again = await start();
    try {
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 60_000);
});
