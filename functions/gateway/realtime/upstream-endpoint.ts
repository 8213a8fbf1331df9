import { badRequest } from '../../core/errors';

/** What the relay needs to open the provider's realtime socket. Holds the credential: never stored. */
export interface RealtimeUpstream {
  url: string;
  headers: Record<string, string>;
}

/** The fields of a resolved target that decide the realtime endpoint (Azure ones once that provider exists). */
export interface RealtimeTargetFields {
  providerName: string;
  baseUrl: string;
  apiKey?: string;
  organization?: string;
  project?: string;
  deploymentId?: string;
  apiVersion?: string;
}

/** The Azure OpenAI API version that serves `/openai/realtime` with a deployment. */
export const AZURE_REALTIME_API_VERSION = '2024-10-01-preview';

// Providers whose realtime API the gateway knows how to reach; others speak no realtime protocol.
const REALTIME_PROVIDERS = new Set(['openai', 'azure-openai']);

/** http(s) base URLs name the same host for WebSockets as ws(s). */
export function toWebSocketUrl(base: string): URL {
  const url = new URL(base);
  if (url.protocol === 'https:') url.protocol = 'wss:';
  else if (url.protocol === 'http:') url.protocol = 'ws:';
  return url;
}

/**
 * OpenAI: `<base>/realtime?model=...` with `Authorization: Bearer` (any OpenAI-compatible custom host the
 * same way). Azure OpenAI: `/openai/realtime?api-version=...&deployment=...` with `api-key`. The client's
 * `OpenAI-Beta: realtime=v1` is passed on: it chooses the beta event shapes on models that have both.
 */
export function realtimeUpstream(
  target: RealtimeTargetFields,
  model: string,
  clientHeaders: Record<string, string>,
): RealtimeUpstream {
  if (!REALTIME_PROVIDERS.has(target.providerName)) {
    throw badRequest(
      `Provider "${target.providerName}" has no realtime API in the gateway; use openai or azure-openai.`,
      'x-gateway-provider',
      'realtime_not_supported',
    );
  }
  const headers: Record<string, string> = {};
  const beta = clientHeaders['openai-beta'];
  if (beta && /^realtime=v1$/i.test(beta.trim())) headers['openai-beta'] = 'realtime=v1';

  if (target.providerName === 'azure-openai') {
    const url = toWebSocketUrl(target.baseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, '').replace(/\/openai$/, '')}/openai/realtime`;
    url.search = '';
    url.searchParams.set('api-version', target.apiVersion ?? AZURE_REALTIME_API_VERSION);
    url.searchParams.set('deployment', target.deploymentId ?? model);
    if (target.apiKey) headers['api-key'] = target.apiKey;
    return { url: url.toString(), headers };
  }

  const url = toWebSocketUrl(target.baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/realtime`;
  url.search = '';
  url.searchParams.set('model', model);
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  if (target.organization) headers['openai-organization'] = target.organization;
  if (target.project) headers['openai-project'] = target.project;
  return { url: url.toString(), headers };
}
