import type { LogEntry, VirtualKey } from './api';

// Analytics computed in the browser from the log entries the key can read: plain functions of the
// entries, so the charts and their totals are tested without a browser.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

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
}

export interface Ranked {
  labels: string[];
  values: number[];
}

export function summarise(entries: LogEntry[]): Summary {
  const latencies = entries.map((e) => e.latency_ms).sort((a, b) => a - b);
  return {
    requests: entries.length,
    cost: entries.reduce((sum, e) => sum + (e.cost ?? 0), 0),
    promptTokens: entries.reduce((sum, e) => sum + (e.usage?.prompt_tokens ?? 0), 0),
    completionTokens: entries.reduce((sum, e) => sum + (e.usage?.completion_tokens ?? 0), 0),
    errors: entries.filter((e) => e.status >= 400).length,
    p50LatencyMs: percentile(latencies, 0.5),
    p95LatencyMs: percentile(latencies, 0.95),
  };
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank] ?? null;
}

/** Hours for a range up to two days, days beyond: enough points to read, few enough to see. */
export function bucketSize(fromMs: number, toMs: number): number {
  return toMs - fromMs <= 2 * DAY_MS ? HOUR_MS : DAY_MS;
}

/** Start of the local hour or day holding `ms`, so buckets line up with the viewer's clock. */
export function bucketStart(ms: number, size: number): number {
  const d = new Date(ms);
  d.setMinutes(0, 0, 0);
  if (size === DAY_MS) d.setHours(0);
  return d.getTime();
}

const pad = (n: number) => String(n).padStart(2, '0');

function bucketLabel(start: number, size: number): string {
  const d = new Date(start);
  const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return size === DAY_MS ? day : `${day} ${pad(d.getHours())}:00`;
}

/** Requests and cost per bucket from `fromMs` to `toMs`, empty buckets included. */
export function timeSeries(entries: LogEntry[], fromMs: number, toMs: number): Series {
  const size = bucketSize(fromMs, toMs);
  const starts: number[] = [];
  // Stepping by calendar (not by a fixed number of ms) keeps daily buckets right across DST changes.
  for (let t = bucketStart(fromMs, size); t <= toMs; ) {
    starts.push(t);
    const next = new Date(t);
    if (size === DAY_MS) next.setDate(next.getDate() + 1);
    else next.setHours(next.getHours() + 1);
    t = next.getTime();
  }
  const index = new Map(starts.map((s, i) => [s, i]));
  const requests = starts.map(() => 0);
  const cost = starts.map(() => 0);
  for (const e of entries) {
    const i = index.get(bucketStart(Date.parse(e.timestamp), size));
    if (i === undefined) continue;
    requests[i] = (requests[i] ?? 0) + 1;
    cost[i] = (cost[i] ?? 0) + (e.cost ?? 0);
  }
  return { labels: starts.map((s) => bucketLabel(s, size)), requests, cost };
}

/** Total cost per key (model, virtual key, user), largest first, the rest beyond `top` summed as "other". */
export function costBy(entries: LogEntry[], keyOf: (e: LogEntry) => string | null, top = 10): Ranked {
  const totals = new Map<string, number>();
  for (const e of entries) {
    const key = keyOf(e) ?? '(none)';
    totals.set(key, (totals.get(key) ?? 0) + (e.cost ?? 0));
  }
  const sorted = [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, top);
  const rest = sorted.slice(top);
  if (rest.length > 0) shown.push(['other', rest.reduce((sum, [, v]) => sum + v, 0)]);
  return { labels: shown.map(([k]) => k), values: shown.map(([, v]) => v) };
}

/** Each virtual key's spend in its current period beside its budget (keys without a budget show none). */
export function budgets(keys: VirtualKey[]): { labels: string[]; spent: number[]; limit: (number | null)[] } {
  const sorted = [...keys].sort((a, b) => b.spent - a.spent || a.slug.localeCompare(b.slug));
  return {
    labels: sorted.map((k) => k.slug),
    spent: sorted.map((k) => k.spent),
    limit: sorted.map((k) => k.budget_limit),
  };
}
