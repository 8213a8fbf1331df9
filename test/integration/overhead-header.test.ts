import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, sendJson, sleep, startFakeOpenAI, streamWords } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

// `x-gateway-overhead-ms`: the gateway's own time before the reply started, without the provider's.
// No timing threshold is asserted: the header is checked against the request's own log entry.

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };
const overheadOf = (headers: Headers) => {
  const raw = headers.get('x-gateway-overhead-ms');
  expect(raw).toMatch(/^\d+\.\d{2}$/);
  return Number(raw);
};

describe('x-gateway-overhead-ms', () => {
  it('leaves out the time the provider took on a whole reply', async () => {
    fake.use(async (req, res) => {
      await sleep(150);
      sendJson(res, 200, completion(String(req.body.model), 'slow'));
    });
    const { response } = await client().chat.completions.create(ask).withResponse();
    const overhead = overheadOf(response.headers);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.upstream_latency_ms).toBeGreaterThanOrEqual(150);
    // Measured before the reply was written, so at most the logged time outside the provider.
    expect(overhead).toBeLessThanOrEqual(log.latency_ms - log.upstream_latency_ms + 0.02);
  });

  it('is on a streamed reply, measured up to its first byte', async () => {
    fake.use(async (req, res) => {
      await sleep(150);
      await streamWords(req, res, ['a', 'b']);
    });
    const { data, response } = await client()
      .chat.completions.create({ ...ask, stream: true })
      .withResponse();
    for await (const _ of data) {
      // drain
    }
    const overhead = overheadOf(response.headers);
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.first_chunk_ms).toBeGreaterThanOrEqual(150);
    expect(overhead).toBeLessThan(log.latency_ms);
  });

  it('is on a provider error too, and not on control-plane replies', async () => {
    fake.use((_req, res) =>
      sendJson(res, 400, { error: { message: 'nope', type: 'invalid_request_error' } }),
    );
    const failure = await client()
      .chat.completions.create(ask)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    overheadOf((failure as APIError).headers as Headers);
    const health = await fetch(`${gw.url}/v1/health`);
    expect(health.headers.get('x-gateway-overhead-ms')).toBeNull();
  });
});
