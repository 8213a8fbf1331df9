import { createHash } from 'node:crypto';
import { badRequest, notAllowed } from '../core/errors';
import type { GatewayConfig } from '../core/gateway-config';
import type { CallerState, RequestState } from '../core/http';
import { parsedField } from '../core/parsed-json';
import type { ModelPrice } from '../core/prices';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { TtlCache } from '../core/ttl-cache';
import { guardrailResolver } from '../guardrails/resolve';
import { PROVIDER_NAMES } from '../providers';
import { type ApiKeyRecord, ControlStore, type WorkspaceRecord } from '../store/control-store';
import { type SecretStore, secretStore } from '../store/secret-store';
import type { BudgetPeriod, LimitHolder, Limits } from './budget';
import type { BudgetAlertWebhook } from './budget-alerts';
import { savedConfigs } from './saved-configs';

// Policies: rules a workspace and an API key set for every model request, which callers cannot skip.
// They apply in the order workspace, API key, request config; each can only add checks and limits.

export interface LimitFields {
  budget_limit?: number | null;
  budget_period?: BudgetPeriod;
  budget_alert_threshold?: number | null;
  rate_limit?: { requests_per_minute?: number; tokens_per_minute?: number } | null;
}

export interface Policy extends LimitFields {
  input_guardrails?: unknown[];
  output_guardrails?: unknown[];
  /** Model names; a trailing `*` matches any model that starts with what precedes it. */
  allowed_models?: string[];
  allowed_providers?: string[];
  allow_custom_host?: boolean;
  /** Id of a saved config, used when the request names none; its `override_params` win over the request's. */
  config?: string;
  /** The same budget and rate fields, applied to each end user (`user`) on its own. Workspace only. */
  user_limits?: LimitFields | null;
  /**
   * Where budget alerts are posted, signed with a secret kept in the secret store (set as `secret`, stored
   * as `secret_ref`, never in the control table). Workspace only.
   */
  budget_alert_webhook?: BudgetAlertWebhook | null;
}

/** Where a workspace's webhook secret lives in the secret store; `_webhooks` is never a key slug. */
export const webhookSecretName = (organisationId: string, workspace: string) =>
  `${organisationId}/${workspace}/_webhooks/budget-alert`;

export const FIELDS = new Set([
  'input_guardrails',
  'output_guardrails',
  'allowed_models',
  'allowed_providers',
  'allow_custom_host',
  'config',
  'budget_limit',
  'budget_period',
  'budget_alert_threshold',
  'rate_limit',
  'user_limits',
  'budget_alert_webhook',
]);
const LIMIT_FIELDS = new Set(['budget_limit', 'budget_period', 'budget_alert_threshold', 'rate_limit']);
const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);
const positiveInt = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;

function parseLimits(body: Record<string, unknown>, at: string, problems: string[]): LimitFields {
  const out: LimitFields = {};
  const b = body.budget_limit;
  if (b !== undefined) {
    if (b !== null && (typeof b !== 'number' || !Number.isFinite(b) || b <= 0)) {
      problems.push(`${at}budget_limit must be a number of USD above 0, or null`);
    } else out.budget_limit = b;
  }
  const p = body.budget_period;
  if (p !== undefined) {
    if (p !== 'none' && p !== 'daily' && p !== 'monthly') {
      problems.push(`${at}budget_period must be "none", "daily" or "monthly"`);
    } else out.budget_period = p;
  }
  const t = body.budget_alert_threshold;
  if (t !== undefined) {
    if (t !== null && (typeof t !== 'number' || !(t > 0 && t <= 1))) {
      problems.push(`${at}budget_alert_threshold must be a fraction of budget_limit above 0 and at most 1`);
    } else if (t !== null && (out.budget_limit ?? null) === null) {
      problems.push(`${at}budget_alert_threshold needs a budget_limit`);
    } else out.budget_alert_threshold = t;
  }
  const r = body.rate_limit;
  if (r !== undefined) {
    const fields = isObject(r) ? Object.keys(r) : [];
    const ok =
      r === null ||
      (isObject(r) &&
        fields.length > 0 &&
        fields.every((k) => k === 'requests_per_minute' || k === 'tokens_per_minute') &&
        fields.every((k) => positiveInt(r[k])));
    if (!ok) {
      problems.push(
        `${at}rate_limit must be {"requests_per_minute", "tokens_per_minute"}: whole numbers of 1 or more, or null`,
      );
    } else out.rate_limit = r as LimitFields['rate_limit'];
  }
  return out;
}

const stringList = (v: unknown, max: number) =>
  Array.isArray(v) &&
  v.length <= max &&
  v.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 200);

/**
 * Validates a policy (`null` clears it). Saved guardrail and config ids must exist in the workspace,
 * and inline guardrails must compile: a policy that cannot run is refused when it is set.
 */
export async function parsePolicy(
  value: unknown,
  holder: 'workspace' | 'api_key',
  organisationId: string,
  workspace: string,
  /** The policy stored until now: its webhook URL is the only one that may keep the stored secret. */
  stored?: Policy,
  secrets: SecretStore = secretStore(),
): Promise<Policy | null> {
  const secretName = webhookSecretName(organisationId, workspace);
  if (value === null) {
    if (holder === 'workspace') await secrets.delete(secretName);
    return null;
  }
  if (!isObject(value)) throw badRequest('policy must be an object, or null.', 'policy', 'invalid_policy');
  const problems: string[] = [];
  const unknown = Object.keys(value).filter((key) => !FIELDS.has(key));
  for (const key of unknown) problems.push(`policy.${key} is not a known field`);
  if (unknown.length > 0) problems.push(`a policy takes: ${[...FIELDS].join(', ')}`);
  const policy: Policy = parseLimits(value, 'policy.', problems);
  for (const list of ['input_guardrails', 'output_guardrails'] as const) {
    if (value[list] === undefined) continue;
    if (!Array.isArray(value[list])) problems.push(`policy.${list} must be an array`);
    else policy[list] = value[list] as unknown[];
  }
  if (value.allowed_models !== undefined) {
    if (!stringList(value.allowed_models, 500)) problems.push('policy.allowed_models must be model names');
    else policy.allowed_models = value.allowed_models as string[];
  }
  if (value.allowed_providers !== undefined) {
    const list = value.allowed_providers;
    if (!stringList(list, 100) || !(list as string[]).every((p) => PROVIDER_NAMES.includes(p))) {
      problems.push(`policy.allowed_providers must be provider names: ${PROVIDER_NAMES.join(', ')}`);
    } else policy.allowed_providers = list as string[];
  }
  if (value.allow_custom_host !== undefined) {
    if (typeof value.allow_custom_host !== 'boolean')
      problems.push('policy.allow_custom_host must be a boolean');
    else policy.allow_custom_host = value.allow_custom_host;
  }
  if (value.config !== undefined) {
    const id = value.config;
    if (
      typeof id !== 'string' ||
      !(await savedConfigs.get(organisationId, workspace, id).catch(() => undefined))
    ) {
      problems.push('policy.config must be the id of a config saved in the workspace');
    } else policy.config = id;
  }
  if (value.user_limits !== undefined) {
    const u = value.user_limits;
    if (holder !== 'workspace') problems.push('policy.user_limits is set on the workspace policy');
    else if (u === null) policy.user_limits = null;
    else if (!isObject(u) || Object.keys(u).some((k) => !LIMIT_FIELDS.has(k))) {
      problems.push(`policy.user_limits must hold only ${[...LIMIT_FIELDS].join(', ')}`);
    } else policy.user_limits = parseLimits(u, 'policy.user_limits.', problems);
  }
  // A webhook given without its secret keeps the one already stored (a policy read back and sent again),
  // but only for the same URL: a stored secret never signs for a new address.
  let webhookSecret: string | undefined;
  if (value.budget_alert_webhook !== undefined) {
    const w = value.budget_alert_webhook;
    if (holder !== 'workspace') problems.push('policy.budget_alert_webhook is set on the workspace policy');
    else if (w === null) policy.budget_alert_webhook = null;
    else if (
      !isObject(w) ||
      typeof w.url !== 'string' ||
      !/^https?:\/\//.test(w.url) ||
      (w.secret !== undefined && (typeof w.secret !== 'string' || w.secret.length < 16)) ||
      (w.secret === undefined &&
        (stored?.budget_alert_webhook?.url !== w.url || (await secrets.get(secretName)) === undefined))
    ) {
      problems.push(
        'policy.budget_alert_webhook must be {"url": an http(s) URL, "secret": 16 or more characters}',
      );
    } else {
      webhookSecret = typeof w.secret === 'string' ? w.secret : undefined;
      policy.budget_alert_webhook = { url: w.url, secret_ref: secretName };
    }
  }
  if (problems.length > 0) {
    // `param` names the first wrong field (`policy.budget_limit`), so that a form can show it there.
    const param = problems[0]?.split(' ')[0] ?? 'policy';
    throw badRequest(`Invalid policy: ${problems.join('; ')}.`, param, 'invalid_policy');
  }
  // Compiling refuses unknown guardrail ids and checks that cannot run.
  await guardrailResolver.resolve(policy, organisationId, workspace);
  if (webhookSecret !== undefined) await secrets.put(secretName, webhookSecret);
  else if (holder === 'workspace' && !policy.budget_alert_webhook) await secrets.delete(secretName);
  return policy;
}

/** A stored policy (JSON text, validated when it was set). */
export const readPolicy = (json: string | undefined): Policy | undefined =>
  json ? (JSON.parse(json) as Policy) : undefined;

/** The public view of a policy: the webhook's secret is never shown. */
export function presentPolicy(policy: Policy | null | undefined) {
  if (!policy) return null;
  const { budget_alert_webhook: webhook, ...rest } = policy;
  return webhook ? { ...rest, budget_alert_webhook: { url: webhook.url, secret_set: true } } : rest;
}

/** Whether a model is in a list of names and `prefix*` patterns. */
export const modelAllowed = (list: string[], model: string) =>
  list.some((entry) => (entry.endsWith('*') ? model.startsWith(entry.slice(0, -1)) : entry === model));

/** What in an API key's policy would loosen its workspace's; empty when it only adds. */
export function loosenings(workspace: Policy | null | undefined, key: Policy | null): string[] {
  if (!workspace || !key) return [];
  const found: string[] = [];
  if (workspace.allowed_models && key.allowed_models) {
    const ws = workspace.allowed_models;
    const wider = key.allowed_models.filter((m) =>
      m.endsWith('*')
        ? !ws.some((w) => w.endsWith('*') && m.startsWith(w.slice(0, -1)))
        : !modelAllowed(ws, m),
    );
    if (wider.length > 0) found.push(`allowed_models outside the workspace's: ${wider.join(', ')}`);
  }
  if (workspace.allowed_providers && key.allowed_providers) {
    const wider = key.allowed_providers.filter((p) => !workspace.allowed_providers?.includes(p));
    if (wider.length > 0) found.push(`allowed_providers outside the workspace's: ${wider.join(', ')}`);
  }
  if (workspace.allow_custom_host === false && key.allow_custom_host === true) {
    found.push('allow_custom_host is false on the workspace');
  }
  return found;
}

/** Limits of a policy (or of its `user_limits`), in the shape the counters enforce. */
export function limitsOf(fields: LimitFields | null | undefined): Limits | undefined {
  if (!fields) return undefined;
  const limits: Limits = {
    budget_limit: fields.budget_limit ?? null,
    budget_period: fields.budget_period ?? 'none',
    budget_alert_threshold: fields.budget_alert_threshold ?? null,
    requests_per_minute: fields.rate_limit?.requests_per_minute ?? null,
    tokens_per_minute: fields.rate_limit?.tokens_per_minute ?? null,
  };
  const any =
    limits.budget_limit !== null || limits.requests_per_minute !== null || limits.tokens_per_minute !== null;
  return any ? limits : undefined;
}

export const workspaceHolderKey = (organisationId: string, workspace: string) =>
  `WS#${organisationId}#${workspace}`;
export const apiKeyHolderKey = (keyId: string) => `AK#${keyId}`;
/** Long user ids are hashed so that a key stays small and two users never share one. */
export const userHolderKey = (organisationId: string, workspace: string, user: string) =>
  `US#${organisationId}#${workspace}#${user.length <= 128 ? user : createHash('sha256').update(user).digest('hex')}`;

/** What a request must follow, from its workspace's and its API key's policies. */
export interface RequestPolicy {
  workspace: WorkspaceRecord | undefined;
  /** The policies that apply, workspace first. */
  layers: Array<{ kind: 'workspace' | 'api_key'; policy: Policy }>;
  holders: LimitHolder[];
  userLimits: Limits | undefined;
  prices: Record<string, ModelPrice> | undefined;
  webhook: BudgetAlertWebhook | undefined;
  /** `override_params` of the policies' configs, the workspace's winning. */
  pinnedParams: Record<string, unknown>;
  /** The config to use when the request names none: the API key's, else the workspace's. */
  defaultConfig: GatewayConfig | undefined;
  guardrails: { input_guardrails: unknown[]; output_guardrails: unknown[] };
}

const EMPTY_GUARDRAILS = { input_guardrails: [], output_guardrails: [] };

/**
 * Workspace and API key records for the data plane, cached per container for a bounded time
 * (`GATEWAY_POLICY_CACHE_TTL_MS`, 10 s) and dropped at once in the container that changes them.
 */
export class PolicyResolver {
  private readonly cache = new TtlCache<WorkspaceRecord | ApiKeyRecord | undefined>(
    settings().policyCacheTtlMs,
  );
  private readonly perRequest = new WeakMap<RequestState, Promise<RequestPolicy>>();

  constructor(private readonly store = new ControlStore()) {}

  invalidateWorkspace(organisationId: string, slug: string): void {
    this.cache.delete(`ws/${organisationId}/${slug}`);
  }

  invalidateKey(organisationId: string, id: string): void {
    this.cache.delete(`key/${organisationId}/${id}`);
  }

  private async cached<T extends WorkspaceRecord | ApiKeyRecord>(
    key: string,
    load: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    return (await this.cache.getOrLoad(key, load)) as T | undefined;
  }

  /** The request's policies, read once per request. */
  forRequest(state: CallerState): Promise<RequestPolicy> {
    let found = this.perRequest.get(state);
    if (!found) {
      found = this.load(state.principal);
      this.perRequest.set(state, found);
    }
    return found;
  }

  /** The policies of a caller outside an HTTP request (a realtime `$connect`). */
  forPrincipal(principal: Principal): Promise<RequestPolicy> {
    return this.load(principal);
  }

  private async load(principal: Principal): Promise<RequestPolicy> {
    const { organisationId, workspace: slug } = principal;
    const [workspace, key] = await Promise.all([
      this.cached(`ws/${organisationId}/${slug}`, () => this.store.getWorkspace(organisationId, slug)),
      // JWT callers have no key: the workspace policy alone applies to them.
      principal.type === 'api_key' && principal.keyId
        ? this.cached(`key/${organisationId}/${principal.keyId}`, () =>
            this.store.getApiKey(organisationId, principal.keyId as string),
          )
        : Promise.resolve(undefined),
    ]);
    const wsPolicy = parsedField<Policy>(workspace, 'policy_json');
    const keyPolicy = parsedField<Policy>(key, 'policy_json');
    const layers: RequestPolicy['layers'] = [];
    if (wsPolicy) layers.push({ kind: 'workspace', policy: wsPolicy });
    if (keyPolicy) layers.push({ kind: 'api_key', policy: keyPolicy });
    const webhook = wsPolicy?.budget_alert_webhook ?? undefined;
    const holders: LimitHolder[] = [];
    const base = { organisationId, workspace: slug, webhook };
    const wsLimits = limitsOf(wsPolicy);
    if (wsLimits) {
      holders.push({
        kind: 'workspace',
        name: slug,
        pk: workspaceHolderKey(organisationId, slug),
        limits: wsLimits,
        ...base,
      });
    }
    const keyLimits = limitsOf(keyPolicy);
    if (key && keyLimits) {
      holders.push({
        kind: 'api_key',
        name: key.id,
        pk: apiKeyHolderKey(key.id),
        limits: keyLimits,
        ...base,
      });
    }
    const configs = await Promise.all(
      layers.map(async (l) =>
        l.policy.config ? savedConfigs.get(organisationId, slug, l.policy.config) : undefined,
      ),
    );
    const pinnedParams: Record<string, unknown> = {};
    // Reversed so that the workspace's parameters are written last and win.
    for (const config of [...configs].reverse()) Object.assign(pinnedParams, config?.override_params);
    const guardrails = layers.length
      ? {
          input_guardrails: layers.flatMap((l) => l.policy.input_guardrails ?? []),
          output_guardrails: layers.flatMap((l) => l.policy.output_guardrails ?? []),
        }
      : EMPTY_GUARDRAILS;
    return {
      workspace,
      layers,
      holders,
      userLimits: limitsOf(wsPolicy?.user_limits),
      webhook,
      prices: parsedField<Record<string, ModelPrice>>(workspace, 'prices_json'),
      pinnedParams,
      defaultConfig: [...configs].reverse().find((c) => c !== undefined),
      guardrails,
    };
  }
}

/** One per container, shared with the control plane so that its changes are seen here at once. */
export const policies = new PolicyResolver();

/** The holder of one end user's limits, when the workspace sets `user_limits` and the request names a user. */
export function userHolder(
  policy: RequestPolicy,
  principal: Principal,
  user: string | null,
): LimitHolder | undefined {
  if (!policy.userLimits || !user) return undefined;
  return {
    kind: 'user',
    name: user,
    pk: userHolderKey(principal.organisationId, principal.workspace, user),
    limits: policy.userLimits,
    organisationId: principal.organisationId,
    workspace: principal.workspace,
    webhook: policy.webhook,
  };
}

/** Refuses a model outside any policy's `allowed_models`. */
export function enforceModel(policy: RequestPolicy, model: string | undefined): void {
  for (const layer of policy.layers) {
    const list = layer.policy.allowed_models;
    if (!list) continue;
    if (model === undefined || !modelAllowed(list, model)) {
      throw notAllowed(
        'model_not_allowed',
        `Model "${String(model ?? '').slice(0, 100)}" is not allowed by the ${layer.kind.replace('_', ' ')} policy.`,
        'model',
      );
    }
  }
}

/** Refuses a provider outside any policy's `allowed_providers`, and a custom host a policy forbids. */
export function enforceTarget(policy: RequestPolicy, provider: string, customHost: boolean): void {
  for (const layer of policy.layers) {
    const list = layer.policy.allowed_providers;
    if (list && !list.includes(provider)) {
      throw notAllowed(
        'provider_not_allowed',
        `Provider "${provider}" is not allowed by the ${layer.kind.replace('_', ' ')} policy.`,
        'provider',
      );
    }
    if (customHost && layer.policy.allow_custom_host === false) {
      throw notAllowed(
        'custom_host_not_allowed',
        `A custom host is not allowed by the ${layer.kind.replace('_', ' ')} policy.`,
        'x-gateway-custom-host',
      );
    }
  }
}
