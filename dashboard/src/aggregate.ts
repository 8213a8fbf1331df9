import { LATENCY_BOUNDS_MS, latencyQuantile } from '../../functions/core/latency-histogram';
import type { BudgetsReply, UsageRow } from './api';

// The analytics page's figures from the server's aggregates (GET /v1/analytics/usage): plain functions of
// its rows, so the charts and their totals are tested without a browser.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export type Interval = 'hour' | 'day';

export interface Summary {
  requests: number;
  cost: number;
  promptTokens: number;
  completionTokens: number;
  errors: number;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
}

export interface Series {
  labels: string[];
  requests: number[];
  cost: number[];
  errors: number[];
  p50: (number | null)[];
  p95: (number | null)[];
}

export interface Ranked {
  labels: string[];
  values: number[];
}

/** Hours for a range up to two days, days beyond: enough points to read, few enough to see. */
export function intervalFor(fromMs: number, toMs: number): Interval {
  return toMs - fromMs <= 2 * DAY_MS ? 'hour' : 'day';
}

/** Adds histograms bucket by bucket. */
export function mergeHistograms(histograms: number[][]): number[] {
  return LATENCY_BOUNDS_MS.map(() => 0)
    .concat(0)
    .map((_, i) => histograms.reduce((sum, h) => sum + (h[i] ?? 0), 0));
}

/** The range's totals; its latency quantiles from the buckets' histograms merged. */
export function summarise(rows: UsageRow[]): Summary {
  const histogram = mergeHistograms(rows.map((r) => r.latency_histogram));
  return {
    requests: rows.reduce((sum, r) => sum + r.requests, 0),
    cost: rows.reduce((sum, r) => sum + r.cost, 0),
    promptTokens: rows.reduce((sum, r) => sum + r.prompt_tokens, 0),
    completionTokens: rows.reduce((sum, r) => sum + r.completion_tokens, 0),
    errors: rows.reduce((sum, r) => sum + r.errors, 0),
    p50LatencyMs: latencyQuantile(histogram, 0.5),
    p95LatencyMs: latencyQuantile(histogram, 0.95),
  };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Start of the UTC hour or day holding `ms`: the server's buckets are UTC. */
export function bucketStart(ms: number, interval: Interval): number {
  const size = interval === 'hour' ? HOUR_MS : DAY_MS;
  return Math.floor(ms / size) * size;
}

function bucketLabel(start: number, interval: Interval): string {
  const d = new Date(start);
  if (interval === 'day') return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:00`;
}

/** Every bucket from `fromMs` to `toMs`, empty ones included, with the server's figures. */
export function timeSeries(rows: UsageRow[], fromMs: number, toMs: number, interval: Interval): Series {
  const size = interval === 'hour' ? HOUR_MS : DAY_MS;
  const starts: number[] = [];
  for (let t = bucketStart(fromMs, interval); t <= toMs; t += size) starts.push(t);
  const byStart = new Map(rows.map((r) => [Date.parse(r.bucket_start), r]));
  const at = starts.map((s) => byStart.get(s));
  return {
    labels: starts.map((s) => bucketLabel(s, interval)),
    requests: at.map((r) => r?.requests ?? 0),
    cost: at.map((r) => r?.cost ?? 0),
    errors: at.map((r) => r?.errors ?? 0),
    p50: at.map((r) => r?.latency_ms.p50 ?? null),
    p95: at.map((r) => r?.latency_ms.p95 ?? null),
  };
}

/** Total cost per group over the range, largest first, the rest beyond `top` summed as "other". */
export function costByGroup(rows: UsageRow[], top = 10): Ranked {
  const totals = new Map<string, number>();
  for (const r of rows) {
    const key = r.group ?? '(none)';
    totals.set(key, (totals.get(key) ?? 0) + r.cost);
  }
  const sorted = [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, top);
  const rest = sorted.slice(top);
  if (rest.length > 0) shown.push(['other', rest.reduce((sum, [, v]) => sum + v, 0)]);
  return { labels: shown.map(([k]) => k), values: shown.map(([, v]) => v) };
}

/** Spend in the current period beside the budget of the workspace, its API keys and its virtual keys. */
export function budgets(reply: BudgetsReply): { labels: string[]; spent: number[]; limit: number[] } {
  const rows: Array<[string, number, number]> = [];
  if (reply.workspace.budget)
    rows.push([
      `workspace ${reply.workspace.slug}`,
      reply.workspace.budget.spent,
      reply.workspace.budget.limit,
    ]);
  for (const k of reply.api_keys) rows.push([`API key ${k.name}`, k.budget.spent, k.budget.limit]);
  for (const v of reply.virtual_keys) rows.push([v.slug, v.spent, v.budget_limit]);
  return {
    labels: rows.map(([label]) => label),
    spent: rows.map(([, spent]) => spent),
    limit: rows.map(([, , limit]) => limit),
  };
}
