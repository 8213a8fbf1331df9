import { findProvider, PROVIDER_NAMES } from '../providers';
import type { ProviderAdapter, ProviderTarget } from '../providers/types';
import { type GatewayConfig, parseConfig } from './config';
import { badRequest } from './errors';
import { DEFAULT_TIMEOUT_MS } from './upstream';

/** Where one request goes, with which credentials: everything the upstream call needs. */
export interface ResolvedTarget extends ProviderTarget {
  provider: ProviderAdapter;
  baseUrl: string;
  overrideParams: Record<string, unknown>;
  timeoutMs: number;
}

/** Reads `x-gateway-config`: inline JSON, or the id of a saved config. */
export function readConfig(headers: Record<string, string>): GatewayConfig | undefined {
  const raw = headers['x-gateway-config'];
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (!text.startsWith('{')) {
    throw badRequest(`Unknown gateway config "${text.slice(0, 64)}".`, 'x-gateway-config', 'unknown_config');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('x-gateway-config is not valid JSON.', 'x-gateway-config', 'invalid_config');
  }
  return parseConfig(value);
}

function normaliseHost(host: string, param: string): string {
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
  return url.toString().replace(/\/+$/, '');
}

/**
 * Resolves provider, base URL, credential and upstream account ids.
 * Credential precedence: config `api_key` > `Authorization` passed through (only when the gateway key
 * came in `x-gateway-api-key`). Organisation/project: config < request headers.
 */
export function resolveTarget(
  headers: Record<string, string>,
  config: GatewayConfig | undefined,
): ResolvedTarget {
  if (config?.targets || (config?.strategy && config.strategy.mode !== 'single')) {
    throw badRequest(
      'Configs with targets or a fallback/loadbalance strategy are not available in this version.',
      'x-gateway-config',
      'unsupported_config',
    );
  }
  const providerName = headers['x-gateway-provider']?.trim() || config?.provider || 'openai';
  if (providerName.startsWith('@') || config?.virtual_key || headers['x-gateway-virtual-key']) {
    const slug = providerName.startsWith('@')
      ? providerName.slice(1)
      : (config?.virtual_key ?? headers['x-gateway-virtual-key']);
    throw badRequest(`Unknown virtual key "${slug}".`, 'x-gateway-provider', 'unknown_virtual_key');
  }
  const provider = findProvider(providerName);
  if (!provider) {
    throw badRequest(
      `Unknown provider "${providerName.slice(0, 64)}". Known providers: ${PROVIDER_NAMES.join(', ')}.`,
      'x-gateway-provider',
      'unknown_provider',
    );
  }
  const customHost = headers['x-gateway-custom-host'] ?? config?.custom_host;
  const baseUrl = customHost
    ? normaliseHost(customHost, headers['x-gateway-custom-host'] ? 'x-gateway-custom-host' : 'custom_host')
    : provider.baseUrl;
  if (!baseUrl) throw badRequest(`Provider "${provider.name}" needs a custom host.`, 'x-gateway-custom-host');

  let apiKey = config?.api_key;
  if (!apiKey && headers['x-gateway-api-key'] !== undefined) {
    const m = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
    apiKey = m?.[1]?.trim();
  }
  return {
    provider,
    baseUrl,
    apiKey,
    organization: headers['x-gateway-vendor-organization'] ?? config?.vendor_organization,
    project: headers['x-gateway-vendor-project'] ?? config?.vendor_project,
    overrideParams: config?.override_params ?? {},
    timeoutMs: config?.request_timeout ?? DEFAULT_TIMEOUT_MS,
  };
}
