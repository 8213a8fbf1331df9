import { modelNotPriced } from '../core/errors';
import { parsedField } from '../core/parsed-json';
import type { ModelPrice } from '../core/prices';
import { BudgetReservation, type LimitHolder } from './budget';
import { maxCostOf, maxOutputTokens, type OperatorPrices, priceOf, tokenBound } from './pricing';
import { RateReservation } from './rate-limits';
import type { ResolvedTarget } from './target';

// Pipeline stage "reserve": before a model call, the most it can cost is reserved on every budget of the
// request's hierarchy and its tokens on every tokens-per-minute limit, each with one conditional update.
// The settle stage (settle.ts) gives back what was not used.

export interface TokenBound {
  inputTokens: number;
  maxOutputTokens: number | undefined;
}

/** What a call can spend, as the operation knows it before the target is chosen. */
export interface SpendBound {
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

/** The prices a target's virtual key sets for its models, if any. */
export const virtualKeyPrices = (target: ResolvedTarget): Record<string, ModelPrice> | undefined =>
  parsedField<Record<string, ModelPrice>>(target.virtualKey?.record, 'prices_json');

/** Reserves the request's tokens on every tokens-per-minute limit of its hierarchy (and counts the request). */
export function reserveRates(
  holders: LimitHolder[],
  model: string | undefined,
  { bound }: SpendBound,
): Promise<RateReservation> {
  const estimatedTokens =
    bound && model !== undefined
      ? bound.inputTokens + (bound.maxOutputTokens ?? maxOutputTokens('openai', model))
      : 0;
  return RateReservation.take(holders, estimatedTokens);
}

/**
 * Reserves the request's maximum cost on every budget that applies to this target (the hierarchy's and
 * the target's virtual key); none when no budget applies. A model without a price is refused once any does.
 */
export async function reserveBudgets(
  requestId: string,
  holders: LimitHolder[],
  target: ResolvedTarget,
  model: string | undefined,
  operator: OperatorPrices,
  { bound, maxCost }: SpendBound,
): Promise<BudgetReservation | undefined> {
  const vkHolder = virtualKeyHolder(target);
  const all = vkHolder ? [...holders, vkHolder] : holders;
  if (!all.some((h) => h.limits.budget_limit !== null)) return undefined;
  if (maxCost) {
    const usd = maxCost(target.provider.name, model, operator);
    if (usd === null) throw modelNotPriced(target.provider.name, model ?? '');
    return BudgetReservation.take(all, usd, requestId);
  }
  if (!bound || model === undefined) return BudgetReservation.take(all, 0, requestId);
  const price = priceOf(target.provider.name, model, operator);
  if (!price) throw modelNotPriced(target.provider.name, model);
  const output = bound.maxOutputTokens ?? maxOutputTokens(target.provider.name, model, operator);
  return BudgetReservation.take(all, maxCostOf(price, bound.inputTokens, output), requestId);
}
