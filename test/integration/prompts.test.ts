import { describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const template = {
  name: 'Greeter',
  model: 'gpt-4o-mini',
  provider: 'openai',
  messages: [
    { role: 'system', content: 'You greet people from {{city}}.' },
    { role: 'user', content: 'Say hi to {{name}} & {{friend}}' },
  ],
  hyperparameters: { max_tokens: 50, temperature: 0.2, presence_penalty: 0.5 },
};

async function createPrompt(body: Record<string, unknown> = template): Promise<string> {
  const res = await gw.api('POST', '/prompts', body);
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A prompt completion over fetch, as an SDK's generic `post` would send it. */
async function complete(id: string, body: unknown, query = '') {
  return fetch(`${gw.url}/prompts/${id}/completions${query}`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': 'gwk_test_admin_key_0123456789',
      'x-gateway-custom-host': fake.url,
      authorization: 'Bearer sk-provider-key',
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
}

describe('prompt library', () => {
  it('creates a prompt as version 1, lists it, reads it with its variables', async () => {
    const id = await createPrompt();
    expect(id).toMatch(/^pmt_[a-z0-9]{26}$/);
    const got = await gw.api('GET', `/prompts/${id}`);
    expect(got.body).toMatchObject({
      id,
      object: 'prompt',
      version: 1,
      name: 'Greeter',
      model: 'gpt-4o-mini',
      provider: 'openai',
      virtual_key: null,
      hyperparameters: template.hyperparameters,
    });
    expect(got.body.variables.sort()).toEqual(['city', 'friend', 'name']);
    const list = await gw.api('GET', '/prompts');
    expect(list.body.object).toBe('list');
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(id);
  });

  it('makes a new version on each update, uses the latest, and keeps older versions readable', async () => {
    const id = await createPrompt();
    const updated = await gw.api('PUT', `/prompts/${id}`, { hyperparameters: { max_tokens: 80 } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, hyperparameters: { max_tokens: 80 }, name: 'Greeter' });
    expect((await gw.api('GET', `/prompts/${id}`)).body.version).toBe(2);
    expect((await gw.api('GET', `/prompts/${id}?version=1`)).body.hyperparameters.max_tokens).toBe(50);
    expect((await gw.api('GET', `/prompts/${id}?version=9`)).status).toBe(404);
  });

  it('renders templates inside content parts too', async () => {
    const id = await createPrompt({
      ...template,
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/{{img}}.png' } }] },
      ],
    });
    const res = await gw.api('POST', `/prompts/${id}/render`, { variables: { img: 'cat' } });
    expect(res.body.data.messages[0].content[0].image_url.url).toBe('https://x/cat.png');
  });

  it('renders without calling a model, with no HTML escaping', async () => {
    const id = await createPrompt();
    const res = await gw.api('POST', `/prompts/${id}/render`, {
      variables: { city: 'Paris', name: 'Zoë <admin>', friend: 'Tom & "Jerry"' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'prompt.render', id, version: 1 });
    expect(res.body.data).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You greet people from Paris.' },
        { role: 'user', content: 'Say hi to Zoë <admin> & Tom & "Jerry"' },
      ],
      max_tokens: 50,
      temperature: 0.2,
      presence_penalty: 0.5,
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a missing variable, naming it', async () => {
    const id = await createPrompt();
    const res = await complete(id, { variables: { city: 'Paris', name: 'Ann' } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; param: string } };
    expect(body.error.message).toContain('friend');
    expect(body.error.param).toBe('variables.friend');
    expect(fake.requests).toHaveLength(0);
    const noVariables = await complete(id, {});
    expect(noVariables.status).toBe(400);
    expect(((await noVariables.json()) as { error: { param: string } }).error.param).toBe('variables');
  });

  it('runs a completion in the chat shape with overrides, and logs the prompt id, version, tokens and cost', async () => {
    const id = await createPrompt();
    await gw.api('PUT', `/prompts/${id}`, { hyperparameters: { max_tokens: 70, presence_penalty: 0.1 } });
    const res = await complete(id, {
      variables: { city: 'Oslo', name: 'Kari', friend: 'Ola' },
      max_tokens: 20,
      presence_penalty: 1,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; choices: Array<{ message: { content: string } }> };
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]?.message.content).toBe('Echo: Say hi to Kari & Ola');
    expect(fake.requests[0]?.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 20,
      presence_penalty: 1,
    });
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      operation: 'prompts.completions',
      prompt: { id, version: 2 },
      provider: 'openai',
      model: 'gpt-4o-mini',
      usage: { prompt_tokens: 12, completion_tokens: 5 },
    });
    expect(log.cost).toBeCloseTo((12 * 0.15 + 5 * 0.6) / 1e6, 12);
  });

  it('runs a named version from the body or the query string', async () => {
    const id = await createPrompt();
    await gw.api('PUT', `/prompts/${id}`, { model: 'gpt-4.1' });
    const variables = { city: 'Rome', name: 'A', friend: 'B' };
    const fromBody = await complete(id, { variables, version: 1 });
    expect(fake.requests[0]?.body.model).toBe('gpt-4o-mini');
    const fromQuery = await complete(id, { variables }, '?version=2');
    expect(fake.requests[1]?.body.model).toBe('gpt-4.1');
    const logs = await Promise.all(
      [fromBody, fromQuery].map((r) => waitForLog(gw, r.headers.get('x-gateway-request-id') as string)),
    );
    expect(logs.map((l) => l.prompt.version)).toEqual([1, 2]);
  });

  it('streams like chat', async () => {
    const id = await createPrompt();
    const res = await complete(id, { variables: { city: 'Rome', name: 'A', friend: 'B' }, stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text).toContain('Echo: ');
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log).toMatchObject({
      stream: true,
      prompt: { id, version: 1 },
      response: { choices: [{ message: { content: 'Echo: Say hi to A & B' } }] },
    });
  });

  it("uses the prompt's virtual key as its target", async () => {
    await gw.api('POST', '/virtual-keys', {
      name: 'p',
      slug: 'prompt-key',
      provider: 'openai',
      key: 'sk-prompt',
      custom_host: fake.url,
    });
    const id = await createPrompt({ ...template, provider: undefined, virtual_key: 'prompt-key' });
    const res = await fetch(`${gw.url}/prompts/${id}/completions`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': 'gwk_test_admin_key_0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ variables: { city: 'X', name: 'Y', friend: 'Z' } }),
    });
    expect(res.status).toBe(200);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-prompt');
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') as string);
    expect(log.virtual_key).toBe('prompt-key');
  });

  it('validates templates and hyperparameters, and deletes prompts', async () => {
    expect(
      (
        await gw.api('POST', '/prompts', {
          ...template,
          messages: [{ role: 'user', content: 'Hi {{#open}}' }],
        })
      ).status,
    ).toBe(400);
    const bad = await gw.api('POST', '/prompts', { ...template, hyperparameters: { temperature: 9 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('hyperparameters.temperature');
    expect((await gw.api('POST', '/prompts', { ...template, hyperparameters: { foo: 1 } })).status).toBe(400);
    const id = await createPrompt();
    await gw.api('PUT', `/prompts/${id}`, { name: 'v2' });
    expect((await gw.api('DELETE', `/prompts/${id}`)).body).toEqual({ id, object: 'prompt', deleted: true });
    expect((await gw.api('GET', `/prompts/${id}`)).status).toBe(404);
    expect((await gw.api('GET', `/prompts/${id}?version=1`)).status).toBe(404);
  });

  it('needs prompts.read, prompts.write and completions.write scopes', async () => {
    const id = await createPrompt();
    const key = await gw.api('POST', '/api-keys', {
      name: 'r',
      type: 'workspace',
      workspace: 'default',
      scopes: ['prompts.read'],
    });
    expect((await gw.api('GET', `/prompts/${id}`, undefined, key.body.key)).status).toBe(200);
    expect((await gw.api('PUT', `/prompts/${id}`, { name: 'x' }, key.body.key)).status).toBe(403);
    expect((await gw.api('POST', `/prompts/${id}/completions`, { variables: {} }, key.body.key)).status).toBe(
      403,
    );
  });
});
