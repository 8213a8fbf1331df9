import { describe, expect, it } from 'vitest';
import {
  budgets,
  costByGroup,
  DAY_MS,
  HOUR_MS,
  intervalFor,
  mergeHistograms,
  summarise,
  timeSeries,
} from '../../dashboard/src/aggregate';
import type { UsageRow } from '../../dashboard/src/api';
import { LATENCY_BOUNDS_MS, latencyQuantile } from '../../functions/core/latency-histogram';

// The analytics page's figures from the server's aggregate rows.

const histogram = (bucket: number, n: number) => {
  const h = LATENCY_BOUNDS_MS.map(() => 0).concat(0);
  h[bucket] = n;
  return h;
};

const row = (startMs: number, fields: Partial<UsageRow> = {}): UsageRow => ({
  bucket_start: new Date(startMs).toISOString(),
  requests: 2,
  prompt_tokens: 10,
  completion_tokens: 4,
  total_tokens: 14,
  cost: 0.5,
  errors: 1,
  latency_ms: { mean: 40, p50: 37, p95: 49 },
  latency_histogram: histogram(1, 2),
  ...fields,
});

const start = Date.UTC(2026, 0, 10, 0, 0, 0);

describe('dashboard analytics from server aggregates', () => {
  it('reads hours up to two days and days beyond', () => {
    expect(intervalFor(0, DAY_MS)).toBe('hour');
    expect(intervalFor(0, 7 * DAY_MS)).toBe('day');
  });

  it('sums the totals and merges histograms for the range’s quantiles, as the server does', () => {
    const rows = [row(start), row(start + HOUR_MS, { latency_histogram: histogram(7, 18), requests: 18 })];
    const s = summarise(rows);
    expect(s).toMatchObject({ requests: 20, cost: 1, promptTokens: 20, completionTokens: 8, errors: 2 });
    const merged = mergeHistograms(rows.map((r) => r.latency_histogram));
    expect(s.p95LatencyMs).toBe(latencyQuantile(merged, 0.95));
  });

  it('lays the rows on every bucket of the range, empty ones at zero', () => {
    const series = timeSeries([row(start + 2 * HOUR_MS)], start, start + 5 * HOUR_MS, 'hour');
    expect(series.labels).toHaveLength(6);
    expect(series.requests).toEqual([0, 0, 2, 0, 0, 0]);
    expect(series.p95).toEqual([null, null, 49, null, null, null]);
    const days = timeSeries([row(start + DAY_MS)], start, start + 3 * DAY_MS - 1, 'day');
    expect(days.labels).toEqual(['01-10', '01-11', '01-12']);
    expect(days.cost).toEqual([0, 0.5, 0]);
  });

  it('ranks groups by cost over the range, the rest as other', () => {
    const rows = [
      row(start, { group: 'a', cost: 1 }),
      row(start + HOUR_MS, { group: 'a', cost: 2 }),
      row(start, { group: 'b', cost: 5 }),
      row(start, { group: null, cost: 0.25 }),
    ];
    expect(costByGroup(rows)).toEqual({ labels: ['b', 'a', '(none)'], values: [5, 3, 0.25] });
    expect(costByGroup(rows, 1)).toEqual({ labels: ['b', 'other'], values: [5, 3.25] });
  });

  it('shows the workspace, API key and virtual key budgets', () => {
    const b = budgets({
      workspace: { slug: 'default', budget: { limit: 10, spent: 2, remaining: 8, period_start: null } },
      api_keys: [{ id: 'k', name: 'ci', budget: { limit: 3, spent: 1, remaining: 2, period_start: null } }],
      virtual_keys: [{ slug: 'team-a', name: 'Team A', budget_limit: 5, spent: 4, remaining: 1 }],
    });
    expect(b).toEqual({
      labels: ['workspace default', 'API key ci', 'team-a'],
      spent: [2, 1, 4],
      limit: [10, 3, 5],
    });
  });
});
