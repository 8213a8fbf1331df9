import http from 'node:http';
import fc from 'fast-check';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEvent, awsException, openEventStream, startFakeBedrock } from '../support/fake-bedrock';
import { startFakeGoogle } from '../support/fake-google';
import { chunk, completion, openSse, sendJson, sseData, startFakeOpenAI } from '../support/fake-openai';
import type { FakeUpstream } from '../support/fake-upstream';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';

// The corpus of malformed requests from issue 14: each must be a 4xx (never a 5xx), and each
// authenticated model request must leave a log entry, whatever its size.

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const nested = (depth: number, open = '[', close = ']', inner = '1') =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** A raw chat call, to send what the SDK would refuse to. */
async function chat(body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': ADMIN_KEY,
      'x-gateway-custom-host': fake.url,
      ...headers,
    },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const errorOf = (text: string) => (JSON.parse(text) as { error: Record<string, unknown> }).error;

describe('path parameters', () => {
  const paths = [
    ['GET', '/logs/%ZZ'],
    ['GET', '/virtual-keys/%'],
    ['PATCH', '/virtual-keys/%E0%A4%A'],
    ['GET', '/prompts/%'],
    ['POST', '/prompts/%ZZ/render'],
    ['GET', '/configs/abc%'],
    ['DELETE', '/api-keys/%ZZ'],
    ['GET', '/guardrails/%C0'],
  ];

  it.each(paths)('%s %s with a malformed escape is a 400 invalid_path', async (method, path) => {
    const res = await gw.api(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('invalid_path');
    expect(res.body.error.type).toBe('invalid_request_error');
  });

  it('an id of 5,000 characters is a 404 on every resource', async () => {
    const id = 'a'.repeat(5_000);
    for (const path of ['logs', 'virtual-keys', 'prompts', 'configs', 'guardrails']) {
      const res = await gw.api('GET', `/${path}/${id}`);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await gw.api('DELETE', `/api-keys/${id}`)).status).toBe(404);
  });

  it('an id of 256 characters is still looked up (and not found)', async () => {
    const res = await gw.api('GET', `/configs/${'b'.repeat(256)}`);
    expect(res.status).toBe(404);
  });
});

describe('cursors', () => {
  const cursor = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
  const id = '01JABCDEFGHJKMNPQRSTVWXYZ0';

  it.each([
    [
      'another organisation (whole-organisation read)',
      '',
      { pk: 'org_other#default', id, organisation_id: 'org_other' },
    ],
    ['another workspace partition', '&workspace=default', { pk: 'org_other#default', id }],
    ['a key of the wrong shape', '', { pk: 1, id: 2 }],
    ['not JSON', '', 'not-json'],
  ])('a cursor of %s is a 400 invalid_cursor', async (_what, extra, key) => {
    const value = typeof key === 'string' ? key : cursor(key);
    const res = await gw.api('GET', `/logs?cursor=${value}${extra}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_cursor', param: 'cursor' });
  });

  it('a cursor handed out by the list still pages through it', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await chat(
        JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `p${i}` }] }),
      );
      expect(res.status).toBe(200);
      await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    }
    const first = await gw.api('GET', '/logs?limit=2');
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await gw.api('GET', `/logs?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data.length).toBeGreaterThan(0);
    const scoped = await gw.api('GET', '/logs?limit=1&workspace=default');
    const next = await gw.api('GET', `/logs?limit=1&workspace=default&cursor=${scoped.body.next_cursor}`);
    expect(next.status).toBe(200);
  });
});

describe('JSON nesting', () => {
  it('a chat body with 10,000-deep arrays in content is a 400, and logged', async () => {
    const body = `{"model":"gpt-4o","messages":[{"role":"user","content":${nested(10_000)}}]}`;
    const res = await chat(body);
    expect(res.status).toBe(400);
    expect(errorOf(res.text)).toMatchObject({ code: 'invalid_json' });
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
  });

  it('a chat body with 10,000-deep objects in an extra field is a 400', async () => {
    const body = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"extra":${nested(10_000, '{"a":', '}')}}`;
    const res = await chat(body);
    expect(res.status).toBe(400);
    expect(errorOf(res.text).message).toMatch(/deeper than 64/);
  });

  it('64 levels are accepted; brackets inside strings do not count', async () => {
    const deep = `{"model":"gpt-4o","messages":[{"role":"user","content":"${'['.repeat(500)}"}],"metadata_extra":${nested(61)}}`;
    const res = await chat(deep);
    expect(res.status).toBe(200);
  });

  it('a saved config with 10,000-deep nested targets is a 400', async () => {
    const config = `${'{"strategy":{"mode":"fallback"},"targets":['.repeat(10_000)}{"provider":"openai"}${']}'.repeat(10_000)}`;
    const res = await gw.api('POST', '/configs', `{"name":"deep","config":${config}}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it('a config header nested past the limit is a 400 invalid_config', async () => {
    const config = `${'{"strategy":{"mode":"fallback"},"targets":['.repeat(40)}{"provider":"openai"}${']}'.repeat(40)}`;
    const res = await chat(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-config': config,
    });
    expect(res.status).toBe(400);
    expect(errorOf(res.text).code).toBe('invalid_config');
  });

  it('metadata nested past the limit is a 400', async () => {
    const res = await chat(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-metadata': nested(100, '{"a":', '}'),
    });
    expect(res.status).toBe(400);
    expect(errorOf(res.text).param).toBe('x-gateway-metadata');
  });
});

describe('field lengths', () => {
  const ask = { messages: [{ role: 'user', content: 'hi' }] };

  it('a model name of 1 MB is a 400 naming model, and logged', async () => {
    const res = await chat(JSON.stringify({ ...ask, model: 'm'.repeat(1_000_000) }));
    expect(res.status).toBe(400);
    expect(errorOf(res.text)).toMatchObject({ param: 'model', code: 'field_too_long' });
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(400);
    expect(log.request.model.length).toBe(1_000_000);
  });

  it('a user of 500 KB is a 400 naming user, and logged', async () => {
    const res = await chat(JSON.stringify({ ...ask, model: 'gpt-4o', user: 'u'.repeat(500_000) }));
    expect(res.status).toBe(400);
    expect(errorOf(res.text)).toMatchObject({ param: 'user', code: 'field_too_long' });
    await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
  });

  it('the same caps hold for the Responses API and for saved prompts', async () => {
    const res = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
      body: JSON.stringify({ model: 'gpt-4o', input: 'x', user: 'u'.repeat(513) }),
    });
    expect(res.status).toBe(400);
    expect(errorOf(await res.text())).toMatchObject({ param: 'user', code: 'field_too_long' });
    const prompt = await gw.api('POST', '/prompts', {
      name: 'long',
      model: 'm'.repeat(257),
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(prompt.status).toBe(400);
    expect(prompt.body.error.param).toBe('model');
  });

  it('a metadata value over 512 characters is a 400 naming the header', async () => {
    const res = await chat(JSON.stringify({ ...ask, model: 'gpt-4o' }), {
      'x-gateway-metadata': JSON.stringify({ team: 't'.repeat(513) }),
    });
    expect(res.status).toBe(400);
    expect(errorOf(res.text).param).toBe('x-gateway-metadata');
  });

  it('at the limits the request is served', async () => {
    const res = await chat(JSON.stringify({ ...ask, model: 'gpt-4o', user: 'u'.repeat(512) }), {
      'x-gateway-metadata': JSON.stringify({ team: 't'.repeat(512) }),
    });
    expect(res.status).toBe(200);
  });
});

describe('the log writer', () => {
  it('logs a served request whose bodies are large in UTF-8 bytes but not in characters', async () => {
    const content = '€'.repeat(140_000); // 140,000 characters, 420,000 bytes
    fake.use((req, res) => sendJson(res, 200, completion(String(req.body.model), content)));
    const { data, response } = await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'é'.repeat(1000) }] })
      .withResponse();
    expect(data.choices[0]?.message.content === content).toBe(true);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(200);
    expect(log.request.messages[0].content).toBe('é'.repeat(1000));
    expect(log.response.choices[0].message.content === content).toBe(true);
  });

  it('a model named constructor or toString is served and logged with no cost', async () => {
    for (const model of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const res = await chat(JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }));
      expect(res.status).toBe(200);
      const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
      expect(log).toMatchObject({ model, status: 200, cost: null });
    }
  });

  it('a provider reply with a huge model name and error text is still logged', async () => {
    fake.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: 'ü'.repeat(300_000),
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    const res = await chat(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-metadata': JSON.stringify({ team: 'ü'.repeat(512) }),
    });
    expect(res.status).toBe(200);
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(200);
    expect(log.metadata.team).toBe('ü'.repeat(512));
  });
});

describe('control-plane bodies', () => {
  it('POST /v1/api-keys with type null is a 400 and creates nothing', async () => {
    const before = await gw.api('GET', '/api-keys');
    const res = await gw.api('POST', '/api-keys', { name: 'null type', type: null });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('type');
    const after = await gw.api('GET', '/api-keys');
    expect(after.body.data).toHaveLength(before.body.data.length);
  });

  it.each([
    ['vendor_organization', 'org-1\r\nx-injected: 1'],
    ['vendor_project', 'proj\n'],
    ['key', 'sk-abc\u0000def'],
  ])('a virtual key whose %s holds a control character is refused when saved', async (field, value) => {
    const res = await gw.api('POST', '/virtual-keys', {
      name: 'ctl',
      provider: 'openai',
      key: 'sk-test',
      [field]: value,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(field);
  });

  it('a PATCH that adds CR/LF to vendor_organization is refused, and the key keeps working', async () => {
    const created = await gw.api('POST', '/virtual-keys', {
      name: 'ok',
      slug: 'ctl-ok',
      provider: 'openai',
      key: 'sk-test',
      custom_host: fake.url,
      vendor_organization: 'org-1',
    });
    expect(created.status).toBe(201);
    const patched = await gw.api('PATCH', '/virtual-keys/ctl-ok', { vendor_organization: 'a\r\nb' });
    expect(patched.status).toBe(400);
    const res = await gw
      .client({ headers: { 'x-gateway-provider': '@ctl-ok' } })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(res.choices[0]?.message.content).toBe('Echo: x');
  });

  it('a saved config whose vendor_organization holds a control character is refused', async () => {
    const res = await gw.api('POST', '/configs', {
      config: { provider: 'openai', vendor_organization: 'a\nb' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('control characters');
  });
});

describe('provider errors inside a 200 stream', () => {
  const ask = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true });

  it.each([
    [
      'data: {"error"} then [DONE]',
      `${sseData({ error: { message: 'boom', type: 'server_error', code: null } })}${sseData('[DONE]')}`,
      502,
    ],
    [
      'data: {"error"} with its own status, then more chunks',
      `${sseData({ error: { message: 'slow down', type: 'rate_limit', code: 'rate', status: 429 } })}${sseData(chunk('gpt-4o', { content: 'late' }))}${sseData('[DONE]')}`,
      429,
    ],
    ['event: error with text that is not JSON', 'event: error\ndata: upstream exploded\n\n', 502],
  ])(
    '%s ends the client stream with the SSE error event and logs the failure',
    async (_what, tail, status) => {
      fake.use(async (req, res) => {
        openSse(res);
        res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'a' })));
        res.end(tail);
      });
      const res = await chat(ask);
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/event: error\ndata: \{"error":/);
      expect(res.text).not.toContain('late');
      const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
      expect(log.status).toBe(status);
      expect(log.error.origin).toBe('provider');
    },
  );

  it('the OpenAI SDK raises the streamed error', async () => {
    fake.use(async (req, res) => {
      openSse(res);
      res.write(sseData(chunk(String(req.body.model), { role: 'assistant', content: 'a' })));
      res.end(
        `${sseData({ error: { message: 'mid-stream failure', type: 'server_error' } })}${sseData('[DONE]')}`,
      );
    });
    const stream = await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true });
    const err = await (async () => {
      for await (const _ of stream) {
        // drain
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('mid-stream failure');
  });

  it('Responses: a chat-style error event ends the stream with the Responses error event', async () => {
    fake.use(async (_req, res) => {
      openSse(res);
      res.write(
        `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } })}\n\n`,
      );
      res.end(`${sseData({ error: { message: 'gone wrong', type: 'server_error' } })}`);
    });
    const res = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-custom-host': fake.url,
      },
      body: JSON.stringify({ model: 'gpt-4o', input: 'x', stream: true }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/event: error\ndata: \{"type":"error"/);
    expect(text).toContain('gone wrong');
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(502);
  });
});

describe('caller patterns cannot stall the server', () => {
  it('a pattern RE2 cannot run is a 400 when the guardrail is saved', async () => {
    const res = await gw.api('POST', '/guardrails', {
      name: 'lookahead',
      checks: [{ type: 'regex', pattern: 'secret(?=\\d)' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('RE2');
  });

  it('(a+)+$ in a request config checks a hostile prompt while other requests are served', async () => {
    const config = JSON.stringify({ input_guardrails: [{ type: 'regex', pattern: '(a+)+$' }] });
    const hostile = chat(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `${'a'.repeat(33)}!` }] }),
      { 'x-gateway-config': config },
    );
    const health = fetch(`${gw.url}/health`).then((r) => r.status);
    expect(await health).toBe(200);
    expect((await hostile).status).toBe(200);
  });
});

describe('the local server: no input reaches uncaughtException', () => {
  /** A raw HTTP request, for targets `fetch` would normalise away. */
  function rawRequest(
    target: string,
    method = 'GET',
    body?: Buffer,
  ): Promise<{ status: number; text: string }> {
    const { port } = gw;
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path: target }, (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it.each(['//', '//[', '//a:b@/v1/health', '//%'])(
    'request target %s is read as a path: a 404',
    async (target) => {
      const res = await rawRequest(target);
      expect(res.status).toBe(404);
      expect(errorOf(res.text).code).toBe('not_found');
    },
  );

  it('an absolute-form target that is not a URL is a 400 invalid_path', async () => {
    const res = await rawRequest('http://[');
    expect(res.status).toBe(400);
    expect(errorOf(res.text).code).toBe('invalid_path');
  });

  it('a WebSocket upgrade to a target that is not a URL is refused, and the server lives on', async () => {
    const status = await new Promise<number>((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port: gw.port,
        path: '//[',
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', () => resolve(101));
      req.on('error', () => resolve(0));
      req.end();
    });
    expect(status).toBe(404);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });

  it('the local @connections endpoint answers a bad escape with a 400 and bounds what it reads', async () => {
    expect((await rawRequest('/@connections/%ZZ')).status).toBe(400);
    const big = await rawRequest('/@connections/abc', 'POST', Buffer.alloc(256 * 1024, 97));
    expect(big.status).toBe(413);
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });
});

describe('property: through the real server, no input is a 5xx', () => {
  // Runs: 40 bodies and headers, 40 paths; with the unit properties' 2,500 they make the reported total.
  const field = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(null, 'constructor', '__proto__', '', 'x'.repeat(300), ['a'], { a: 1 }),
  );
  const body = fc.oneof(
    fc
      .record(
        { model: field, messages: field, stream: field, user: field, stream_options: field, tools: field },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
    fc.string({ maxLength: 80 }),
  );
  const header = fc.option(
    fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    ),
    { nil: undefined },
  );

  it('random chat bodies, configs and metadata', async () => {
    await fc.assert(
      fc.asyncProperty(body, header, header, async (text, config, metadata) => {
        const headers: Record<string, string> = {};
        // Header values cannot carry control characters or non-Latin-1 text on the wire at all.
        const wire = (v: string) => v.replace(/[^\x20-\x7e]/g, '');
        if (config !== undefined) headers['x-gateway-config'] = wire(config);
        if (metadata !== undefined) headers['x-gateway-metadata'] = wire(metadata);
        const res = await chat(text, headers);
        expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
      }),
      { seed: 14, numRuns: 40 },
    );
  });

  it('random paths on every resource', async () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
      fc.constantFrom('%', '%ZZ', '%C0', '%2F', 'a'.repeat(300), '..', '.'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('logs', 'virtual-keys', 'prompts', 'configs', 'guardrails', 'api-keys'),
        segment,
        fc.constantFrom('GET', 'DELETE'),
        async (base, id, method) => {
          const res = await gw.api(method, `/${base}/${id}`);
          expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBeLessThan(500);
        },
      ),
      { seed: 14, numRuns: 40 },
    );
  });
});

describe('provider errors inside a translated 200 stream', () => {
  let google: FakeUpstream;
  let bedrock: FakeUpstream;
  beforeAll(async () => {
    [google, bedrock] = await Promise.all([startFakeGoogle(), startFakeBedrock()]);
  });
  afterAll(async () => {
    await Promise.all([google?.close(), bedrock?.close()]);
  });

  const ask = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
  const first = { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }] };

  it.each([
    [
      'with its code',
      { error: { code: 429, message: 'Resource exhausted', status: 'RESOURCE_EXHAUSTED' } },
      429,
    ],
    ['without a code', { error: { message: 'Something broke' } }, 502],
  ])('Gemini: an error object %s ends the stream with the SSE error event', async (_what, error, status) => {
    google.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(first)}\r\n\r\n`);
      res.end(`data: ${JSON.stringify(error)}\r\n\r\n`);
    });
    const res = await chat(ask, { 'x-gateway-provider': 'google', 'x-gateway-custom-host': google.url });
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/event: error\ndata: \{"error":/);
    expect(res.text).not.toContain('[DONE]');
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(status);
  });

  it('Bedrock: an exception frame it does not document ends the stream with a 502', async () => {
    bedrock.use((_req, res) => {
      openEventStream(res);
      res.write(awsEvent('messageStart', { role: 'assistant' }));
      res.end(awsException('someNewException', 'new kind of failure'));
    });
    const config = JSON.stringify({
      provider: 'bedrock',
      api_key: JSON.stringify({ access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' }),
      custom_host: bedrock.url,
    });
    const res = await chat(ask, { 'x-gateway-config': config, 'x-gateway-custom-host': bedrock.url });
    expect(res.text).toMatch(/event: error\ndata: \{"error":/);
    expect(res.text).toContain('new kind of failure');
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({ status: 502, error: { origin: 'provider' } });
  });
});
