import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { completion, sendJson, sleep, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { captureLogLines } from '../support/log-lines';

// Operational log lines carry the request's id and the invocation's Lambda context, however deep in the
// request they are written and although nothing passes the id down: the handlers inject the context,
// and the local server runs each request in its own invocation context, as Lambda does.

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

// Powertools writes JSON lines to stdout and stderr; they are collected here.
const lines = captureLogLines();

describe('operational logs', () => {
  it('name the request they belong to, with two requests in flight at once', async () => {
    // Models without a price: settling each request warns deep in its after-send work.
    const models = [`unpriced-${randomUUID()}`, `unpriced-${randomUUID()}`];
    fake.use(async (req, res) => {
      await sleep(100);
      sendJson(res, 200, completion(String(req.body.model), 'hi'));
    });
    const client = gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
    const replies = await Promise.all(
      models.map((model) =>
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).withResponse(),
      ),
    );
    const ids = replies.map(({ response }) => response.headers.get('x-gateway-request-id'));

    await vi.waitFor(() => {
      expect(lines.filter((l) => l.message === 'no price for model; cost is logged as null')).toHaveLength(2);
    });
    const warnings = lines.filter((l) => l.message === 'no price for model; cost is logged as null');
    for (const [i, model] of models.entries()) {
      const line = warnings.find((l) => l.model === model);
      expect(line?.requestId).toBe(ids[i]);
      expect(line).toMatchObject({ function_name: 'gateway-chat', cold_start: expect.any(Boolean) });
      expect(line?.function_request_id).toEqual(expect.any(String));
    }
    const invocations = new Set(warnings.map((l) => l.function_request_id));
    expect(invocations.size).toBe(2);
  });
});
