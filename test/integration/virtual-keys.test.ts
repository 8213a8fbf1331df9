import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, sendJson, startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';
import { openRealtime, refusal } from '../support/realtime-client';

const SECRET = 'sk-live-virtual-key-credential-SECRET-0001';
const ROTATED = 'sk-live-virtual-key-credential-ROTATED-0002';
const messages = [{ role: 'user' as const, content: 'hi' }];

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

async function createKey(body: Record<string, unknown>) {
  const res = await gw.api('POST', '/virtual-keys', {
    name: 'Main OpenAI',
    provider: 'openai',
    key: SECRET,
    custom_host: fake.url,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('virtual keys', () => {
  it('creates, reads, lists, updates and deletes a key without ever showing the credential', async () => {
    const created = await createKey({
      slug: 'crud-key',
      budget_limit: 5,
      rate_limit: { requests_per_minute: 100 },
    });
    expect(created).toMatchObject({
      object: 'virtual_key',
      slug: 'crud-key',
      provider: 'openai',
      budget_limit: 5,
      spent: 0,
      remaining: 5,
      rate_limit: { requests_per_minute: 100 },
      alerts: [],
    });
    const got = await gw.api('GET', '/virtual-keys/crud-key');
    expect(got.status).toBe(200);
    const list = await gw.api('GET', '/virtual-keys');
    expect(list.body.object).toBe('list');
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data.map((k: { slug: string }) => k.slug)).toContain('crud-key');
    const patched = await gw.api('PATCH', '/virtual-keys/crud-key', { name: 'Renamed', budget_limit: 7 });
    expect(patched.body).toMatchObject({ name: 'Renamed', budget_limit: 7, remaining: 7 });
    const conflict = await gw.api('POST', '/virtual-keys', {
      name: 'x',
      slug: 'crud-key',
      provider: 'openai',
      key: SECRET,
    });
    expect(conflict.status).toBe(409);
    for (const res of [created, got.body, list.body, patched.body, conflict.body]) {
      expect(JSON.stringify(res)).not.toContain(SECRET);
      expect(JSON.stringify(res)).not.toContain(SECRET.slice(-8));
    }
    expect((await gw.api('DELETE', '/virtual-keys/crud-key')).status).toBe(200);
    expect((await gw.api('GET', '/virtual-keys/crud-key')).status).toBe(404);
    const after = await gw
      .client({ headers: { 'x-gateway-provider': '@crud-key' } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect(after).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('generates a unique slug when none is given', async () => {
    const a = await createKey({ name: 'Team Key' });
    const b = await createKey({ name: 'Team Key' });
    expect(a.slug).toBe('team-key');
    expect(b.slug).toMatch(/^team-key-[0-9a-f]{6}$/);
  });

  it('lists every bad field of an invalid key at once, without echoing the credential', async () => {
    const res = await gw.api('POST', '/virtual-keys', {
      name: '',
      provider: 'nope',
      key: 42,
      budget_limit: -1,
      rate_limit: { requests_per_minute: 0 },
      colour: 'red',
    });
    expect(res.status).toBe(400);
    const message: string = res.body.error.message;
    for (const field of ['name', 'provider', 'key', 'budget_limit', 'rate_limit', 'colour']) {
      expect(message).toContain(field);
    }
  });

  it('stores the credential in an owner-only file', async () => {
    await createKey({ slug: 'file-perm' });
    const root = join(gw.dataDir, 'secrets');
    expect(statSync(root).mode & 0o777).toBe(0o700);
    const files = filesUnder(root);
    const file = files.find((f) => f.endsWith('/file-perm'));
    expect(file).toBeDefined();
    expect(statSync(file as string).mode & 0o777).toBe(0o600);
    expect(statSync(join(file as string, '..')).mode & 0o777).toBe(0o700);
  });

  it('is usable by @slug header, x-gateway-virtual-key, @slug/model and config; the slug is stripped', async () => {
    await createKey({ slug: 'use-me' });
    const forms: Array<{ headers: Record<string, string>; model: string }> = [
      { headers: { 'x-gateway-provider': '@use-me' }, model: 'gpt-4o-mini' },
      { headers: { 'x-gateway-virtual-key': 'use-me' }, model: 'gpt-4o-mini' },
      { headers: {}, model: '@use-me/gpt-4o-mini' },
      { headers: { 'x-gateway-config': JSON.stringify({ virtual_key: 'use-me' }) }, model: 'gpt-4o-mini' },
    ];
    for (const form of forms) {
      fake.reset();
      const { data, response } = await gw
        .client({ apiKey: 'sk-passthrough-should-lose', headers: form.headers })
        .chat.completions.create({ model: form.model, messages })
        .withResponse();
      expect(data.choices[0]?.message.content).toBe('Echo: hi');
      expect(fake.requests[0]?.body.model).toBe('gpt-4o-mini');
      expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
      const entry = await waitForLog(gw, response.headers.get('x-gateway-request-id') as string);
      expect(entry.virtual_key).toBe('use-me');
      expect(entry.attempts).toEqual([
        expect.objectContaining({
          target_index: '0',
          provider: 'openai',
          virtual_key: 'use-me',
          status: 200,
        }),
      ]);
    }
  });

  it('answers 400 naming an unknown slug, and resolves slugs only in the caller workspace', async () => {
    const err = await gw
      .client({ headers: { 'x-gateway-provider': '@no-such-key' } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unknown_virtual_key');
    expect((err as Error).message).toContain('no-such-key');

    await createKey({ slug: 'default-only' });
    expect((await gw.api('POST', '/workspaces', { name: 'Other', slug: 'other' })).status).toBe(201);
    const key = await gw.api('POST', '/api-keys', { name: 'other', workspace: 'other' });
    const other = await gw
      .client({ gatewayKey: key.body.key, headers: { 'x-gateway-provider': '@default-only' } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect((other as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unknown_virtual_key');
    expect(fake.requests).toHaveLength(0);
  });

  it('rotates the credential for the next request', async () => {
    await createKey({ slug: 'rotate-me' });
    const client = gw.client({ headers: { 'x-gateway-provider': '@rotate-me' } });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    const patched = await gw.api('PATCH', '/virtual-keys/rotate-me', { key: ROTATED });
    expect(patched.status).toBe(200);
    expect(JSON.stringify(patched.body)).not.toContain(ROTATED);
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${SECRET}`,
      `Bearer ${ROTATED}`,
    ]);
  });

  it('takes organization and project from the key, then the config, then the request headers', async () => {
    await createKey({ slug: 'with-org', vendor_organization: 'org-vk', vendor_project: 'proj-vk' });
    const send = async (headers: Record<string, string>) => {
      fake.reset();
      await gw.client({ headers }).chat.completions.create({ model: 'gpt-4o-mini', messages });
      const h = fake.requests[0]?.headers ?? {};
      return [h['openai-organization'], h['openai-project']];
    };
    expect(await send({ 'x-gateway-provider': '@with-org' })).toEqual(['org-vk', 'proj-vk']);
    const config = JSON.stringify({ virtual_key: 'with-org', vendor_organization: 'org-config' });
    expect(await send({ 'x-gateway-config': config })).toEqual(['org-config', 'proj-vk']);
    expect(
      await send({
        'x-gateway-config': config,
        'x-gateway-vendor-organization': 'org-header',
        'x-gateway-vendor-project': 'proj-header',
      }),
    ).toEqual(['org-header', 'proj-header']);
  });

  it('prefers the virtual key over a config api_key, and that over the Authorization passthrough', async () => {
    await createKey({ slug: 'cred-order' });
    const send = async (headers: Record<string, string>) => {
      fake.reset();
      await gw
        .client({ apiKey: 'sk-passthrough', headers })
        .chat.completions.create({ model: 'gpt-4o-mini', messages });
      return fake.requests[0]?.headers.authorization;
    };
    // The caller's own credentials may go to a custom host; the virtual key's goes to its own host.
    expect(await send({ 'x-gateway-custom-host': fake.url })).toBe('Bearer sk-passthrough');
    expect(
      await send({ 'x-gateway-config': JSON.stringify({ api_key: 'sk-config', custom_host: fake.url }) }),
    ).toBe('Bearer sk-config');
    expect(
      await send({ 'x-gateway-config': JSON.stringify({ api_key: 'sk-config', virtual_key: 'cred-order' }) }),
    ).toBe(`Bearer ${SECRET}`);
  });

  it('refuses a virtual key named with a custom host in every form; the host receives nothing', async () => {
    // Before issue 13 the request's host won and the stored credential went to it.
    await createKey({ slug: 'prod-openai' });
    const attacker = await startFakeOpenAI();
    try {
      const host = `${attacker.url}/v1`;
      const saved = await gw.api('POST', '/configs', {
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ virtual_key: 'prod-openai' }],
          retry: { attempts: 2 },
        },
      });
      expect(saved.status).toBe(201);
      const cases: Array<{ headers: Record<string, string>; model?: string; param: string }> = [
        {
          headers: { 'x-gateway-provider': '@prod-openai', 'x-gateway-custom-host': host },
          param: 'x-gateway-custom-host',
        },
        {
          headers: { 'x-gateway-custom-host': host },
          model: '@prod-openai/gpt-4o-mini',
          param: 'x-gateway-custom-host',
        },
        {
          headers: { 'x-gateway-virtual-key': 'prod-openai', 'x-gateway-custom-host': host },
          param: 'x-gateway-custom-host',
        },
        {
          headers: { 'x-gateway-config': JSON.stringify({ virtual_key: 'prod-openai', custom_host: host }) },
          param: 'config.custom_host',
        },
        {
          headers: { 'x-gateway-config': JSON.stringify({ provider: '@prod-openai', custom_host: host }) },
          param: 'config.custom_host',
        },
        {
          headers: {
            'x-gateway-config': JSON.stringify({
              strategy: { mode: 'fallback' },
              targets: [
                { api_key: 'sk-mine', custom_host: fake.url },
                { virtual_key: 'prod-openai', custom_host: host },
              ],
            }),
          },
          param: 'config.targets[1].custom_host',
        },
        {
          headers: { 'x-gateway-config': saved.body.id, 'x-gateway-custom-host': host },
          param: 'x-gateway-custom-host',
        },
        {
          headers: {
            'x-gateway-provider': '@prod-openai',
            'x-gateway-custom-host': host,
            'x-gateway-config': JSON.stringify({ input_guardrails: [{ type: 'moderation' }] }),
          },
          param: 'x-gateway-custom-host',
        },
      ];
      for (const c of cases) {
        fake.reset();
        const err = (await gw
          .client({ apiKey: 'sk-passthrough', headers: c.headers })
          .chat.completions.create({ model: c.model ?? 'gpt-4o-mini', messages })
          .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
        expect(err, JSON.stringify(c)).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err.code, JSON.stringify(c)).toBe('custom_host_not_allowed');
        expect(err.param, JSON.stringify(c)).toBe(c.param);
        const entry = await waitForLog(gw, err.headers?.get('x-gateway-request-id') as string);
        expect(entry.status).toBe(400);
        expect(entry.error).toMatchObject({ code: 'custom_host_not_allowed' });
        expect(fake.requests).toHaveLength(0);
      }

      const client = gw.client({
        headers: { 'x-gateway-provider': '@prod-openai', 'x-gateway-custom-host': host },
      });
      // Each refusal is caught where it is made: a later one may settle while an earlier one is awaited.
      const refusals = [
        client.images.generate({ model: 'gpt-image-1', prompt: 'a cat' }).catch((e: unknown) => e),
        client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e),
        client.responses.create({ model: 'gpt-4o-mini', input: 'hi' }).catch((e: unknown) => e),
      ];
      for (const err of await Promise.all(refusals)) {
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('custom_host_not_allowed');
      }

      const prompt = await gw.api('POST', '/prompts', {
        name: 'VK prompt',
        model: 'gpt-4o-mini',
        virtual_key: 'prod-openai',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(prompt.status).toBe(201);
      const run = await fetch(`${gw.url}/prompts/${prompt.body.id}/completions`, {
        method: 'POST',
        headers: {
          'x-gateway-api-key': ADMIN_KEY,
          'x-gateway-custom-host': host,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ variables: {} }),
      });
      expect(run.status).toBe(400);
      expect(((await run.json()) as { error: { code: string } }).error.code).toBe('custom_host_not_allowed');

      const realtime = await refusal(
        openRealtime(gw, host, {
          headers: {
            'x-gateway-api-key': ADMIN_KEY,
            'x-gateway-provider': '@prod-openai',
            'x-gateway-custom-host': host,
          },
        }),
      );
      expect(realtime.status).toBe(400);
      expect(realtime.body.error.code).toBe('custom_host_not_allowed');

      expect(attacker.requests).toHaveLength(0);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await attacker.close();
    }
  });

  it("keeps an Azure key's resource: a config naming another resource is refused", async () => {
    const azure = await gw.api('POST', '/virtual-keys', {
      name: 'Azure',
      slug: 'azure-prod',
      provider: 'azure-openai',
      key: SECRET,
      resource_name: 'my-resource',
      deployment_id: 'gpt4o',
    });
    expect(azure.status, JSON.stringify(azure.body)).toBe(201);
    const err = await gw
      .client({
        headers: {
          'x-gateway-config': JSON.stringify({ virtual_key: 'azure-prod', resource_name: 'attacker' }),
        },
      })
      .chat.completions.create({ model: 'gpt-4o', messages })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('custom_host_not_allowed');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('config.resource_name');
  });

  it('never puts the credential in a reply or a log entry, even when the provider fails', async () => {
    await createKey({ slug: 'no-leak' });
    fake.use((_req, res) =>
      sendJson(res, 401, { error: { message: 'bad key', type: 'invalid_request_error' } }),
    );
    const client = gw.client({ headers: { 'x-gateway-provider': '@no-leak' } });
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(JSON.stringify((err as InstanceType<typeof OpenAI.APIError>).error)).not.toContain(SECRET);
    fake.use((req, res) => sendJson(res, 200, completion(String(req.body.model), 'ok')));
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: false });
    const logs = await gw.api('GET', '/logs?limit=100');
    expect(logs.body.data.length).toBeGreaterThan(0);
    const full = await Promise.all(
      logs.body.data.map((e: { id: string }) => gw.api('GET', `/logs/${e.id}`).then((r) => r.body)),
    );
    const serialized = JSON.stringify([logs.body, full]);
    expect(serialized).toContain('no-leak');
    expect(serialized).not.toContain(SECRET);
    expect(serialized).not.toContain(ROTATED);
  });

  it('needs the virtual_keys scopes', async () => {
    const key = await gw.api('POST', '/api-keys', { name: 'no vk scopes', scopes: ['completions.write'] });
    expect((await gw.api('GET', '/virtual-keys', undefined, key.body.key)).status).toBe(403);
    expect(
      (await gw.api('POST', '/virtual-keys', { name: 'x', provider: 'openai', key: 'k' }, key.body.key))
        .status,
    ).toBe(403);
    const reader = await gw.api('POST', '/api-keys', { name: 'reader', scopes: ['virtual_keys.read'] });
    expect((await gw.api('GET', '/virtual-keys', undefined, reader.body.key)).status).toBe(200);
  });
});
