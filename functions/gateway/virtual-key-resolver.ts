import { badRequest, budgetExceeded, rateLimited, virtualKeyUnavailable } from '../core/errors';
import { ControlStore, type VirtualKeyRecord } from '../store/control-store';
import { CounterStore, type VirtualKeyState } from '../store/counter-store';
import { type SecretStore, secretStore } from '../store/secret-store';
import { budgetStatus, candidatePeriods } from './budget';

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
  expires: number;
}

/**
 * Finds a virtual key by slug in the caller's workspace and lets a request through only when its budget
 * and rate limit allow. The description (provider, host, account ids) is cached briefly per container;
 * the enforced state and the spend are read strongly every time, in the same round trip as the cached
 * credential, so an exhausted budget, a raised limit or a deletion take effect at once.
 */
export class VirtualKeyResolver {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly control = new ControlStore(),
    private readonly counters = new CounterStore(),
    private readonly secrets: SecretStore = secretStore(),
  ) {}

  private ttl(): number {
    return Number(process.env.GATEWAY_VIRTUAL_KEY_CACHE_TTL_MS ?? 10_000);
  }

  /** Drops a cached description; the control plane calls it when it changes or deletes a key. */
  invalidate(organisationId: string, workspace: string, slug: string): void {
    this.cache.delete(`${organisationId}/${workspace}/${slug}`);
  }

  private async describe(
    organisationId: string,
    workspace: string,
    slug: string,
  ): Promise<VirtualKeyRecord | undefined> {
    const id = `${organisationId}/${workspace}/${slug}`;
    const now = Date.now();
    const hit = this.cache.get(id);
    if (hit && hit.expires > now) return hit.record;
    const record = await this.control.getVirtualKey(organisationId, workspace, slug);
    // Misses are not cached: a key created a moment ago must work in every container at once.
    if (!record) return undefined;
    if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(id, { record, expires: now + this.ttl() });
    return record;
  }

  async resolve(
    organisationId: string,
    workspace: string,
    slug: string,
    param: string,
  ): Promise<ResolvedVirtualKey> {
    const record = await this.describe(organisationId, workspace, slug);
    if (!record) throw unknownVirtualKey(slug, param);
    const now = new Date();
    const [budget, credential] = await Promise.all([
      this.counters.readBudget(record.id, candidatePeriods(now)),
      this.secrets.get(record.secret_name),
    ]);
    const state = budget.state;
    if (!state) {
      // Deleted (the state goes first), or the cached description is of an older key with this slug.
      this.invalidate(organisationId, workspace, slug);
      throw unknownVirtualKey(slug, param);
    }
    const status = budgetStatus(state, budget.spent, now);
    if (status.limit !== null && status.spent >= status.limit)
      throw budgetExceeded('virtual_key', slug, status.limit);
    if (state.requests_per_minute !== null) await this.takeRate(record, state.requests_per_minute, now);
    if (credential === undefined) {
      throw virtualKeyUnavailable(slug);
    }
    return { record, state, period: status.period, credential };
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
