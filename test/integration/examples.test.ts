import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../support/fake-anthropic';
import {
  chunk,
  echo,
  type FakeOpenAI,
  openSse,
  sendJson,
  sseData,
  startFakeOpenAI,
  streamWords,
} from '../support/fake-openai';
import type { FakeUpstream } from '../support/fake-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway, waitForLog } from '../support/gateway';
import { claims, makeKey, signJwt } from '../support/jwt';

// Every script in examples/ run as its header comment says (`npx tsx examples/x.ts` with the settings
// in environment variables) against the local server and fake providers, its output checked.

let gw: TestGateway;
let openai: FakeOpenAI;
let anthropic: FakeUpstream;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
  gw = await startTestGateway();
  // An OpenAI-compatible fake that fails for the key `sk-broken`, asks for a tool while tools are offered
  // and no result came back, and otherwise echoes.
  openai.use(async (req, res) => {
    if (req.headers.authorization === 'Bearer sk-broken') {
      return sendJson(res, 503, { error: { message: 'overloaded', type: 'server_error', code: null } });
    }
    const messages = req.body.messages as Array<{ role: string; content?: unknown }>;
    const last = messages[messages.length - 1];
    if (req.body.tools && last?.role === 'tool')
      return streamWords(req, res, ['It is ', 'sunny ', 'in Paris.']);
    if (req.body.tools) {
      const model = String(req.body.model);
      openSse(res);
      const call = {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      };
      res.write(sseData(chunk(model, { role: 'assistant', content: null, tool_calls: [call] })));
      for (const piece of ['{"city":', '"Paris"}']) {
        res.write(sseData(chunk(model, { tool_calls: [{ index: 0, function: { arguments: piece } }] })));
      }
      res.write(sseData(chunk(model, {}, 'tool_calls')));
      res.end(sseData('[DONE]'));
      return;
    }
    return echo(req, res);
  });
  const keys = [
    { slug: 'my-openai', provider: 'openai', key: 'sk-fake', custom_host: openai.url },
    { slug: 'broken', provider: 'openai', key: 'sk-broken', custom_host: openai.url },
    { slug: 'my-anthropic', provider: 'anthropic', key: 'sk-ant-fake', custom_host: `${anthropic.url}/v1` },
  ];
  for (const k of keys) {
    const res = await gw.api('POST', '/virtual-keys', { name: k.slug, ...k });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
});
afterAll(async () => {
  await gw?.stop();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

/** Runs `npx tsx examples/<name>` with the gateway's settings; resolves with its output. */
function runExample(
  name: string,
  env: Record<string, string>,
): Promise<{ status: number | null; out: string }> {
  const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
  // Not spawnSync: the fake providers answer from this process's event loop.
  const child = spawn(tsx, [join('examples', name)], {
    cwd: process.cwd(),
    env: { ...process.env, GATEWAY_URL: gw.url.replace(/\/v1$/, ''), ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, out })));
}

const withKey = (extra: Record<string, string> = {}) => ({ GATEWAY_API_KEY: ADMIN_KEY, ...extra });

describe('examples/', () => {
  it('openai-virtual-key.ts: the OpenAI client calls the provider through a virtual key', async () => {
    openai.requests.length = 0;
    const { status, out } = await runExample(
      'openai-virtual-key.ts',
      withKey({ GATEWAY_VIRTUAL_KEY: 'my-openai' }),
    );
    expect(status, out).toBe(0);
    expect(out).toContain('Echo: Say hello in five words.');
    expect(openai.requests[0]?.headers.authorization).toBe('Bearer sk-fake');
    const id = /log entry: (\S+)/.exec(out)?.[1] as string;
    expect((await waitForLog(gw, id)).virtual_key).toBe('my-openai');
  }, 60_000);

  it('streaming-tools.ts: streams a tool call, runs the tool, streams the answer', async () => {
    openai.requests.length = 0;
    const { status, out } = await runExample(
      'streaming-tools.ts',
      withKey({ GATEWAY_VIRTUAL_KEY: 'my-openai' }),
    );
    expect(status, out).toBe(0);
    expect(out).toContain('tool call: get_weather({"city":"Paris"})');
    expect(out).toContain('It is sunny in Paris.');
    expect(openai.requests).toHaveLength(2);
    expect(openai.requests.every((r) => r.body.stream === true)).toBe(true);
    const answered = openai.requests[1]?.body.messages as Array<{ role: string; content?: string }>;
    expect(answered.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(answered.at(-1)?.content).toContain('sunny');
  }, 60_000);

  it('anthropic-messages.ts: the Anthropic SDK gets a message and a stream from /v1/messages', async () => {
    anthropic.reset();
    const { status, out } = await runExample(
      'anthropic-messages.ts',
      withKey({ GATEWAY_VIRTUAL_KEY: 'my-anthropic' }),
    );
    expect(status, out).toBe(0);
    expect(out).toContain('Echo: Say hello');
    expect(out).toContain('usage: 20 in, 7 out');
    expect(out).toContain('Echo: Count to three');
    expect(anthropic.requests.map((r) => r.headers['x-api-key'])).toEqual(['sk-ant-fake', 'sk-ant-fake']);
  }, 60_000);

  it('jwt-auth.ts: a JWT from the trusted key set calls the model and is logged with its subject', async () => {
    const key = makeKey('example-key');
    expect((await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [key.jwk] } })).status).toBe(200);
    const organisation = (await gw.api('GET', '/organisation')).body.id as string;
    const token = signJwt(claims(organisation, { sub: 'ada@example.com' }), key);
    const { status, out } = await runExample('jwt-auth.ts', {
      GATEWAY_JWT: token,
      GATEWAY_VIRTUAL_KEY: 'my-openai',
    });
    expect(status, out).toBe(0);
    expect(out).toContain('Echo: Who am I?');
    expect(out).toContain('logged as jwt ada@example.com');
  }, 60_000);

  it('fallback-config.ts: the first target fails, the second answers', async () => {
    openai.requests.length = 0;
    const { status, out } = await runExample(
      'fallback-config.ts',
      withKey({ GATEWAY_PRIMARY_KEY: 'broken', GATEWAY_FALLBACK_KEY: 'my-openai' }),
    );
    expect(status, out).toBe(0);
    expect(out).toContain('Echo: Say hello');
    expect(out).toContain('answered by target 1');
    expect(openai.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-broken',
      'Bearer sk-fake',
    ]);
  }, 60_000);

  it('prompt-completions.ts: saves a prompt and runs it with variables', async () => {
    openai.requests.length = 0;
    const { status, out } = await runExample(
      'prompt-completions.ts',
      withKey({ GATEWAY_VIRTUAL_KEY: 'my-openai' }),
    );
    expect(status, out).toBe(0);
    expect(out).toMatch(/prompt pmt_\w+ version 1, variables: name, city/);
    expect(out).toContain('Echo: Greet Ada from London.');
    expect(openai.requests[0]?.body).toMatchObject({ max_tokens: 50, temperature: 0.7 });
  }, 60_000);
});
