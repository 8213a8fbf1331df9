import { describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const ask = (config: unknown) =>
  fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': 'gwk_test_admin_key_0123456789',
      'x-gateway-custom-host': fake.url,
      'x-gateway-config': JSON.stringify(config),
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('saved guardrails and guardrail config validation', () => {
  it('creates, lists, reads, replaces and deletes a saved guardrail', async () => {
    const created = await gw.api('POST', '/guardrails', {
      name: 'No PII',
      checks: [{ type: 'pii', action: 'redact', kinds: ['email'] }, { type: 'prompt_injection' }],
    });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^gr_[0-9a-z]{26}$/);
    expect(created.body.checks).toHaveLength(2);

    const listed = await gw.api('GET', '/guardrails');
    expect(listed.body.data.map((g: { id: string }) => g.id)).toContain(created.body.id);

    const replaced = await gw.api('PUT', `/guardrails/${created.body.id}`, {
      checks: [{ type: 'word_count', max: 100 }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: 'No PII', checks: [{ type: 'word_count', max: 100 }] });
    expect((await gw.api('GET', `/guardrails/${created.body.id}`)).body.checks).toEqual([
      { type: 'word_count', max: 100 },
    ]);

    expect((await gw.api('DELETE', `/guardrails/${created.body.id}`)).status).toBe(200);
    expect((await gw.api('GET', `/guardrails/${created.body.id}`)).status).toBe(404);
  });

  it('refuses a saved guardrail with bad checks, listing every problem', async () => {
    const res = await gw.api('POST', '/guardrails', {
      name: 'bad',
      checks: [{ type: 'regex', pattern: '(' }, { type: 'pii', kinds: ['dna'] }, { type: 'teleport' }],
    });
    expect(res.status).toBe(400);
    for (const part of ['checks[0].pattern', 'checks[1].kinds', 'checks[2].type'])
      expect(res.body.error.message).toContain(part);
    expect((await gw.api('POST', '/guardrails', { name: 'x' })).status).toBe(400);
  });

  it('validates guardrails in a gateway config, at the root only, listing every problem', async () => {
    const res = await ask({
      custom_host: fake.url,
      input_guardrails: [{ type: 'regex' }, 'not-an-id'],
      output_guardrails: [{ type: 'pii', action: 'shout' }],
      targets: [{ custom_host: fake.url, input_guardrails: [] }],
    });
    expect(res.status).toBe(400);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    for (const part of [
      'config.input_guardrails[0].pattern',
      'config.input_guardrails[1] is not a guardrail id',
      'config.output_guardrails[0].action',
      'config.targets[0].input_guardrails applies to the whole request',
    ]) {
      expect(message).toContain(part);
    }
  });
});
