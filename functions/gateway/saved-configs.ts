import type { GatewayConfig } from '../core/gateway-config';
import { settings } from '../core/settings';
import { TtlCache } from '../core/ttl-cache';
import { prepareChecks } from '../guardrails/engine';
import { ControlStore } from '../store/control-store';
import { parseConfig } from './config';

// Configs an organisation admin saved: their custom hosts are the operator's own choice.
const savedByAdmin = new WeakSet<GatewayConfig>();

/** Whether a config came from the store and was saved by an organisation admin. */
export function isSavedByAdmin(config: GatewayConfig): boolean {
  return savedByAdmin.has(config);
}

/**
 * Saved configs for the data plane, cached per container for a bounded time
 * (`GATEWAY_CONFIG_CACHE_TTL_MS`, 10 s) and dropped at once in the container that changes them.
 */
export class SavedConfigs {
  private readonly cache = new TtlCache<GatewayConfig | undefined>(settings().configCacheTtlMs, 1_000);

  constructor(private readonly store = new ControlStore()) {}

  invalidate(organisationId: string, workspace: string, id: string): void {
    this.cache.delete(`${organisationId}/${workspace}/${id}`);
  }

  async get(organisationId: string, workspace: string, id: string): Promise<GatewayConfig | undefined> {
    // An unknown id is not cached: a config saved a moment later is found at once.
    return this.cache.getOrLoad(
      `${organisationId}/${workspace}/${id}`,
      async () => {
        const record = await this.store.getConfig(organisationId, workspace, id);
        // Validated when saved; parsed again so that a config saved by an older version is checked anew.
        const value: unknown = record ? JSON.parse(record.config_json) : undefined;
        await prepareChecks(value);
        const config = record ? parseConfig(value) : undefined;
        if (config && record?.created_by_admin) savedByAdmin.add(config);
        return config;
      },
      (config) => config !== undefined,
    );
  }
}

/** One per container, shared with the control plane so that its changes are seen here at once. */
export const savedConfigs = new SavedConfigs();
