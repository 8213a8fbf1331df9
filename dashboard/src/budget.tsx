import { formatCost } from './format';

/** `budget` of a workspace or an API key read (`GET /v1/workspaces/{slug}`, `GET /v1/api-keys`). */
export interface BudgetView {
  limit: number;
  spent: number;
  reserved: number;
  remaining: number;
  period: string;
  period_start: string | null;
}

/** Spend against a budget: the figures and a bar, with the period it counts in. */
export function BudgetMeter({
  name,
  limit,
  spent,
  remaining,
  periodStart,
  alertAt = null,
}: {
  name: string;
  limit: number;
  spent: number;
  remaining: number | null;
  periodStart: string | null;
  /** The alert threshold, a fraction of the limit. */
  alertAt?: number | null;
}) {
  const used = limit > 0 ? Math.min(1, spent / limit) : 1;
  const alert = alertAt !== null && used >= alertAt;
  return (
    <div class="budget" data-budget={name}>
      <span>
        <span data-spent>{formatCost(spent)}</span> of {formatCost(limit)}
        {remaining !== null && (
          <>
            , <span data-remaining>{formatCost(remaining)}</span> left
          </>
        )}
      </span>
      <progress class={alert ? 'alert' : ''} max={1} value={used} aria-label={`Budget used for ${name}`} />
      {periodStart && <span class="muted small">since {periodStart.slice(0, 10)}</span>}
    </div>
  );
}
