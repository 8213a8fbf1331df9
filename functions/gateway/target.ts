import { egressSettings } from '../control/egress-settings';
import { badRequest } from '../core/errors';
import type { GatewayConfig } from '../core/gateway-config';
import { logger } from '../core/logger';
import type { Principal } from '../core/principal';
import { parseClientJson } from '../core/request-body';
import { prepareChecks } from '../guardrails/engine';
import { findProvider, PROVIDER_NAMES } from '../providers';
import type { ProviderAdapter, ProviderTarget } from '../providers/types';
import { egressEnvironment } from './address-guard';
import { parseConfig } from './config';
import type { PlanNode, PlanTarget, RouteOverrides, Sourced } from './plan';
import { isSavedByAdmin, savedConfigs } from './saved-configs';
import { type ResolvedVirtualKey, unknownVirtualKey, virtualKeys } from './virtual-key-resolver';

/** Where one request goes, with which credentials: everything the upstream call needs. */
export interface ResolvedTarget extends ProviderTarget {
  provider: ProviderAdapter;
  baseUrl: string;
  overrideParams: Record<string, unknown>;
  timeoutMs: number;
  virtualKey: ResolvedVirtualKey | null;
  /** For the router's attempt records. */
  providerName: string;
  virtualKeySlug: string | null;
}

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Reads `x-gateway-config`: inline JSON, or the id of a config saved in the caller's workspace. */
export async function readConfig(
  headers: Record<string, string>,
  principal: Principal,
): Promise<GatewayConfig | undefined> {
  const raw = headers['x-gateway-config'];
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (!text.startsWith('{')) {
    const saved = /^[\w-]{1,64}$/.test(text)
      ? await savedConfigs.get(principal.organisationId, principal.workspace, text)
      : undefined;
    if (!saved) {
      throw badRequest(
        `Unknown gateway config "${text.slice(0, 64)}".`,
        'x-gateway-config',
        'unknown_config',
      );
    }
    return saved;
  }
  const value = parseClientJson(text, 'x-gateway-config', 'x-gateway-config', 'invalid_config');
  await prepareChecks(value);
  return parseConfig(value);
}

/**
 * The route the request names itself: `x-gateway-provider` (a provider or `@slug`),
 * `x-gateway-virtual-key`, a `@slug/model` model, `x-gateway-custom-host`.
 */
export function routeOverrides(
  headers: Record<string, string>,
  modelSlug: string | undefined,
): RouteOverrides {
  const overrides: RouteOverrides = {};
  const provider = headers['x-gateway-provider']?.trim();
  if (modelSlug) overrides.virtualKey = { value: modelSlug, param: 'model' };
  else if (provider?.startsWith('@'))
    overrides.virtualKey = { value: provider.slice(1), param: 'x-gateway-provider' };
  else if (headers['x-gateway-virtual-key']?.trim()) {
    overrides.virtualKey = { value: headers['x-gateway-virtual-key'].trim(), param: 'x-gateway-virtual-key' };
  }
  if (provider && !provider.startsWith('@'))
    overrides.provider = { value: provider, param: 'x-gateway-provider' };
  const host = headers['x-gateway-custom-host'];
  if (host !== undefined) overrides.customHost = { value: host, param: 'x-gateway-custom-host' };
  return overrides;
}

/** `@slug/model` names a virtual key and the model at its provider; anything else is just a model. */
export function splitModel(model: string): { model: string; slug?: string } {
  if (!model.startsWith('@')) return { model };
  const cut = model.indexOf('/');
  if (cut < 2 || cut === model.length - 1) {
    throw badRequest('model must be "@<virtual key slug>/<model>" when it starts with "@".', 'model');
  }
  return { model: model.slice(cut + 1), slug: model.slice(1, cut) };
}

// Hosts seen lately, normalised: a request checks its route's hosts and then resolves them, and most
// requests name the same few. Only successes are kept; plain http is checked against AWS on every call.
const NORMALISED_MAX = 256;
const normalised = new Map<string, string>();

function normaliseHost(host: string, param: string): string {
  const known = normalised.get(host);
  if (known !== undefined && (known.startsWith('https:') || !egressEnvironment().onAws)) return known;
  const value = parseHost(host, param);
  if (host.length > 2048) return value;
  if (normalised.size >= NORMALISED_MAX) normalised.clear();
  normalised.set(host, value);
  return value;
}

function parseHost(host: string, param: string): string {
  let url: URL;
  try {
    url = new URL(host);
  } catch {
    throw badRequest(`${param} must be an http or https URL.`, param, 'invalid_host');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw badRequest(`${param} must be an http or https URL.`, param, 'invalid_host');
  }
  if (url.username || url.password)
    throw badRequest(`${param} must not carry credentials.`, param, 'invalid_host');
  // On AWS a request leaves the account's network: plain http would expose the credential on the way.
  if (url.protocol !== 'https:' && egressEnvironment().onAws) {
    throw badRequest(`${param} must be an https URL.`, param, 'host_not_allowed');
  }
  return url.toString().replace(/\/+$/, '');
}

const customHostNotAllowed = (host: Sourced, credential: string) => {
  // Logged for the operator (names only, never values) as well as in the request's log entry.
  logger.warn('custom host refused for a stored credential', { param: host.param, credential });
  return badRequest(
    `${host.param} cannot be used together with ${credential}: a stored credential goes only to its own host.`,
    host.param,
    'custom_host_not_allowed',
  );
};

function leaves(node: PlanNode): PlanTarget[] {
  return node.kind === 'target' ? [node] : node.targets.flatMap(leaves);
}

/** Whether the request's config is inline JSON (the caller's) rather than a saved one (the workspace's). */
const inlineConfig = (headers: Record<string, string>) =>
  headers['x-gateway-config']?.trim().startsWith('{') ?? false;

/** The stored credential a target names, described for an error: a virtual key or a saved config's api_key. */
function storedCredential(target: PlanTarget, headers: Record<string, string>): string | undefined {
  if (target.virtualKey)
    return `virtual key "${target.virtualKey.value.slice(0, 64)}" (${target.virtualKey.param})`;
  if (target.apiKey !== undefined && headers['x-gateway-config'] !== undefined && !inlineConfig(headers)) {
    return "the saved config's api_key";
  }
  return undefined;
}

/**
 * Checks a whole plan before anything is sent: no stored credential (virtual key, saved api_key) may go
 * to a custom host, whichever target or header names either; and a custom host the caller names must be
 * one the organisation's egress settings allow. Hosts of virtual keys and of configs an admin saved are
 * the operator's own and only pass the address guard.
 */
export async function checkRouteHosts(
  plan: PlanNode,
  headers: Record<string, string>,
  principal: Principal,
  config: GatewayConfig | undefined,
): Promise<void> {
  const targets = leaves(plan);
  const headerHost = headers['x-gateway-custom-host'];
  for (const target of targets) {
    const credential = storedCredential(target, headers);
    if (!credential) continue;
    if (target.customHost) throw customHostNotAllowed(target.customHost, credential);
    // A target naming its own key does not inherit the header's host, but the request still named both.
    if (headerHost !== undefined) {
      throw customHostNotAllowed({ value: headerHost, param: 'x-gateway-custom-host' }, credential);
    }
  }
  const trusted = config !== undefined && isSavedByAdmin(config);
  const checked = new Set<string>();
  for (const { customHost } of targets) {
    if (!customHost || checked.has(customHost.param)) continue;
    checked.add(customHost.param);
    if (customHost.param !== 'x-gateway-custom-host' && trusted) continue;
    const host = normaliseHost(customHost.value, customHost.param);
    await egressSettings.checkRequestHost(principal.organisationId, host, customHost.param);
  }
}

/** A virtual key's Azure resource or Bedrock region decides its host: a request may not change it. */
function keyAccountField(
  name: 'resource_name' | 'region',
  requested: string | undefined,
  own: string | null | undefined,
  slug: string,
): string | undefined {
  if (requested !== undefined && requested !== own) {
    throw customHostNotAllowed({ value: requested, param: `config.${name}` }, `virtual key "${slug}"`);
  }
  return own ?? undefined;
}

function providerNamed(name: string, param: string): ProviderAdapter {
  const provider = findProvider(name);
  if (!provider) {
    throw badRequest(
      `Unknown provider "${name.slice(0, 64)}". Known providers: ${PROVIDER_NAMES.join(', ')}.`,
      param,
      'unknown_provider',
    );
  }
  return provider;
}

/**
 * Resolves one plan target: provider, base URL, credential and upstream account ids, with the virtual
 * key's budget and rate limit enforced. Credential: virtual key > config `api_key` > `Authorization`
 * passed through (only when the gateway key came in `x-gateway-api-key`). A virtual key's host and
 * account fields are its own; other account ids: virtual key < config < request headers.
 */
export async function resolveTarget(
  target: PlanTarget,
  headers: Record<string, string>,
  principal: Principal,
): Promise<ResolvedTarget> {
  let vk: ResolvedVirtualKey | null = null;
  if (target.virtualKey) {
    const { value: slug, param } = target.virtualKey;
    if (!SLUG.test(slug)) throw unknownVirtualKey(slug, param);
    vk = await virtualKeys.resolve(principal.organisationId, principal.workspace, slug, param);
  }
  const provider = vk
    ? providerNamed(vk.record.provider, target.virtualKey?.param ?? 'virtual_key')
    : providerNamed(target.provider?.value ?? 'openai', target.provider?.param ?? 'x-gateway-provider');

  // A virtual key's credential goes only to its own host (checkRouteHosts refused any other already).
  if (vk && target.customHost)
    throw customHostNotAllowed(target.customHost, `virtual key "${vk.record.slug}"`);
  const host = vk
    ? vk.record.custom_host
      ? normaliseHost(vk.record.custom_host, 'custom_host')
      : undefined
    : target.customHost
      ? normaliseHost(target.customHost.value, target.customHost.param)
      : undefined;
  // Provider account fields: virtual key < config, field by field; those that pick the host stay the key's.
  const options = target.providerOptions;
  const account: ProviderTarget = {
    region: vk ? keyAccountField('region', options.region, vk.record.region, vk.record.slug) : options.region,
    resourceName: vk
      ? keyAccountField('resource_name', options.resourceName, vk.record.resource_name, vk.record.slug)
      : options.resourceName,
    deploymentId: options.deploymentId ?? vk?.record.deployment_id ?? undefined,
    apiVersion: options.apiVersion ?? vk?.record.api_version ?? undefined,
  };
  const baseUrl =
    host !== undefined
      ? (provider.hostBase?.(host) ?? host)
      : typeof provider.baseUrl === 'function'
        ? provider.baseUrl(account)
        : provider.baseUrl;
  if (baseUrl === undefined) {
    throw badRequest(
      `Provider "${provider.name}" needs ${provider.baseUrlHint ?? 'a custom host'}.`,
      'x-gateway-custom-host',
    );
  }

  let apiKey = vk?.credential ?? target.apiKey;
  if (!apiKey && headers['x-gateway-api-key'] !== undefined) {
    const m = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
    apiKey = m?.[1]?.trim();
  }
  return {
    provider,
    baseUrl,
    apiKey,
    organization:
      headers['x-gateway-vendor-organization'] ??
      // What the OpenAI SDKs send for their `organization` and `project` options; ours win.
      headers['openai-organization'] ??
      target.organization ??
      vk?.record.vendor_organization ??
      undefined,
    project:
      headers['x-gateway-vendor-project'] ??
      headers['openai-project'] ??
      target.project ??
      vk?.record.vendor_project ??
      undefined,
    ...account,
    overrideParams: target.overrideParams,
    timeoutMs: target.timeoutMs,
    virtualKey: vk,
    providerName: provider.name,
    virtualKeySlug: vk?.record.slug ?? null,
  };
}
