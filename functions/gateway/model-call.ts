import type { ModelCallState } from '../core/http';
import type { BudgetReservation } from './budget';
import type { PlanTarget, RouteOverrides } from './plan';
import { planFor } from './plan-request';
import { enforceModel, enforceTarget, policies, userHolder } from './policy';
import { pricingReady } from './pricing';
import { reserveBudgets, reserveRates, type SpendBound, virtualKeyPrices } from './reserve';
import { type AttemptSuccess, Router } from './router';
import { releaseUnserved, settleAfterReply } from './settle';
import { type ResolvedTarget, resolveTarget } from './target';

// The model-call pipeline, in its order: policy -> plan (plan-request.ts) -> reserve (reserve.ts) -> call
// upstream with retries and fallbacks (router.ts, call-upstream.ts) -> settle (settle.ts). Each stage takes
// what the one before produced; the operation's relay runs between the call and the settlement.

export interface RouteOptions extends SpendBound {
  /** A route used only when the request names none itself (a stored prompt's provider or virtual key). */
  defaults?: RouteOverrides;
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
  const log = state.log;
  const principal = state.principal;
  // Prices from a pricing file or URL load once per container; this waits only on a cold start.
  const [policy] = await Promise.all([policies.forRequest(state), pricingReady]);
  const { plan, model } = await planFor(state, rawModel, options.defaults);
  if (model !== undefined) enforceModel(policy, model);
  const user = userHolder(policy, principal, log.user);
  const holders = user ? [...policy.holders, user] : policy.holders;
  const rates = await reserveRates(holders, model, options);
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
    budget = await reserveBudgets(state.requestId, holders, target, sent, log.operatorPrices, options);
    return target;
  };

  const router = new Router(prepare, (target: ResolvedTarget) => attempt(target, model), state.clientSignal);
  let served: Awaited<ReturnType<typeof router.run>>;
  try {
    served = await router.run(plan);
  } catch (error) {
    await releaseUnserved(budget, rates);
    throw error;
  } finally {
    log.attempts = router.attempts;
    state.upstreamWaitMs += router.waitedMs;
    state.replyHeaders['x-gateway-target-index'] = router.lastIndex;
    state.replyHeaders['x-gateway-retry-count'] = String(router.lastRetries);
  }

  const target = served.prepared;
  log.provider = target.provider.name;
  log.virtualKey = target.virtualKeySlug;
  settleAfterReply(log, target, budget, rates);
  return { target, success: served.success };
}
