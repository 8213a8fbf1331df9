import {
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { CachedSecretStore, SecretsManagerSecretStore } from '../../functions/store/secret-store';

const sm = mockClient(SecretsManagerClient);
const notFound = () => new ResourceNotFoundException({ message: 'not found', $metadata: {} });
const PREFIX = 'gateway/virtual-keys/';

describe('SecretsManagerSecretStore', () => {
  let store: SecretsManagerSecretStore;
  beforeEach(() => {
    sm.reset();
    store = new SecretsManagerSecretStore(PREFIX, new SecretsManagerClient({ region: 'us-east-1' }));
  });
  afterEach(() => {
    delete process.env.GATEWAY_SECRET_CACHE_TTL_MS;
    loadSettings();
  });

  it('creates a secret under the prefix when none exists', async () => {
    sm.on(PutSecretValueCommand).rejects(notFound());
    sm.on(CreateSecretCommand).resolves({});
    await store.put('org_1/default/main', 'sk-1');
    expect(sm.commandCalls(CreateSecretCommand)[0]?.args[0].input).toMatchObject({
      Name: 'gateway/virtual-keys/org_1/default/main',
      SecretString: 'sk-1',
    });
  });

  it('rotates an existing secret with PutSecretValue', async () => {
    sm.on(PutSecretValueCommand).resolves({});
    await store.put('org_1/default/main', 'sk-2');
    expect(sm.commandCalls(PutSecretValueCommand)[0]?.args[0].input).toEqual({
      SecretId: 'gateway/virtual-keys/org_1/default/main',
      SecretString: 'sk-2',
    });
    expect(sm.commandCalls(CreateSecretCommand)).toHaveLength(0);
  });

  it('reads a value, and undefined for a missing secret', async () => {
    sm.on(GetSecretValueCommand, { SecretId: `${PREFIX}a/b/c` }).resolves({ SecretString: 'sk-3' });
    sm.on(GetSecretValueCommand, { SecretId: `${PREFIX}a/b/missing` }).rejects(notFound());
    expect(await store.get('a/b/c')).toBe('sk-3');
    expect(await store.get('a/b/missing')).toBeUndefined();
  });

  it('deletes without a recovery window, and tolerates a secret already gone', async () => {
    sm.on(DeleteSecretCommand).resolvesOnce({}).rejectsOnce(notFound());
    await store.delete('a/b/c');
    await store.delete('a/b/c');
    expect(sm.commandCalls(DeleteSecretCommand)[0]?.args[0].input).toEqual({
      SecretId: `${PREFIX}a/b/c`,
      ForceDeleteWithoutRecovery: true,
    });
  });

  it('is cached for a bounded time and dropped on rotation', async () => {
    process.env.GATEWAY_SECRET_CACHE_TTL_MS = '50';
    loadSettings();
    const cached = new CachedSecretStore(store);
    sm.on(GetSecretValueCommand).resolves({ SecretString: 'v1' });
    sm.on(PutSecretValueCommand).resolves({});
    expect(await cached.get('a/b/c')).toBe('v1');
    expect(await cached.get('a/b/c')).toBe('v1');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 60));
    await cached.get('a/b/c');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
    await cached.put('a/b/c', 'v2');
    sm.on(GetSecretValueCommand).resolves({ SecretString: 'v2' });
    expect(await cached.get('a/b/c')).toBe('v2');
  });
});
