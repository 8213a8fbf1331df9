import type { LookupAddress } from 'node:dns';
import OpenAI from 'openai';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureAddressGuard } from '../../functions/gateway/address-guard';
import { startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const messages = [{ role: 'user' as const, content: 'hi' }];
const LOCAL = { onAws: false, allowPrivate: true };

// DNS answers for the test: names that resolve to forbidden addresses, and one to the fake provider.
const answers: Record<string, LookupAddress[]> = {
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'mapped.test': [{ address: '::ffff:a9fe:a9fe', family: 6 }],
  'nat64.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'ec2v6.test': [{ address: 'fd00:ec2::254', family: 6 }],
  'fake.test': [{ address: '127.0.0.1', family: 4 }],
  'fake-again.test': [{ address: '127.0.0.1', family: 4 }],
  'private.test': [{ address: '10.0.0.5', family: 4 }],
};

// The fake resolver is in place before the gateway starts.
beforeAll(() => {
  configureAddressGuard({ environment: LOCAL, resolver: (host, cb) => cb(null, answers[host] ?? []) });
});
const { gw, fake } = useGateway({ fake: startFakeOpenAI });
let port: string;

beforeAll(() => {
  port = new URL(fake.url).port;
});
beforeEach(() => {
  configureAddressGuard({ environment: LOCAL });
});

async function refusedWith(host: string, code = 'host_not_allowed') {
  const err = (await gw
    .client({ headers: { 'x-gateway-custom-host': host } })
    .chat.completions.create({ model: 'gpt-4o-mini', messages })
    .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
  expect(err, host).toBeInstanceOf(OpenAI.BadRequestError);
  expect(err.code, host).toBe(code);
  return err;
}

describe('outbound address guard', () => {
  it('refuses names resolving to the metadata service in any form, and logs the reason', async () => {
    for (const name of ['metadata.test', 'mapped.test', 'nat64.test', 'ec2v6.test']) {
      const err = await refusedWith(`http://${name}/v1`);
      expect(err.message).toContain(name);
      const entry = await waitForLog(gw, err.headers?.get('x-gateway-request-id') as string);
      expect(entry.error).toMatchObject({ code: 'host_not_allowed' });
      expect(entry.error.message).toMatch(/resolves to/);
    }
    for (const spelling of [
      'http://2852039166/v1',
      'http://0251.0376.0251.0376/v1',
      'http://0xa9fea9fe/v1',
      'http://[::ffff:a9fe:a9fe]/v1',
      'http://[::a9fe:a9fe]/v1',
      'http://[64:ff9b::a9fe:a9fe]/v1',
      'http://[fd00:ec2::254]/v1',
    ]) {
      await refusedWith(spelling);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('resolves at connect time: a name reaches the fake locally, and not once private hosts are off', async () => {
    const completion = await gw
      .client({ headers: { 'x-gateway-custom-host': `http://fake.test:${port}/v1` } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(completion.choices[0]?.message.content).toBe('Echo: hi');
    expect(fake.requests).toHaveLength(1);

    configureAddressGuard({ environment: { onAws: false, allowPrivate: false } });
    // A new name: kept-alive connections were checked when they were opened.
    await refusedWith(`http://fake-again.test:${port}/v1`);
    await refusedWith(fake.url);
    await refusedWith('http://private.test/v1');
    expect(fake.requests).toHaveLength(1);
  });

  it('wants https for custom hosts on AWS', async () => {
    configureAddressGuard({ environment: { onAws: true, allowPrivate: true } });
    const err = await refusedWith('http://api.example.test/v1');
    expect(err.message).toContain('https');
  });
});

describe('organisation egress settings', () => {
  it('are admin only, validated, and allowed locally by default', async () => {
    const got = await gw.api('GET', '/organisation/egress');
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      object: 'organisation.egress',
      allow_custom_hosts: true,
      allowed_hosts: [],
    });
    const key = await gw.api('POST', '/api-keys', { name: 'ws', scopes: ['completions.write'] });
    expect((await gw.api('GET', '/organisation/egress', undefined, key.body.key)).status).toBe(403);
    expect(
      (await gw.api('PUT', '/organisation/egress', { allow_custom_hosts: false }, key.body.key)).status,
    ).toBe(403);
    const bad = await gw.api('PUT', '/organisation/egress', {
      allow_custom_hosts: 'yes',
      allowed_hosts: ['a b'],
      x: 1,
    });
    expect(bad.status).toBe(400);
    for (const field of ['allow_custom_hosts', 'allowed_hosts[0]', 'x'])
      expect(bad.body.error.message).toContain(field);
  });

  it('decide which hosts requests may name; hosts an admin stored still work', async () => {
    const vk = await gw.api('POST', '/virtual-keys', {
      name: 'admin vk',
      slug: 'admin-host',
      provider: 'openai',
      key: 'sk-admin-stored',
      custom_host: fake.url,
    });
    expect(vk.status).toBe(201);
    const saved = await gw.api('POST', '/configs', { config: { custom_host: fake.url } });
    expect(saved.status).toBe(201);

    const off = await gw.api('PUT', '/organisation/egress', { allow_custom_hosts: false, allowed_hosts: [] });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ allow_custom_hosts: false });
    const err = await refusedWith(fake.url);
    expect(err.param).toBe('x-gateway-custom-host');
    const inline = (await gw
      .client({ headers: { 'x-gateway-config': JSON.stringify({ custom_host: fake.url }) } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(inline.code).toBe('host_not_allowed');
    expect(inline.param).toBe('config.custom_host');
    expect(fake.requests).toHaveLength(0);

    await gw
      .client({ headers: { 'x-gateway-provider': '@admin-host' } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages });
    await gw
      .client({ headers: { 'x-gateway-config': saved.body.id } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(fake.requests).toHaveLength(2);

    // A key or config saved by a workspace key is the caller's choice, not the operator's.
    const keyWriter = await gw.api('POST', '/api-keys', {
      name: 'vk writer',
      scopes: ['virtual_keys.write'],
    });
    const theirKey = await gw.api(
      'POST',
      '/virtual-keys',
      { name: 'theirs', provider: 'openai', key: 'sk-theirs', custom_host: fake.url },
      keyWriter.body.key,
    );
    expect(theirKey.status).toBe(400);
    expect(theirKey.body.error).toMatchObject({ code: 'host_not_allowed', param: 'custom_host' });
    const writer = await gw.api('POST', '/api-keys', {
      name: 'writer',
      scopes: ['configs.write', 'completions.write'],
    });
    const theirs = await gw.api('POST', '/configs', { config: { custom_host: fake.url } }, writer.body.key);
    expect(theirs.status).toBe(201);
    const refused = (await gw
      .client({ gatewayKey: writer.body.key, headers: { 'x-gateway-config': theirs.body.id } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused.code).toBe('host_not_allowed');

    const listed = await gw.api('PUT', '/organisation/egress', {
      allow_custom_hosts: true,
      allowed_hosts: [`127.0.0.1:${port}`, '*.example.test'],
    });
    expect(listed.status).toBe(200);
    await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(fake.requests).toHaveLength(3);
    const other = await refusedWith(`http://127.0.0.1:${Number(port) + 1}/v1`);
    expect(other.message).toContain('allowed_hosts');
    await gw.api('PUT', '/organisation/egress', { allow_custom_hosts: true, allowed_hosts: [] });
  });
});
