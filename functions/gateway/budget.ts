import { budgetExceeded } from '../core/errors';
import { logger } from '../core/logger';
import { settings } from '../core/settings';
import { type BudgetHold, CounterStore, type VirtualKeyState } from '../store/counter-store';
import { type BudgetAlertWebhook, notifyBudgetAlert } from './budget-alerts';

export type BudgetPeriod = 'none' | 'daily' | 'monthly';

/** Who holds a budget or a rate limit; also the `param` of a refusal. */
export type HolderKind = 'workspace' | 'api_key' | 'virtual_key' | 'user';

/** What one holder enforces. */
export interface Limits {
  budget_limit: number | null;
  budget_period: BudgetPeriod;
  /** Fraction of the limit (0 to 1) whose crossing sends an alert; null for none. */
  budget_alert_threshold: number | null;
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}

/** One holder of limits in a request's hierarchy, with the counters' partition key it owns. */
export interface LimitHolder {
  kind: HolderKind;
  /** How messages and alerts name it: a workspace slug, an API key id, a virtual key slug, a user. */
  name: string;
  pk: string;
  limits: Limits;
  organisationId: string;
  workspace: string;
  /** Where the workspace wants its budget alerts posted, besides SNS. */
  webhook?: BudgetAlertWebhook;
}

/** The order in which refusals are named when several holders refuse one request. */
const HOLDER_ORDER: Record<HolderKind, number> = { workspace: 0, api_key: 1, virtual_key: 2, user: 3 };

/** Holders in the order workspace, API key, virtual key, user: the first that refuses is the one named. */
export const inHolderOrder = (holders: LimitHolder[]): LimitHolder[] =>
  [...holders].sort((a, b) => HOLDER_ORDER[a.kind] - HOLDER_ORDER[b.kind]);

/** The budget period a moment falls in: `all` without a reset, `yyyy-mm-dd` or `yyyy-mm` (UTC) otherwise. */
export function periodOf(state: { budget_period: BudgetPeriod }, at = new Date()): string {
  if (state.budget_period === 'monthly') return at.toISOString().slice(0, 7);
  if (state.budget_period === 'daily') return at.toISOString().slice(0, 10);
  return 'all';
}

/** When a period began (ISO 8601), null for a budget without a reset. */
export function periodStart(period: string): string | null {
  if (period === 'all') return null;
  return new Date(period.length === 7 ? `${period}-01T00:00:00Z` : `${period}T00:00:00Z`).toISOString();
}

/** Every period a virtual key may be in, read together so the key's state is not needed first. */
export function candidatePeriods(at = new Date()): string[] {
  return ['all', at.toISOString().slice(0, 7), at.toISOString().slice(0, 10)];
}

export interface BudgetStatus {
  spent: number;
  limit: number | null;
  remaining: number | null;
  period: string;
}

/** Summarises what a key may still spend in its current period. */
export function budgetStatus(
  state: { budget_limit: number | null; budget_period: BudgetPeriod },
  spent: Record<string, number>,
  at = new Date(),
) {
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

/** How long a reservation holds budget: a container that dies mid-call frees it after this. */
const reservationSeconds = () => settings().reservationTtlSeconds;

const counters = new CounterStore();

/**
 * A request's reservations on every budget of its hierarchy. `take` reserves the maximum cost on each
 * (one conditional update per budget, all at once); a refusal gives back what was taken and answers 412
 * naming the budget. `settle` turns each reservation into the actual cost in one update.
 */
export class BudgetReservation {
  private constructor(
    private readonly holds: Array<{ holder: LimitHolder; hold: BudgetHold }>,
    private readonly store: CounterStore,
  ) {}

  static async take(
    holders: LimitHolder[],
    usd: number,
    requestId: string,
    store = counters,
  ): Promise<BudgetReservation> {
    const budgeted = inHolderOrder(holders).filter((h) => h.limits.budget_limit !== null);
    const now = new Date();
    const expires = Math.floor(now.getTime() / 1000) + reservationSeconds();
    const taken = await Promise.all(
      budgeted.map(async (holder) => ({
        holder,
        hold: await store
          .reserve(
            holder.pk,
            `SPEND#${periodOf(holder.limits, now)}`,
            requestId,
            usd,
            holder.limits.budget_limit as number,
            expires,
          )
          .catch((error: unknown) => error as Error),
      })),
    );
    const held = taken.filter((t): t is { holder: LimitHolder; hold: BudgetHold } => isHold(t.hold));
    const refused = taken.find((t) => !isHold(t.hold));
    if (refused) {
      await Promise.all(held.map((t) => store.release(t.hold)));
      if (refused.hold instanceof Error) throw refused.hold;
      const { holder } = refused;
      // The first refusal of a period tells the owner the budget is exhausted.
      await sendAlert(
        holder,
        'exhausted',
        periodOf(holder.limits, now),
        holder.limits.budget_limit ?? 0,
        null,
        store,
      );
      throw budgetExceeded(holder.kind, holder.name, holder.limits.budget_limit ?? 0);
    }
    return new BudgetReservation(held, store);
  }

  get empty(): boolean {
    return this.holds.length === 0;
  }

  async release(): Promise<void> {
    await Promise.all(this.holds.map((t) => this.store.release(t.hold)));
  }

  /**
   * Releases each reservation and adds the actual cost, in one update per budget; alerts on crossings.
   * Answers the first holder whose spend has reached its limit.
   */
  async settle(usd: number): Promise<LimitHolder | undefined> {
    const spent = await Promise.all(
      this.holds.map(async ({ holder, hold }) => {
        const total = await this.store.settle(hold, usd);
        if (usd > 0) await alertOnCrossing(holder, hold.sk.slice(6), total, usd, this.store);
        return total >= (holder.limits.budget_limit as number) ? holder : undefined;
      }),
    );
    return spent.find((h) => h !== undefined);
  }
}

/**
 * Charges a cost that was not reserved (a realtime response the provider started on its own, after voice
 * activity) to every budget of the holders; returns the first holder whose spend has reached its limit.
 */
export async function chargeUnreserved(
  holders: LimitHolder[],
  usd: number,
  store = counters,
): Promise<LimitHolder | undefined> {
  const spent = await Promise.all(
    holders
      .filter((h) => h.limits.budget_limit !== null)
      .map(async (holder) => {
        const period = periodOf(holder.limits);
        const total = await store.charge(holder.pk, `SPEND#${period}`, usd);
        await alertOnCrossing(holder, period, total, usd, store);
        return total >= (holder.limits.budget_limit as number) ? holder : undefined;
      }),
  );
  return spent.find((h) => h !== undefined);
}

const isHold = (value: unknown): value is BudgetHold =>
  !!value && typeof value === 'object' && !(value instanceof Error) && 'attribute' in value;

/** Sends each alert (threshold, exhaustion) whose line this charge crossed, once per period. */
async function alertOnCrossing(
  holder: LimitHolder,
  period: string,
  total: number,
  charged: number,
  store: CounterStore,
): Promise<void> {
  const limit = holder.limits.budget_limit;
  if (limit === null) return;
  const lines: Array<{ kind: 'threshold' | 'exhausted'; usd: number }> = [];
  const threshold = holder.limits.budget_alert_threshold;
  if (threshold !== null) lines.push({ kind: 'threshold', usd: round(limit * threshold) });
  lines.push({ kind: 'exhausted', usd: limit });
  for (const line of lines) {
    // ADDs on one item are serialised, so exactly one charge moves the total across a line.
    if (total < line.usd || total - charged >= line.usd) continue;
    await sendAlert(holder, line.kind, period, line.usd, total, store);
  }
}

/** Records an alert once per holder, kind and period, and sends it the first time only. */
async function sendAlert(
  holder: LimitHolder,
  kind: 'threshold' | 'exhausted',
  period: string,
  thresholdUsd: number,
  spent: number | null,
  store: CounterStore,
): Promise<void> {
  const alert = {
    kind,
    holder: holder.kind,
    name: holder.name,
    organisation_id: holder.organisationId,
    workspace: holder.workspace,
    period,
    threshold_usd: thresholdUsd,
    budget_limit: holder.limits.budget_limit ?? 0,
    spent,
    created_at: new Date().toISOString(),
  };
  const first =
    holder.kind === 'virtual_key' && kind === 'threshold'
      ? await store.putAlertOnce(holder.pk.slice(3), {
          period,
          threshold_usd: thresholdUsd,
          spent: spent ?? 0,
          created_at: alert.created_at,
        })
      : await store.putHolderAlertOnce(holder.pk, `${period}#${kind}`, alert);
  if (first) await notifyBudgetAlert(alert, holder.webhook);
}

/**
 * Charges spend after the reply's last byte without a reservation: realtime sessions, whose responses
 * are charged as they complete.
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
export function alertThresholdUsd(state: {
  budget_limit: number | null;
  budget_alert_threshold: number | null;
}): number | null {
  if (state.budget_limit === null || state.budget_alert_threshold === null) return null;
  return round(state.budget_limit * state.budget_alert_threshold);
}

/** What a holder has spent in its current period, what live reservations hold, and what remains. */
export async function spendView(pk: string, limits: Limits | undefined, store = counters) {
  if (!limits || limits.budget_limit === null) return null;
  const period = periodOf(limits);
  const [item] = await store.readBudgetItems([{ pk, sk: `SPEND#${period}` }]);
  const spent = round(item?.spent ?? 0);
  const reserved = item?.reserved ?? 0;
  return {
    limit: limits.budget_limit,
    spent,
    reserved,
    remaining: Math.max(0, round(limits.budget_limit - spent)),
    period,
    period_start: periodStart(period),
  };
}
