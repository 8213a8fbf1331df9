import { badRequest } from '../core/errors';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { TtlCache } from '../core/ttl-cache';
import { egressEnvironment } from '../gateway/address-guard';
import { ControlStore, type EgressSettingsRecord } from '../store/control-store';
import { asObject } from './api-keys';
import type { BodySpec } from './fields';
import { Problems } from './fields';

// Which custom hosts a request may name (`x-gateway-custom-host`, an inline config's `custom_host`, a
// config saved by a non-admin): the operator's choice, per organisation. Allowed by default in the local
// runtime, refused on AWS until an admin allows it. Every host still passes the address guard.

const MAX_HOSTS = 100;
// `host`, `host:port` or `*.domain`, where host is a DNS name, an IPv4 address or a bracketed IPv6 one.
const PATTERN = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/;

export interface EgressSettings {
  allow_custom_hosts: boolean;
  allowed_hosts: string[];
}

/** The runtime's default when an organisation has set nothing. */
export function defaultEgress(): EgressSettings {
  return { allow_custom_hosts: !egressEnvironment().onAws, allowed_hosts: [] };
}

export function presentEgressSettings(organisationId: string, settings: EgressSettings, updatedAt?: string) {
  return {
    object: 'organisation.egress',
    organisation_id: organisationId,
    allow_custom_hosts: settings.allow_custom_hosts,
    allowed_hosts: settings.allowed_hosts,
    updated_at: updatedAt ?? null,
  };
}

function parseSettings(input: unknown, fields: BodySpec): EgressSettings {
  const body = asObject(input);
  const problems = new Problems(fields);
  problems.unknown(body);
  if (typeof body.allow_custom_hosts !== 'boolean')
    problems.add('allow_custom_hosts', 'allow_custom_hosts must be true or false');
  const hosts = body.allowed_hosts ?? [];
  if (!Array.isArray(hosts) || hosts.length > MAX_HOSTS) {
    problems.add('allowed_hosts', `allowed_hosts must be an array of at most ${MAX_HOSTS} host patterns`);
  } else {
    hosts.forEach((h, i) => {
      if (typeof h !== 'string' || !PATTERN.test(h.toLowerCase()) || h.length > 253) {
        problems.add(`allowed_hosts[${i}]`, `allowed_hosts[${i}] must be "host", "host:port" or "*.domain"`);
      }
    });
  }
  problems.throwIfAny('invalid_egress_settings');
  return {
    allow_custom_hosts: body.allow_custom_hosts as boolean,
    allowed_hosts: (hosts as string[]).map((h) => h.toLowerCase()),
  };
}

/** Whether a URL's host matches one pattern: a port in the pattern must match, `*.` matches subdomains only. */
export function hostMatches(url: URL, pattern: string): boolean {
  const port = url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? '443' : '80');
  const cut = pattern.lastIndexOf(':');
  const hasPort = cut > pattern.lastIndexOf(']') && cut !== -1;
  const host = hasPort ? pattern.slice(0, cut) : pattern;
  if (hasPort && pattern.slice(cut + 1) !== port) return false;
  const name = url.hostname.toLowerCase();
  if (host.startsWith('*.')) return name.endsWith(host.slice(1)) && name.length > host.length - 1;
  return name === host;
}

/** The settings, admin reads and writes, and the data plane's cached check of a custom host. */
export class EgressSettingsService {
  // Cached briefly per container, like saved configs.
  private readonly cache = new TtlCache<EgressSettings>(settings().configCacheTtlMs);

  constructor(private readonly store = new ControlStore()) {}

  async get(caller: Principal) {
    const record = await this.store.getEgressSettings(caller.organisationId);
    return presentEgressSettings(caller.organisationId, record ?? defaultEgress(), record?.updated_at);
  }

  async put(caller: Principal, input: unknown) {
    // The request bodies' field lists are control-plane only: model functions never load them.
    const { EGRESS_SETTINGS } = await import('./bodies');
    const settings = parseSettings(input, EGRESS_SETTINGS);
    const record: EgressSettingsRecord = {
      organisation_id: caller.organisationId,
      ...settings,
      updated_at: new Date().toISOString(),
    };
    await this.store.putEgressSettings(record);
    this.cache.delete(caller.organisationId);
    return presentEgressSettings(caller.organisationId, settings, record.updated_at);
  }

  /** The settings for the data plane, cached briefly per container like saved configs. */
  async settingsOf(organisationId: string): Promise<EgressSettings> {
    return this.cache.getOrLoad(
      organisationId,
      async () => (await this.store.getEgressSettings(organisationId)) ?? defaultEgress(),
    );
  }

  /** Throws a 400 naming `param` when the organisation does not let requests name this host (a URL). */
  async checkRequestHost(organisationId: string, hostUrl: string, param: string): Promise<void> {
    const settings = await this.settingsOf(organisationId);
    if (!settings.allow_custom_hosts) {
      throw badRequest(
        `${param}: this organisation does not allow requests to name a custom host; an admin can allow it with PUT /v1/organisation/egress.`,
        param,
        'host_not_allowed',
      );
    }
    if (settings.allowed_hosts.length === 0) return;
    // Parsed only here, where it is needed: most organisations list no hosts. Callers checked it parses.
    const url = new URL(hostUrl);
    if (!settings.allowed_hosts.some((p) => hostMatches(url, p))) {
      throw badRequest(
        `${param}: the host ${url.host} is not in this organisation's allowed_hosts.`,
        param,
        'host_not_allowed',
      );
    }
  }
}

/** One per container, shared by the control plane and the data plane so that a change is seen at once. */
export const egressSettings = new EgressSettingsService();
