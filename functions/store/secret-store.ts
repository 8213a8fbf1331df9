import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { settings } from '../core/settings';
import { containerMap } from '../core/ttl-cache';

/**
 * Provider credentials of virtual keys. Secrets Manager on AWS (one secret per virtual key under the
 * stack's prefix `gateway/<stack-name>/virtual-keys/`, so IAM scopes every grant to this stack's keys), owner-only files under the data dir locally.
 * Names are `<organisation>/<workspace>/<slug>`, made only of validated ids and slugs.
 */
export interface SecretStore {
  /** Creates the secret, or replaces its value when it already exists (a rotation). */
  put(name: string, value: string): Promise<void>;
  get(name: string): Promise<string | undefined>;
  delete(name: string): Promise<void>;
}

/** The subset of the Secrets Manager client the adapter uses; the real client is loaded lazily. */
export interface SecretsManagerLike {
  send(command: unknown): Promise<unknown>;
}

type SecretsManagerModule = typeof import('@aws-sdk/client-secrets-manager');

const errorName = (error: unknown) => (error as { name?: string } | null)?.name;

export class SecretsManagerSecretStore implements SecretStore {
  // Loaded on first use: the SDK comes from the Lambda runtime (lib/bundling.ts RUNTIME_PROVIDED).
  private loaded?: Promise<{ client: SecretsManagerLike; mod: SecretsManagerModule }>;

  constructor(
    private readonly prefix: string,
    private readonly clientOverride?: SecretsManagerLike,
  ) {}

  private sm() {
    this.loaded ??= import('@aws-sdk/client-secrets-manager').then((mod) => ({
      client: this.clientOverride ?? new mod.SecretsManagerClient({}),
      mod,
    }));
    return this.loaded;
  }

  private id(name: string): string {
    return `${this.prefix}${name}`;
  }

  async put(name: string, value: string): Promise<void> {
    const { client, mod } = await this.sm();
    try {
      await client.send(new mod.PutSecretValueCommand({ SecretId: this.id(name), SecretString: value }));
    } catch (error) {
      if (errorName(error) !== 'ResourceNotFoundException') throw error;
      await client.send(
        new mod.CreateSecretCommand({
          Name: this.id(name),
          SecretString: value,
          Description: 'Provider credential of an LLM gateway virtual key',
        }),
      );
    }
  }

  async get(name: string): Promise<string | undefined> {
    const { client, mod } = await this.sm();
    try {
      const out = (await client.send(new mod.GetSecretValueCommand({ SecretId: this.id(name) }))) as {
        SecretString?: string;
      };
      return out.SecretString;
    } catch (error) {
      if (errorName(error) === 'ResourceNotFoundException') return undefined;
      throw error;
    }
  }

  /**
   * Deleted at once, without a recovery window: a secret waiting out its window still holds the name, so
   * a virtual key re-created with the same slug could not store its credential for 7 to 30 days. The
   * credential itself lives on at the provider, where it is revoked.
   */
  async delete(name: string): Promise<void> {
    const { client, mod } = await this.sm();
    try {
      await client.send(
        new mod.DeleteSecretCommand({ SecretId: this.id(name), ForceDeleteWithoutRecovery: true }),
      );
    } catch (error) {
      if (errorName(error) !== 'ResourceNotFoundException') throw error;
    }
  }
}

/** Local adapter: one file per secret, readable by the owner only (0600 files in 0700 folders). */
export class FileSecretStore implements SecretStore {
  constructor(private readonly root: string) {}

  private path(name: string): string {
    const root = resolve(this.root);
    const full = resolve(root, name);
    if (!full.startsWith(root + sep)) throw new Error('secret name escapes the store');
    return full;
  }

  async put(name: string, value: string): Promise<void> {
    const file = this.path(name);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await chmod(this.root, 0o700);
    // Write then rename: a reader never sees half a credential.
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temp, value, { mode: 0o600 });
    await rename(temp, file);
  }

  async get(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(name: string): Promise<void> {
    await rm(this.path(name), { force: true });
  }
}

interface CacheEntry {
  value: string | undefined;
  expires: number;
}

/**
 * Reads are cached per container for a bounded time (`GATEWAY_SECRET_CACHE_TTL_MS`, 60 s): a rotation
 * reaches every warm container within that bound, and at once in the container that made it.
 */
export class CachedSecretStore implements SecretStore {
  private readonly cache = containerMap<string, CacheEntry>();

  constructor(private readonly inner: SecretStore) {}

  private ttl(): number {
    return settings().secretCacheTtlMs;
  }

  async put(name: string, value: string): Promise<void> {
    this.cache.delete(name);
    await this.inner.put(name, value);
    this.cache.delete(name);
  }

  async get(name: string): Promise<string | undefined> {
    const now = Date.now();
    const hit = this.cache.get(name);
    if (hit && hit.expires > now) return hit.value;
    const value = await this.inner.get(name);
    if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(name, { value, expires: now + this.ttl() });
    return value;
  }

  async delete(name: string): Promise<void> {
    this.cache.delete(name);
    await this.inner.delete(name);
    this.cache.delete(name);
  }
}

let store: SecretStore | undefined;

/** Secrets Manager when the stack set `GATEWAY_SECRET_PREFIX`, files under the data dir otherwise. */
export function secretStore(): SecretStore {
  if (!store) {
    const { secretPrefix, dataDir } = settings();
    store = new CachedSecretStore(
      secretPrefix
        ? new SecretsManagerSecretStore(secretPrefix)
        : new FileSecretStore(join(dataDir, 'secrets')),
    );
  }
  return store;
}
