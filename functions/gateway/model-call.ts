import {
  clientGone,
  type GatewayError,
  hasCode,
  invalidUpstreamReply,
  modelNotPriced,
  providerError,
  upstreamTimeout,
} from '../core/errors';
import type { GatewayConfig } from '../core/gateway-config';
import type { ModelCallState } from '../core/http';
import type { Usage, UsageLogDraft } from '../core/log-entry';
import type { ModelPrice } from '../core/prices';
import { credentialMasker } from '../core/secret-mask';
import { markStage } from '../core/stage-clock';
import { BudgetLedger, BudgetReservation, type LimitHolder, periodOf } from './budget';
import { buildPlan, type PlanNode, type PlanTarget, type RouteOverrides } from './plan';
import { enforceModel, enforceTarget, policies, type RequestPolicy, userHolder } from './policy';
import {
  costOf,
  maxCostOf,
  maxOutputTokens,
  type OperatorPrices,
  priceOf,
  pricingReady,
  tokenBound,
} from './pricing';
import { RateReservation } from './rate-limits';
import { type AttemptSuccess, Router } from './router';
import {
  checkRouteHosts,
  type ResolvedTarget,
  readConfig,
  resolveTarget,
  routeOverrides,
  splitModel,
} from './target';
import { ClientGoneError, readAll, sendUpstream, type UpstreamResponse } from './upstream';

// The part of every model operation that is not about its payload: the route (config, virtual keys,
// fallbacks, retries), budget settlement, the upstream exchange and token cost. Chat, the Responses API,
// prompt completions and the OpenAI passthrough operations all go through here.

export const MAX_REPLY_BYTES = 64 * 1024 * 1024;
// Upstream reply headers worth passing on to the client.
const PASSED_HEADERS = ['x-request-id', 'openai-processing-ms', 'openai-version', 'retry-after'];

const ledger = new BudgetLedger();

/** A successful attempt: the upstream reply has started (kept open) or arrived whole (read). */
export interface CallSuccess extends AttemptSuccess {
  status: number;
  upstream: UpstreamResponse;
  headers: Record<string, string>;
  sentAt: number;
  contentType: string;
  /** The whole reply, when it was read rather than kept open. */
  replyText?: string;
  reply?: unknown;
}

export interface RouteOptions {
  /** A route used only when the request names none itself (a stored prompt's provider or virtual key). */
  defaults?: RouteOverrides;
  /**
   * The most tokens the request can use: an upper bound of its input, and its output limit (undefined:
   * the model's maximum). Budgets reserve the cost of this before the call; tokens-per-minute limits
   * reserve its tokens. An operation with neither this nor `maxCost` (files, vector stores) is refused
   * once a budget is spent, and reserves nothing.
   */
  bound?: TokenBound;
  /**
   * The most the call can cost (USD) at a target's provider and model, for operations not priced by
   * chat tokens (embeddings, images, audio); null when the model has no price. Wins over `bound` for budgets.
   */
  maxCost?: (provider: string, model: string | undefined, operator: OperatorPrices) => number | null;
}

export interface TokenBound {
  inputTokens: number;
  maxOutputTokens: number | undefined;
}

/** An upper bound of the input tokens of a request body: the UTF-8 bytes of its JSON. */
export const inputBound = (body: unknown): number => tokenBound(JSON.stringify(body) ?? '');

/** A virtual key's budget as a holder of the request's hierarchy (its rate limit is enforced when resolved). */
export function virtualKeyHolder(target: ResolvedTarget): LimitHolder | undefined {
  const vk = target.virtualKey;
  if (!vk || vk.state.budget_limit === null) return undefined;
  return {
    kind: 'virtual_key',
    name: vk.record.slug,
    pk: `VK#${vk.record.id}`,
    limits: {
      budget_limit: vk.state.budget_limit,
      budget_period: vk.state.budget_period,
      budget_alert_threshold: vk.state.budget_alert_threshold,
      requests_per_minute: null,
      tokens_per_minute: null,
    },
    organisationId: vk.record.organisation_id,
    workspace: vk.record.workspace,
  };
}

const virtualKeyPrices = (target: ResolvedTarget): Record<string, ModelPrice> | undefined =>
  target.virtualKey?.record.prices_json
    ? (JSON.parse(target.virtualKey.record.prices_json) as Record<string, ModelPrice>)
    : undefined;

/** Whether the request itself names where it goes, so that a stored default must not apply. */
function namesOwnRoute(headers: Record<string, string>, slug: string | undefined): boolean {
  return (
    !!slug ||
    !!headers['x-gateway-provider']?.trim() ||
    !!headers['x-gateway-virtual-key']?.trim() ||
    !!headers['x-gateway-config']?.trim()
  );
}

/**
 * Routes one model call. `attempt` makes one upstream call for a resolved target (it is retried and
 * falls back as the config says); the model it gets has any `@slug/` prefix removed. The workspace's and
 * API key's policies apply first; every budget of the request's hierarchy (workspace, API key, end user,
 * virtual key) is reserved the request's maximum cost before the call and settled to the actual cost
 * after the last byte.
 */
export async function routeModelCall<S extends AttemptSuccess>(
  state: ModelCallState,
  rawModel: string | undefined,
  attempt: (target: ResolvedTarget, model: string | undefined) => Promise<S>,
  options: RouteOptions = {},
): Promise<{ target: ResolvedTarget; success: S }> {
  markStage('plan');
  const log = state.log;
  const principal = state.principal;
  // Prices from a pricing file or URL load once per container; this waits only on a cold start.
  const [policy] = await Promise.all([policies.forRequest(state), pricingReady]);
  const { plan, model } = await planFor(state, rawModel, options);
  if (model !== undefined) enforceModel(policy, model);
  const user = userHolder(policy, principal, log.user);
  const holders = user ? [...policy.holders, user] : policy.holders;
  const bound = options.bound;
  const estimatedTokens =
    bound && model !== undefined
      ? bound.inputTokens + (bound.maxOutputTokens ?? maxOutputTokens('openai', model))
      : 0;
  markStage('reserve');
  const rates = await RateReservation.take(holders, estimatedTokens);
  markStage('plan');
  let budget: BudgetReservation | undefined;

  const prepare = async (planned: PlanTarget) => {
    // A target tried before this one failed without a reply: its reservation is given back.
    await budget?.release();
    budget = undefined;
    // A key refused for its budget or rate limit is still named by the entry that logs the refusal.
    log.virtualKey = planned.virtualKey?.value ?? null;
    const target = await resolveTarget(planned, state.headers, principal);
    // The last target tried names the entry; the one that serves overwrites it below.
    log.provider = target.provider.name;
    log.virtualKey = target.virtualKeySlug;
    enforceTarget(policy, target.provider.name, !!planned.customHost);
    // The policies' config parameters win over the request's.
    target.overrideParams = { ...target.overrideParams, ...policy.pinnedParams };
    const sent = typeof target.overrideParams.model === 'string' ? target.overrideParams.model : model;
    if (sent !== model && sent !== undefined) enforceModel(policy, sent);
    log.operatorPrices = [virtualKeyPrices(target), policy.prices];
    markStage('reserve');
    budget = await reserve(state, policy, holders, target, sent, options);
    markStage('upstream I/O');
    return target;
  };

  const router = new Router(prepare, (target: ResolvedTarget) => attempt(target, model), state.clientSignal);
  let served: Awaited<ReturnType<typeof router.run>>;
  try {
    served = await router.run(plan);
  } catch (error) {
    // Nothing was served: every reservation is given back (the request still counts per minute).
    await Promise.all([budget?.release(), rates.settle(0)]);
    throw error;
  } finally {
    log.attempts = router.attempts;
    state.upstreamWaitMs += router.waitedMs;
    state.replyHeaders['x-gateway-target-index'] = router.lastIndex;
    state.replyHeaders['x-gateway-retry-count'] = String(router.lastRetries);
  }

  markStage('relay');
  const target = served.prepared;
  log.provider = target.provider.name;
  log.virtualKey = target.virtualKeySlug;
  const held = budget as BudgetReservation | undefined;
  const vk = target.virtualKey;
  // Settled in the usage log's after-send work: after the last byte, before the invocation ends.
  log.settlements.push(async (entry) => {
    const usd = entry.cost ?? 0;
    await Promise.all([
      held?.settle(usd),
      rates.settle(entry.usage?.total_tokens ?? 0),
      // A key without a budget is not reserved on, but its spend is still kept for its readers.
      vk && vk.state.budget_limit === null
        ? ledger.charge(vk.record, vk.state, periodOf(vk.state), entry.cost)
        : undefined,
    ]);
  });
  return { target, success: served.success };
}

/** Reserves the request's maximum cost on every budget that applies to this target; none when no budget. */
async function reserve(
  state: ModelCallState,
  policy: RequestPolicy,
  holders: LimitHolder[],
  target: ResolvedTarget,
  model: string | undefined,
  { bound, maxCost }: RouteOptions,
): Promise<BudgetReservation | undefined> {
  const vkHolder = virtualKeyHolder(target);

  const all = vkHolder ? [...holders, vkHolder] : holders;
  if (!all.some((h) => h.limits.budget_limit !== null)) return undefined;
  const operator = [virtualKeyPrices(target), policy.prices];
  if (maxCost) {
    const usd = maxCost(target.provider.name, model, operator);
    if (usd === null) throw modelNotPriced(target.provider.name, model ?? '');
    return BudgetReservation.take(all, usd, state.requestId);
  }
  if (!bound || model === undefined) return BudgetReservation.take(all, 0, state.requestId);
  const price = priceOf(target.provider.name, model, operator);
  if (!price) throw modelNotPriced(target.provider.name, model);
  const output = bound.maxOutputTokens ?? maxOutputTokens(target.provider.name, model, operator);
  return BudgetReservation.take(all, maxCostOf(price, bound.inputTokens, output), state.requestId);
}

/** The request's gateway config, read once per request and kept on its state. */
export async function requestConfig(state: ModelCallState): Promise<GatewayConfig | undefined> {
  if (state.config === undefined) {
    // A request that names no config gets its API key's or workspace's policy config.
    state.config =
      (await readConfig(state.headers, state.principal)) ??
      (await policies.forRequest(state)).defaultConfig ??
      null;
  }
  return state.config ?? undefined;
}

/** The routing plan of a model call, and the model the provider sees (without any `@slug/`). */
export async function planFor(
  state: ModelCallState,
  rawModel: string | undefined,
  options: RouteOptions = {},
): Promise<{ plan: PlanNode; model: string | undefined }> {
  // `@slug/model` names a virtual key; the provider only ever sees the model.
  const { model, slug } =
    rawModel === undefined ? { model: undefined, slug: undefined } : splitModel(rawModel);
  const own = routeOverrides(state.headers, slug);
  const overrides =
    options.defaults && !namesOwnRoute(state.headers, slug) ? { ...options.defaults, ...own } : own;
  const config = await requestConfig(state);
  const plan = buildPlan(config, overrides);
  await checkRouteHosts(plan, state.headers, state.principal, config);
  return { plan, model };
}

/** The target a plan tries first, resolved (credentials included): for calls beside the model call. */
export async function firstTarget(state: ModelCallState, plan: PlanNode): Promise<ResolvedTarget> {
  let node = plan;
  while (node.kind === 'group') node = node.targets[0] as PlanNode;
  return resolveTarget(node, state.headers, state.principal);
}

export interface Exchange {
  method: string;
  /** Path relative to the target's base URL, with its query string. */
  path?: string;
  /** The whole URL, when the provider builds it (deployments, regions); wins over `path`. */
  url?: string;
  /** The provider's auth and account headers, when the provider builds them (signed requests). */
  providerHeaders?: Record<string, string>;
  /** The provider's error format, when it is not OpenAI's. */
  translateError?: (
    status: number,
    body: unknown,
    text: string,
    headers: Record<string, unknown>,
  ) => GatewayError;
  /** Content type of the body sent; none for a request without body. */
  contentType?: string;
  accept?: string;
  body?: string | Buffer;
  /** Extra headers passed on from the client (`openai-beta`). */
  headers?: Record<string, string>;
  /** Which successful replies are kept open for the caller to stream, by content type. */
  keepOpen: (contentType: string) => boolean;
  /** What stops the call: the client's signal unless the caller keeps reading after the client leaves. */
  signal?: AbortSignal;
}

/**
 * One upstream call. A successful reply that `keepOpen` accepts is returned still flowing; any other
 * is read whole, and must be JSON. A provider error keeps its status and message.
 */
export async function exchange(
  state: ModelCallState,
  target: ResolvedTarget,
  req: Exchange,
): Promise<CallSuccess> {
  const log = state.log;
  const sentAt = performance.now();
  const sentHeaders: Record<string, string> = {
    ...(req.contentType ? { 'content-type': req.contentType } : {}),
    accept: req.accept ?? 'application/json',
    'accept-encoding': 'identity',
    ...req.headers,
    ...(req.providerHeaders ?? target.provider.headers(target)),
  };
  const upstream = await sendUpstream({
    url: new URL(req.url ?? target.baseUrl + (req.path ?? '')),
    method: req.method,
    headers: sentHeaders,
    body: req.body,
    signal: req.signal ?? state.clientSignal,
    timeoutMs: target.timeoutMs,
  }).catch((error: unknown) => {
    log.upstreamLatencyMs = performance.now() - sentAt;
    state.upstreamWaitMs += log.upstreamLatencyMs;
    throw error instanceof ClientGoneError
      ? clientGone()
      : adviseStreaming(error, state, req, target.timeoutMs);
  });

  const contentType = String(upstream.headers['content-type'] ?? '');
  if (upstream.status < 400 && req.keepOpen(contentType)) {
    state.upstreamWaitMs += performance.now() - sentAt;
    return {
      status: upstream.status,
      upstream,
      headers: replyHeaders(target, upstream),
      sentAt,
      contentType,
    };
  }
  const text = await readAll(upstream.body, MAX_REPLY_BYTES).catch((error: unknown) => {
    state.upstreamWaitMs += performance.now() - sentAt;
    throw error instanceof ClientGoneError
      ? clientGone()
      : adviseStreaming(error, state, req, target.timeoutMs);
  });
  log.upstreamLatencyMs = performance.now() - sentAt;
  state.upstreamWaitMs += log.upstreamLatencyMs;
  if (upstream.status < 400) {
    const reply = tryJson(text);
    if (reply !== undefined) {
      const headers = replyHeaders(target, upstream);
      return { status: upstream.status, upstream, headers, sentAt, contentType, replyText: text, reply };
    }
  }
  // Providers echo the key they were given in errors: nothing below may hold any credential of this call.
  const masker = credentialMasker(target.apiKey, sentHeaders);
  const headers = masker.maskValue(replyHeaders(target, upstream));
  const replyText = masker.mask(text);
  const reply = tryJson(replyText);
  if (upstream.status >= 400) {
    log.response = reply ?? replyText;
    const err = req.translateError
      ? req.translateError(upstream.status, reply, replyText, upstream.headers)
      : providerError(upstream.status, reply ?? { error: replyText.slice(0, 500) || undefined });
    throw err.asProviders(masker.mask(err.message), headers);
  }
  log.response = replyText;
  throw invalidUpstreamReply(headers);
}

export function replyHeaders(target: ResolvedTarget, upstream: UpstreamResponse): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-provider': target.provider.name };
  const requestId = target.provider.requestIdHeader && upstream.headers[target.provider.requestIdHeader];
  if (typeof requestId === 'string') headers['x-gateway-upstream-request-id'] = requestId;
  for (const name of PASSED_HEADERS) {
    const v = upstream.headers[name];
    if (typeof v === 'string') headers[name === 'x-request-id' ? 'x-gateway-upstream-request-id' : name] = v;
  }
  for (const [name, v] of Object.entries(upstream.headers)) {
    if (name.startsWith('x-ratelimit-') && typeof v === 'string') headers[name] = v;
  }
  return headers;
}

export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Operations whose callers can ask for a stream instead of waiting for a whole reply.
const STREAMABLE = new Set([
  'chat.completions',
  'messages.create',
  'responses.create',
  'prompts.completions',
]);

/** A non-streamed call that could have streamed is told, on a timeout, how long it waited and to stream. */
function adviseStreaming(error: unknown, state: ModelCallState, req: Exchange, timeoutMs: number): unknown {
  const timedOut = hasCode(error, 'upstream_timeout');
  // A stream asks for its provider's stream type (SSE, Bedrock's event stream); a whole reply for JSON.
  const streamed = req.accept !== undefined && req.accept !== 'application/json';
  return timedOut && !streamed && STREAMABLE.has(state.operation?.name ?? '')
    ? upstreamTimeout(timeoutMs, false)
    : error;
}

/** Token usage and its cost by the model the provider says served (or the one asked for). */
export function recordUsage(
  log: UsageLogDraft,
  target: ResolvedTarget,
  usage: Usage | null,
  replyModel: unknown,
): void {
  log.usage = usage;
  const model = typeof replyModel === 'string' && replyModel ? replyModel : log.model;
  log.cost = costOf(target.provider.name, model, log.usage, log.operatorPrices);
  if (log.cost === null && model !== log.model)
    log.cost = costOf(target.provider.name, log.model, log.usage, log.operatorPrices);
}

/** A failure after the 200 was sent: the log entry takes its status and error. */
export function recordStreamFailure(log: UsageLogDraft, failure: GatewayError | undefined): void {
  if (!failure) return;
  log.effectiveStatus = failure.status;
  log.error = { message: failure.message, type: failure.type, code: failure.code, origin: failure.origin };
}
