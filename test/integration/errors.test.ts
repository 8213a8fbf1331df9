import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { sendJson, sleep, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });
let closedPort: number;

beforeAll(async () => {
  // A port that was just free: connecting to it is refused.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});

/** A raw call, to send what the SDK would refuse to. */
async function raw(body: string, headers: Record<string, string> = {}) {
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
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as { error: Record<string, unknown> },
  };
}

async function expectGatewayError(
  result: Awaited<ReturnType<typeof raw>>,
  status: number,
  code: string,
  origin = 'gateway',
  // biome-ignore lint/suspicious/noExplicitAny: a log entry, asserted field by field
): Promise<any> {
  expect(result.status).toBe(status);
  expect(result.body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
  expect(Object.keys(result.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(result.headers.get('x-gateway-error-origin')).toBe(origin);
  const id = result.headers.get('x-gateway-request-id');
  expect(id).toBeTruthy();
  return waitForLog(gw, id as string);
}

describe('errors: OpenAI-shaped, with the right status and origin, and logged', () => {
  it('malformed JSON is a 400 and is logged with the raw body', async () => {
    const log = await expectGatewayError(await raw('{"model": "gpt-4o", "messages": ['), 400, 'invalid_json');
    expect(log.status).toBe(400);
    expect(log.request).toBe('{"model": "gpt-4o", "messages": [');
    expect(log.error.code).toBe('invalid_json');
    expect(fake.requests).toHaveLength(0);
  });

  it('a body that is not an object is a 400', async () => {
    await expectGatewayError(await raw('[1,2,3]'), 400, 'invalid_json');
    await expectGatewayError(await raw(''), 400, 'invalid_json');
  });

  it('a missing model or messages is a 400 naming the parameter', async () => {
    const noModel = await raw(JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }));
    await expectGatewayError(noModel, 400, 'missing_required_parameter');
    expect(noModel.body.error.param).toBe('model');
    const noMessages = await raw(JSON.stringify({ model: 'gpt-4o' }));
    await expectGatewayError(noMessages, 400, 'missing_required_parameter');
    expect(noMessages.body.error.param).toBe('messages');
    const badRole = await raw(JSON.stringify({ model: 'gpt-4o', messages: [{ content: 'x' }] }));
    expect(badRole.status).toBe(400);
    const badStream = await raw(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }),
    );
    expect(badStream.body.error.param).toBe('stream');
  });

  it('a body over the size limit is a 413 and is logged', async () => {
    const huge = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x'.repeat(5_100_000) }],
    });
    const log = await expectGatewayError(await raw(huge), 413, 'body_too_large');
    expect(log.status).toBe(413);
    expect(fake.requests).toHaveLength(0);
  });

  it('an unknown provider is a 400 that names it, and is logged', async () => {
    const result = await raw(JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-provider': 'no-such-provider',
    });
    const log = await expectGatewayError(result, 400, 'unknown_provider');
    expect(result.body.error.message).toContain('no-such-provider');
    expect(log.status).toBe(400);
  });

  it('a config that is not valid is a 400 listing every bad field', async () => {
    const config = { provider: 5, strategy: { mode: 'random' }, retry: { attempts: 99 }, colour: 'blue' };
    const result = await raw(JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-config': JSON.stringify(config),
    });
    await expectGatewayError(result, 400, 'invalid_config');
    const message = String(result.body.error.message);
    for (const field of [
      'config.provider',
      'config.strategy.mode',
      'config.retry.attempts',
      'config.colour',
    ]) {
      expect(message).toContain(field);
    }
  });

  it('metadata that is not a JSON object of strings is a 400, logged', async () => {
    const result = await raw(JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'x' }] }), {
      'x-gateway-metadata': '{"n": 1}',
    });
    await expectGatewayError(result, 400, 'invalid_request');
  });

  it('a refused connection is a 502, logged with the gateway as origin', async () => {
    const result = await raw(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      {
        'x-gateway-custom-host': `http://127.0.0.1:${closedPort}/v1`,
      },
    );
    const log = await expectGatewayError(result, 502, 'upstream_unreachable');
    expect(log.provider).toBe('openai');
    expect(log.error.origin).toBe('gateway');
  });

  it('a host name that does not resolve is a 502', async () => {
    const result = await raw(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      {
        'x-gateway-custom-host': 'http://no-such-host.invalid/v1',
      },
    );
    await expectGatewayError(result, 502, 'upstream_unreachable');
  });

  it('an upstream slower than request_timeout is a 408', async () => {
    fake.use(async (req, res) => {
      await sleep(1500);
      if (!res.destroyed) sendJson(res, 200, { ok: true, model: req.body.model });
    });
    const result = await raw(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      {
        'x-gateway-config': JSON.stringify({ custom_host: fake.url, request_timeout: 200 }),
      },
    );
    const log = await expectGatewayError(result, 408, 'upstream_timeout');
    expect(log.upstream_latency_ms).toBeGreaterThanOrEqual(150);
    // A whole reply that took too long: say how long the gateway waited, and how to avoid the wait.
    const message = String(result.body.error.message);
    expect(message).toContain('within 200 ms');
    expect(message).toContain('`stream: true`');
    expect(message).toContain('request_timeout');
    expect(message).toContain('GATEWAY_UPSTREAM_TIMEOUT_MS');
    expect(log.error.message).toBe(message);
  });

  it('a whole reply cut mid-body is a 502, one that stalls mid-body a 408', async () => {
    const call = () =>
      raw(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), {
        'x-gateway-config': JSON.stringify({ custom_host: fake.url, request_timeout: 300 }),
      });
    fake.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":"chatcmpl-cut",');
      setTimeout(() => res.destroy(), 50);
    });
    const cut = await call();
    const log = await expectGatewayError(cut, 502, 'upstream_unreachable');
    expect(String(cut.body.error.message)).toContain('reset');
    expect(log.status).toBe(502);

    fake.use(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":"chatcmpl-stall",');
      await sleep(1000);
      res.destroy();
    });
    await expectGatewayError(await call(), 408, 'upstream_timeout');
  });

  it('a streamed call that times out is not told to stream', async () => {
    fake.use(async (req, res) => {
      await sleep(1500);
      if (!res.destroyed) sendJson(res, 200, { ok: true, model: req.body.model });
    });
    const result = await raw(
      JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }),
      { 'x-gateway-config': JSON.stringify({ custom_host: fake.url, request_timeout: 1200 }) },
    );
    await expectGatewayError(result, 408, 'upstream_timeout');
    expect(result.body.error.message).toBe('The provider did not answer within 1200 ms (1.2 s).');
  });

  it('refuses link-local hosts such as the instance metadata service', async () => {
    const result = await raw(
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
      {
        'x-gateway-custom-host': 'http://169.254.169.254/latest',
      },
    );
    await expectGatewayError(result, 400, 'host_not_allowed');
  });

  it("keeps a provider's own error status and message, marked as the provider's", async () => {
    fake.use((_req, res) =>
      sendJson(
        res,
        429,
        {
          error: {
            message: 'Rate limit reached for gpt-4o',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
        { 'retry-after': '3' },
      ),
    );
    const client = gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
    const failure = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    const error = failure as APIError;
    expect(error.status).toBe(429);
    expect(error.message).toContain('Rate limit reached for gpt-4o');
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.headers?.get('x-gateway-error-origin')).toBe('provider');
    expect(error.headers?.get('retry-after')).toBe('3');
    const log = await waitForLog(gw, error.headers?.get('x-gateway-request-id') as string);
    expect(log.status).toBe(429);
    expect(log.error).toMatchObject({ origin: 'provider', code: 'rate_limit_exceeded' });
  });

  it('a provider error without a JSON body still gives a clear error', async () => {
    fake.use((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>Service Unavailable</html>');
    });
    const result = await raw(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }));
    expect(result.status).toBe(503);
    expect(result.headers.get('x-gateway-error-origin')).toBe('provider');
    expect(result.body.error.message).toContain('Service Unavailable');
  });

  it('a 200 that is not JSON is a 502 from the provider', async () => {
    fake.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('not json at all');
    });
    const result = await raw(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }));
    await expectGatewayError(result, 502, 'invalid_upstream_reply', 'provider');
  });

  it('a missing or wrong gateway key is a 401 in the OpenAI shape, and no log is written for it', async () => {
    const missing = await fetch(`${gw.url}/chat/completions`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    const wrong = await raw('{}', { 'x-gateway-api-key': 'gwk_wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('x-gateway-error-origin')).toBe('gateway');
    const bearer = await raw('{}', { 'x-gateway-api-key': `Bearer ${ADMIN_KEY}` });
    expect(bearer.status).toBe(401);
    const logs = await gw.api('GET', `/logs/${wrong.headers.get('x-gateway-request-id')}`);
    expect(logs.status).toBe(404);
  });

  it('an unknown route is a 404 in the OpenAI shape', async () => {
    const res = await fetch(`${gw.url}/no/such/route`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('answers health without a key', async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
