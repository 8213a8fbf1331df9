import { useEffect, useMemo, useState } from 'preact/hooks';
import { budgets, costByGroup, DAY_MS, HOUR_MS, intervalFor, summarise, timeSeries } from './aggregate';
import type { BudgetsReply, Dimension, GatewayApi, UsageRow } from './api';
import { ChartView, PALETTE } from './chart';
import { formatCost, formatCount, formatMs } from './format';

// Every figure here comes from the server's aggregates (GET /v1/analytics/usage and /budgets), so any
// range costs a few reads whatever the number of requests in it.

const RANGES = [
  { id: '24h', label: 'Last 24 hours', ms: DAY_MS },
  { id: '7d', label: 'Last 7 days', ms: 7 * DAY_MS },
  { id: '30d', label: 'Last 30 days', ms: 30 * DAY_MS },
  { id: '90d', label: 'Last 90 days', ms: 90 * DAY_MS },
  { id: '365d', label: 'Last 365 days', ms: 365 * DAY_MS },
  { id: 'custom', label: 'From … to …', ms: 0 },
] as const;
type RangeId = (typeof RANGES)[number]['id'];

const GROUPS: Array<{ dimension: Dimension; id: string; title: string }> = [
  { dimension: 'user', id: 'top-users', title: 'Top users by cost' },
  { dimension: 'model', id: 'cost-by-model', title: 'Cost by model' },
  { dimension: 'provider', id: 'cost-by-provider', title: 'Cost by provider' },
  { dimension: 'virtual_key', id: 'cost-by-virtual-key', title: 'Cost by virtual key' },
  { dimension: 'api_key', id: 'cost-by-api-key', title: 'Cost by API key' },
];

interface Loaded {
  fromMs: number;
  toMs: number;
  interval: 'hour' | 'day';
  totals: UsageRow[];
  groups: Record<Dimension, UsageRow[]>;
  budgets: BudgetsReply;
}

const usd = (v: number) => formatCost(v);
const count = (v: number) => formatCount(v);
const ms = (v: number) => formatMs(v);
const dayStart = (date: string) => Date.parse(`${date}T00:00:00Z`);

function Stat({ id, label, value, shown }: { id: string; label: string; value: number; shown: string }) {
  return (
    <div class="stat card" data-stat={id} data-value={value}>
      <span class="muted">{label}</span>
      <strong>{shown}</strong>
    </div>
  );
}

/** The range in ms: whole hours up to now, or whole UTC days from `from` to the end of `to`. */
function rangeOf(range: RangeId, from: string, to: string): { fromMs: number; toMs: number } | null {
  if (range === 'custom') {
    const fromMs = dayStart(from);
    const toMs = dayStart(to) + DAY_MS - 1;
    return Number.isFinite(fromMs) && Number.isFinite(toMs) && fromMs <= toMs ? { fromMs, toMs } : null;
  }
  // Whole hours, so that the last bucket is complete and reloading within the hour shows the same axis.
  const toMs = Math.ceil(Date.now() / HOUR_MS) * HOUR_MS;
  return { fromMs: toMs - (RANGES.find((r) => r.id === range)?.ms ?? DAY_MS), toMs };
}

export function AnalyticsView({ api }: { api: GatewayApi }) {
  const [range, setRange] = useState<RangeId>('24h');
  const [customFrom, setCustomFrom] = useState('');
  const [customTo, setCustomTo] = useState('');
  const [data, setData] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const bounds = rangeOf(range, customFrom, customTo);
    if (!bounds) return;
    let cancelled = false;
    setData(null);
    setError(null);
    const interval = intervalFor(bounds.fromMs, bounds.toMs);
    const query = {
      from: new Date(bounds.fromMs).toISOString(),
      to: new Date(bounds.toMs).toISOString(),
      interval,
    };
    Promise.all([
      api.usage(query),
      Promise.all(GROUPS.map((g) => api.usage({ ...query, group_by: g.dimension }))),
      api.budgets(),
    ])
      .then(([totals, grouped, budgetReply]) => {
        if (cancelled) return;
        const groups = Object.fromEntries(GROUPS.map((g, i) => [g.dimension, grouped[i]?.data ?? []]));
        setData({
          ...bounds,
          interval,
          totals: totals.data,
          groups: groups as Loaded['groups'],
          budgets: budgetReply,
        });
      })
      .catch((e: Error) => !cancelled && setError(e.message));
    return () => {
      cancelled = true;
    };
  }, [api, range, customFrom, customTo]);

  const view = useMemo(() => {
    if (!data) return null;
    const series = timeSeries(data.totals, data.fromMs, data.toMs, data.interval);
    const budget = budgets(data.budgets);
    return {
      summary: summarise(data.totals),
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
      latency: {
        labels: series.labels,
        datasets: [
          {
            type: 'line' as const,
            label: 'p50',
            data: series.p50,
            borderColor: PALETTE[2],
            backgroundColor: PALETTE[2],
            pointRadius: 2,
          },
          {
            type: 'line' as const,
            label: 'p95',
            data: series.p95,
            borderColor: PALETTE[3],
            backgroundColor: PALETTE[3],
            pointRadius: 2,
          },
        ],
      },
      errors: {
        labels: series.labels,
        datasets: [{ label: 'Errors', data: series.errors, backgroundColor: PALETTE[3] }],
      },
      groups: GROUPS.map((g, i) => {
        const ranked = costByGroup(data.groups[g.dimension]);
        return {
          ...g,
          labels: ranked.labels,
          datasets: [
            { label: 'Cost (USD)', data: ranked.values, backgroundColor: PALETTE[(i + 2) % PALETTE.length] },
          ],
        };
      }),
      budget: {
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
          <select name="range" value={range} onChange={(e) => setRange(e.currentTarget.value as RangeId)}>
            {RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {range === 'custom' && (
          <>
            <label>
              From{' '}
              <input
                type="date"
                name="from"
                value={customFrom}
                onChange={(e) => setCustomFrom(e.currentTarget.value)}
              />
            </label>
            <label>
              To{' '}
              <input
                type="date"
                name="to"
                value={customTo}
                onChange={(e) => setCustomTo(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {data && (
          <span class="muted" data-interval={data.interval}>
            Per {data.interval}, UTC
          </span>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {range === 'custom' && !rangeOf(range, customFrom, customTo) && (
        <p class="muted">Choose the first and last day.</p>
      )}
      {!data && !error && rangeOf(range, customFrom, customTo) && <p class="muted">Loading…</p>}
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
              id="p50-latency"
              label="p50 latency"
              value={view.summary.p50LatencyMs ?? 0}
              shown={formatMs(view.summary.p50LatencyMs)}
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
            <ChartView id="latency" title="Latency p50 and p95 over time" {...view.latency} format={ms} />
            <ChartView id="errors" title="Errors over time" {...view.errors} format={count} />
            {view.groups.map((g) => (
              <ChartView
                key={g.id}
                id={g.id}
                title={g.title}
                horizontal
                format={usd}
                labels={g.labels}
                datasets={g.datasets}
              />
            ))}
            <ChartView id="budgets" title="Spend against budget" horizontal format={usd} {...view.budget} />
          </div>
        </>
      )}
    </section>
  );
}
