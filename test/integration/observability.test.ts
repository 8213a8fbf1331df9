import { describe, expect, it, vi } from 'vitest';
import { startFakeOpenAI, streamWords } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });

describe('time to first chunk', () => {
  it('is logged for a stream: after the upstream answered, before the stream ended', async () => {
    // The first chunk comes at once, the rest 60 ms apart: first chunk well before the end.
    fake.use((req, res) => streamWords(req, res, ['a', 'b', 'c', 'd'], 60));
    const { data, response } = await client()
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    for await (const _ of data) {
      // drain the stream
    }
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.first_chunk_ms).toBeGreaterThan(0);
    expect(log.upstream_latency_ms - log.first_chunk_ms).toBeGreaterThanOrEqual(200);
  });

  it('is null for a reply that is not streamed', async () => {
    fake.reset();
    const { response } = await client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
    expect(log.first_chunk_ms).toBeNull();
  });
});

describe('metrics on a laptop', () => {
  it('writes no EMF record to stdout', async () => {
    const write = vi.spyOn(process.stdout, 'write');
    try {
      fake.reset();
      const { response } = await client()
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
      const printed = write.mock.calls.map(([chunk]) => String(chunk)).join('');
      expect(printed).not.toContain('"_aws"');
    } finally {
      write.mockRestore();
    }
  });
});
