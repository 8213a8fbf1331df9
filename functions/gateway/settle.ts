import type { GatewayError } from '../core/errors';
import type { Usage, UsageLogDraft } from '../core/log-entry';
import { BudgetLedger, type BudgetReservation, periodOf } from './budget';
import { costOf } from './pricing';
import type { RateReservation } from './rate-limits';
import type { ResolvedTarget } from './target';

// Pipeline stage "settle": what the call used is written on its log entry, and once the entry is final
// (after the last byte) every reservation is settled to the actual cost and tokens in one update each.

const ledger = new BudgetLedger();

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

/**
 * Settles the served call's reservations in the usage log's after-send work: after the last byte, before
 * the invocation ends, with the entry's final cost and tokens.
 */
export function settleAfterReply(
  log: UsageLogDraft,
  target: ResolvedTarget,
  budget: BudgetReservation | undefined,
  rates: RateReservation,
): void {
  const vk = target.virtualKey;
  log.settlements.push(async (entry) => {
    await Promise.all([
      budget?.settle(entry.cost ?? 0),
      rates.settle(entry.usage?.total_tokens ?? 0),
      // A key without a budget is not reserved on, but its spend is still kept for its readers.
      vk && vk.state.budget_limit === null
        ? ledger.charge(vk.record, vk.state, periodOf(vk.state), entry.cost)
        : undefined,
    ]);
  });
}

/** Nothing was served: every reservation is given back (the request still counts per minute). */
export async function releaseUnserved(
  budget: BudgetReservation | undefined,
  rates: RateReservation,
): Promise<void> {
  await Promise.all([budget?.release(), rates.settle(0)]);
}
