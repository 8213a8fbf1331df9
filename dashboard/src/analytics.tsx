import { useEffect, useMemo, useState } from 'preact/hooks';
import { budgets, costBy, DAY_MS, HOUR_MS, summarise, timeSeries } from './aggregate';
import { ApiError, type GatewayApi, type LogEntry, type UserRow, type VirtualKey } from './api';
import { ChartView, PALETTE } from './chart';
import { formatCost, formatCount, formatMs } from './format';

/** Most log entries read to draw the charts; the page says when a range holds more. */
export const MAX_ENTRIES = 2000;

const RANGES = [
  { id: '24h', label: 'Last 24 hours', ms: DAY_MS },
  { id: '7d', label: 'Last 7 days', ms: 7 * DAY_MS },
  { id: '30d', label: 'Last 30 days', ms: 30 * DAY_MS },
] as const;

interface Loaded {
  fromMs: number;
  toMs: number;
  entries: LogEntry[];
  truncated: boolean;
  users: UserRow[];
  /** Null when the key may not read virtual keys (no virtual_keys.read scope). */
  keys: VirtualKey[] | null;
}

const usd = (v: number) => formatCost(v);
const count = (v: number) => formatCount(v);

function Stat({ id, label, value, shown }: { id: string; label: string; value: number; shown: string }) {
  return (
    <div class="stat card" data-stat={id} data-value={value}>
      <span class="muted">{label}</span>
      <strong>{shown}</strong>
    </div>
  );
}

export function AnalyticsView({ api }: { api: GatewayApi }) {
  const [range, setRange] = useState<(typeof RANGES)[number]['id']>('24h');
  const [data, setData] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    setData(null);
    setError(null);
    // Whole hours, so that the last bucket is complete and reloading within the hour shows the same axis.
    const toMs = Math.ceil(Date.now() / HOUR_MS) * HOUR_MS;
    const fromMs = toMs - (RANGES.find((r) => r.id === range)?.ms ?? DAY_MS);
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    Promise.all([
      api.logsBetween(from, to, MAX_ENTRIES),
      api.users({ from, to }),
      api.virtualKeys().then(
        (r) => r.data,
        (e: unknown) => {
          if (e instanceof ApiError && e.status === 403) return null;
          throw e;
        },
      ),
    ])
      .then(([logs, users, keys]) => {
        if (!cancelled) setData({ fromMs, toMs, ...logs, users: users.data, keys });
      })
      .catch((e: Error) => !cancelled && setError(e.message));
    return () => {
      cancelled = true;
    };
  }, [api, range]);

  const view = useMemo(() => {
    if (!data) return null;
    const series = timeSeries(data.entries, data.fromMs, data.toMs);
    const topUsers = data.users.slice(0, 10);
    const byModel = costBy(data.entries, (e) => e.model);
    const byKey = costBy(data.entries, (e) => e.virtual_key);
    const budget = data.keys ? budgets(data.keys) : null;
    return {
      summary: summarise(data.entries),
      timeline: {
        labels: series.labels,
        datasets: [
          {
            type: 'bar' as const,
            label: 'Requests',
            data: series.requests,
            backgroundColor: PALETTE[0],
            yAxisID: 'y',
          },
          {
            type: 'line' as const,
            label: 'Cost (USD)',
            data: series.cost,
            borderColor: PALETTE[1],
            backgroundColor: PALETTE[1],
            yAxisID: 'y2',
            pointRadius: 2,
          },
        ],
      },
      users: {
        labels: topUsers.map((u) => u.user),
        datasets: [{ label: 'Cost (USD)', data: topUsers.map((u) => u.cost), backgroundColor: PALETTE[2] }],
      },
      models: {
        labels: byModel.labels,
        datasets: [{ label: 'Cost (USD)', data: byModel.values, backgroundColor: PALETTE[4] }],
      },
      keys: {
        labels: byKey.labels,
        datasets: [{ label: 'Cost (USD)', data: byKey.values, backgroundColor: PALETTE[5] }],
      },
      budget: budget && {
        labels: budget.labels,
        datasets: [
          { label: 'Spent', data: budget.spent, backgroundColor: PALETTE[3] },
          { label: 'Budget', data: budget.limit, backgroundColor: PALETTE[6] },
        ],
      },
    };
  }, [data]);

  return (
    <section class="analytics" data-page="analytics">
      <div class="toolbar">
        <label>
          Range{' '}
          <select
            name="range"
            value={range}
            onChange={(e) => setRange(e.currentTarget.value as typeof range)}
          >
            {RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {data && (
          <span class="muted" data-entries={data.entries.length}>
            From {formatCount(data.entries.length)} log entries
            {data.truncated ? ` (the newest ${MAX_ENTRIES}; narrow the range to see all)` : ''}
          </span>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!data && !error && <p class="muted">Loading…</p>}
      {data && view && (
        <>
          <div class="stats">
            <Stat
              id="requests"
              label="Requests"
              value={view.summary.requests}
              shown={formatCount(view.summary.requests)}
            />
            <Stat
              id="total-cost"
              label="Total cost"
              value={view.summary.cost}
              shown={formatCost(view.summary.cost)}
            />
            <Stat
              id="tokens"
              label="Tokens"
              value={view.summary.promptTokens + view.summary.completionTokens}
              shown={formatCount(view.summary.promptTokens + view.summary.completionTokens)}
            />
            <Stat
              id="errors"
              label="Errors"
              value={view.summary.errors}
              shown={formatCount(view.summary.errors)}
            />
            <Stat
              id="p95-latency"
              label="p95 latency"
              value={view.summary.p95LatencyMs ?? 0}
              shown={formatMs(view.summary.p95LatencyMs)}
            />
          </div>
          <div class="charts">
            <ChartView
              id="over-time"
              title="Requests and cost over time"
              {...view.timeline}
              format={count}
              secondAxisFormat={usd}
            />
            <ChartView id="top-users" title="Top users by cost" horizontal format={usd} {...view.users} />
            <ChartView id="cost-by-model" title="Cost by model" horizontal format={usd} {...view.models} />
            <ChartView
              id="cost-by-virtual-key"
              title="Cost by virtual key"
              horizontal
              format={usd}
              {...view.keys}
            />
            {view.budget ? (
              <ChartView
                id="budgets"
                title="Virtual key spend against budget"
                horizontal
                format={usd}
                {...view.budget}
              />
            ) : (
              <p class="muted card">
                This key cannot read virtual keys (virtual_keys.read), so budgets are not shown.
              </p>
            )}
          </div>
        </>
      )}
    </section>
  );
}
