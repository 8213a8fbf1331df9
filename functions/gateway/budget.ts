import { CounterStore, type VirtualKeyState } from '../store/counter-store';
import { GatewayError } from './errors';
import { logger } from './logger';

/** The budget period a moment falls in: `all` without a reset, `yyyy-mm` (UTC) for a monthly reset. */
export function periodOf(state: Pick<VirtualKeyState, 'budget_period'>, at = new Date()): string {
  return state.budget_period === 'monthly' ? at.toISOString().slice(0, 7) : 'all';
}

/** Both periods a key may be in, read together so the key's state is not needed first. */
export function candidatePeriods(at = new Date()): string[] {
  return ['all', at.toISOString().slice(0, 7)];
}

export const budgetExhausted = (slug: string, limit: number) =>
  new GatewayError(
    412,
    'budget_exceeded',
    `The budget of virtual key "${slug}" is exhausted (limit ${limit} USD). Raise budget_limit to reopen it.`,
    'budget_exhausted',
  );

export interface BudgetStatus {
  spent: number;
  limit: number | null;
  remaining: number | null;
  period: string;
}

/** Summarises what a key may still spend in its current period. */
export function budgetStatus(state: VirtualKeyState, spent: Record<string, number>, at = new Date()) {
  const period = periodOf(state, at);
  const used = spent[period] ?? 0;
  const limit = state.budget_limit;
  return {
    spent: used,
    limit,
    remaining: limit === null ? null : Math.max(0, round(limit - used)),
    period,
  } satisfies BudgetStatus;
}

const round = (usd: number) => Math.round(usd * 1e12) / 1e12;

/**
 * Charges spend after the reply's last byte. Enforcement reads the spend strongly on every request, so
 * once a charge reaches the limit no later request passes; requests already past the check complete and
 * are charged, which is why spend may end a little above the limit.
 */
export class BudgetLedger {
  constructor(private readonly counters = new CounterStore()) {}

  async charge(
    key: { id: string; slug: string; workspace: string; organisation_id: string },
    state: VirtualKeyState,
    period: string,
    cost: number | null,
  ): Promise<void> {
    await this.chargeAndTotal(key, state, period, cost);
  }

  /** Charges like `charge`, and answers the period's new total (null when nothing was charged). */
  async chargeAndTotal(
    key: { id: string; slug: string; workspace: string; organisation_id: string },
    state: VirtualKeyState,
    period: string,
    cost: number | null,
  ): Promise<number | null> {
    if (!cost || cost <= 0) return null;
    const total = await this.counters.addSpend(key.id, period, cost);
    const threshold = alertThresholdUsd(state);
    // ADDs on one item are serialised, so exactly one charge moves the total across the threshold.
    if (threshold === null || total < threshold || total - cost >= threshold) return total;
    const alert = {
      period,
      threshold_usd: threshold,
      spent: total,
      created_at: new Date().toISOString(),
    };
    if (await this.counters.putAlertOnce(key.id, alert)) {
      logger.warn('virtual key budget alert threshold crossed', {
        event: 'budget_alert',
        organisationId: key.organisation_id,
        workspace: key.workspace,
        virtualKey: key.slug,
        period,
        thresholdUsd: threshold,
        budgetLimitUsd: state.budget_limit,
        spentUsd: total,
      });
    }
    return total;
  }
}

/** `budget_alert_threshold` is a fraction of the limit; this is the USD amount it stands for. */
export function alertThresholdUsd(state: VirtualKeyState): number | null {
  if (state.budget_limit === null || state.budget_alert_threshold === null) return null;
  return round(state.budget_limit * state.budget_alert_threshold);
}
