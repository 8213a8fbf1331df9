import { badRequest, rateLimited, virtualKeyUnavailable } from '../core/errors';
import { settings } from '../core/settings';
import { containerMap } from '../core/ttl-cache';
import { ControlStore, type VirtualKeyRecord } from '../store/control-store';
import { CounterStore, type VirtualKeyState } from '../store/counter-store';
import { type SecretStore, secretStore } from '../store/secret-store';
import { periodOf } from './budget';

/** A virtual key ready for one request: its description, enforced state, period and credential. */
export interface ResolvedVirtualKey {
  record: VirtualKeyRecord;
  state: VirtualKeyState;
  period: string;
  credential: string;
}

export const unknownVirtualKey = (slug: string, param: string) =>
  badRequest(`Unknown virtual key "${slug.slice(0, 64)}" in this workspace.`, param, 'unknown_virtual_key');

interface CacheEntry {
  record: VirtualKeyRecord;
  state: VirtualKeyState;
  expires: number;
}

/**
 * Finds a virtual key by slug in the caller's workspace and lets a request through only when its rate
 * limit allows. The description and the enforced state (budget definition, rate limit) are cached briefly
 * per container and dropped at once in the container that changes them; the budget itself is enforced by
 * the reservation on the key's spend item (reserve.ts), so no read of the spend is on the request path.
 */
export class VirtualKeyResolver {
  private readonly cache = containerMap<string, CacheEntry>();

  constructor(
    private readonly control = new ControlStore(),
    private readonly counters = new CounterStore(),
    private readonly secrets: SecretStore = secretStore(),
  ) {}

  private ttl(): number {
    return settings().virtualKeyCacheTtlMs;
  }

  /** Drops a cached description; the control plane calls it when it changes or deletes a key. */
  invalidate(organisationId: string, workspace: string, slug: string): void {
    this.cache.delete(`${organisationId}/${workspace}/${slug}`);
  }

  private async describe(
    organisationId: string,
    workspace: string,
    slug: string,
  ): Promise<CacheEntry | undefined> {
    const id = `${organisationId}/${workspace}/${slug}`;
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.expires > now) return hit;
    const record = await this.control.getVirtualKey(organisationId, workspace, slug);
    // Misses are not cached: a key created a moment ago must work in every container at once.
    if (!record) return undefined;
    // Deleted (the state goes first), or a record of an older key with this slug: not cached either.
    const { state } = await this.counters.readBudget(record.id, []);
    if (!state) return undefined;
    if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
    const entry = { record, state, expires: now + this.ttl() };
    this.cache.set(id, entry);
    return entry;
  }

  async resolve(
    organisationId: string,
    workspace: string,
    slug: string,
    param: string,
  ): Promise<ResolvedVirtualKey> {
    const described = await this.describe(organisationId, workspace, slug);
    if (!described) throw unknownVirtualKey(slug, param);
    const { record, state } = described;
    const now = new Date();
    const [credential] = await Promise.all([
      this.secrets.get(record.secret_name),
      state.requests_per_minute !== null ? this.takeRate(record, state.requests_per_minute, now) : undefined,
    ]);
    if (credential === undefined) {
      throw virtualKeyUnavailable(slug);
    }
    return { record, state, period: periodOf(state, now), credential };
  }

  private async takeRate(record: VirtualKeyRecord, limit: number, now: Date): Promise<void> {
    const seconds = Math.floor(now.getTime() / 1000);
    const windowStart = seconds - (seconds % 60);
    if (await this.counters.takeRate(record.id, windowStart, limit)) return;
    // Seconds until the next window opens, never 0: a client retrying at once would be refused again.
    const retryAfter = Math.max(1, Math.ceil(((windowStart + 60) * 1000 - now.getTime()) / 1000));
    throw rateLimited(
      `Virtual key "${record.slug}" allows ${limit} requests per minute; try again in ${retryAfter} s.`,
      null,
      { 'retry-after': String(retryAfter) },
    );
  }
}

/** One per container, shared with the control plane so that its changes are seen here at once. */
export const virtualKeys = new VirtualKeyResolver();
