import type { GatewayConfig } from '../core/gateway-config';
import { settings } from '../core/settings';

// A config resolved into a tree: groups pick among their targets (fallback or loadbalance), leaves are
// upstream targets with every inherited field filled in. The router walks it; nothing here does I/O.

export const DEFAULT_RETRY_STATUSES = [429, 500, 502, 503, 504];

/** Where a value came from, so that an error can name the header or config field to fix. */
export interface Sourced {
  value: string;
  param: string;
}

/** Where a provider's account lives, for providers that need more than a base URL. */
export interface ProviderOptions {
  region?: string;
  resourceName?: string;
  deploymentId?: string;
  apiVersion?: string;
}

export interface PlanTarget {
  kind: 'target';
  /** Path of target indexes from the root config: `0` for a config without targets, `1`, `0.1`. */
  index: string;
  provider?: Sourced;
  virtualKey?: Sourced;
  apiKey?: string;
  customHost?: Sourced;
  organization?: string;
  project?: string;
  providerOptions: ProviderOptions;
  overrideParams: Record<string, unknown>;
  timeoutMs: number;
  retry: { attempts: number; onStatusCodes: number[] };
  weight: number;
}

export interface PlanGroup {
  kind: 'group';
  index: string;
  mode: 'fallback' | 'loadbalance';
  /** Statuses that move a fallback to its next target; undefined means 429 and every 5xx. */
  onStatusCodes?: number[];
  targets: PlanNode[];
  weight: number;
}

export type PlanNode = PlanTarget | PlanGroup;

/** What the request itself says about the route; it overrides the root config's route. */
export interface RouteOverrides {
  provider?: Sourced;
  virtualKey?: Sourced;
  customHost?: Sourced;
}

/** The fields a target inherits from its parent when it does not set them. */
interface Inherited {
  route: Pick<PlanTarget, 'provider' | 'virtualKey' | 'apiKey' | 'customHost'>;
  organization?: string;
  project?: string;
  providerOptions: ProviderOptions;
  overrideParams: Record<string, unknown>;
  timeoutMs: number;
  retry: { attempts: number; onStatusCodes: number[] };
}

const stripAt = (slug: string) => slug.replace(/^@/, '');

/**
 * The route of one config level. Provider, virtual key, api key and custom host are inherited together,
 * or not at all: a target naming its own provider or key must not pick up its parent's credential or host.
 */
function routeOf(config: GatewayConfig, at: string): Inherited['route'] | undefined {
  if (!config.provider && !config.virtual_key && !config.api_key && !config.custom_host) return undefined;
  const route: Inherited['route'] = {};
  if (config.provider?.startsWith('@')) {
    route.virtualKey = { value: stripAt(config.provider), param: `${at}.provider` };
  } else if (config.provider) {
    route.provider = { value: config.provider, param: `${at}.provider` };
  }
  if (config.virtual_key)
    route.virtualKey = { value: stripAt(config.virtual_key), param: `${at}.virtual_key` };
  if (config.api_key) route.apiKey = config.api_key;
  if (config.custom_host) route.customHost = { value: config.custom_host, param: `${at}.custom_host` };
  return route;
}

function inherit(parent: Inherited, config: GatewayConfig, at: string): Inherited {
  return {
    route: routeOf(config, at) ?? parent.route,
    organization: config.vendor_organization ?? parent.organization,
    project: config.vendor_project ?? parent.project,
    // Like account ids, these are inherited one by one: a target may set only its deployment.
    providerOptions: {
      region: config.region ?? parent.providerOptions.region,
      resourceName: config.resource_name ?? parent.providerOptions.resourceName,
      deploymentId: config.deployment_id ?? parent.providerOptions.deploymentId,
      apiVersion: config.api_version ?? parent.providerOptions.apiVersion,
    },
    // Parameters merge: a target adds to or replaces its parent's, one parameter at a time.
    overrideParams: { ...parent.overrideParams, ...config.override_params },
    timeoutMs: config.request_timeout ?? parent.timeoutMs,
    retry: config.retry
      ? {
          attempts: config.retry.attempts,
          onStatusCodes: config.retry.on_status_codes ?? DEFAULT_RETRY_STATUSES,
        }
      : parent.retry,
  };
}

function node(config: GatewayConfig, inherited: Inherited, index: string, at: string): PlanNode {
  const own = inherit(inherited, config, at);
  const weight = config.weight ?? 1;
  if (config.targets && config.strategy && config.strategy.mode !== 'single') {
    return {
      kind: 'group',
      index,
      mode: config.strategy.mode,
      onStatusCodes: config.strategy.on_status_codes,
      weight,
      targets: config.targets.map((t, i) =>
        node(t, own, index === '' ? String(i) : `${index}.${i}`, `${at}.targets[${i}]`),
      ),
    };
  }
  return {
    kind: 'target',
    index: index === '' ? '0' : index,
    ...own.route,
    organization: own.organization,
    project: own.project,
    providerOptions: own.providerOptions,
    overrideParams: own.overrideParams,
    timeoutMs: own.timeoutMs,
    retry: own.retry,
    weight,
  };
}

/** Resolves a (validated) config and the request's own route into the plan the router walks. */
export function buildPlan(config: GatewayConfig | undefined, overrides: RouteOverrides = {}): PlanNode {
  const root: GatewayConfig = { ...config };
  // The request's headers (or `@slug/` model) name the route for this call: they replace the root's.
  if (overrides.virtualKey) delete root.virtual_key;
  if (overrides.virtualKey || overrides.provider) delete root.provider;
  const base: Inherited = {
    route: {},
    providerOptions: {},
    overrideParams: {},
    timeoutMs: settings().upstreamTimeoutMs,
    retry: { attempts: 0, onStatusCodes: DEFAULT_RETRY_STATUSES },
  };
  const rootInherited = inherit(base, root, 'config');
  if (overrides.virtualKey)
    rootInherited.route = { ...rootInherited.route, virtualKey: overrides.virtualKey };
  if (overrides.provider) rootInherited.route = { ...rootInherited.route, provider: overrides.provider };
  if (overrides.customHost)
    rootInherited.route = { ...rootInherited.route, customHost: overrides.customHost };
  // The root's own fields are now in `rootInherited`; its targets and strategy shape the tree.
  const shape: GatewayConfig = { targets: root.targets, strategy: root.strategy, weight: root.weight };
  return node(shape, rootInherited, '', 'config');
}
