import { describe, expect, it } from 'vitest';
import {
  budgets,
  costBy,
  DAY_MS,
  HOUR_MS,
  percentile,
  summarise,
  timeSeries,
} from '../../dashboard/src/aggregate';
import type { LogEntry, VirtualKey } from '../../dashboard/src/api';

const at = (ms: number, fields: Partial<LogEntry> = {}): LogEntry => ({
  id: String(ms),
  trace_id: 't',
  timestamp: new Date(ms).toISOString(),
  workspace: 'default',
  auth: { type: 'api_key' },
  user: null,
  metadata: {},
  operation: 'chat.completions',
  provider: 'openai',
  model: 'gpt-4o',
  virtual_key: null,
  status: 200,
  stream: false,
  latency_ms: 10,
  upstream_latency_ms: 8,
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  cost: 0.5,
  request: null,
  response: null,
  error: null,
  ...fields,
});

describe('dashboard analytics', () => {
  it('puts every entry of the range in one hourly bucket, empty hours included', () => {
    const to = new Date(2026, 0, 2, 12).getTime();
    const from = to - DAY_MS;
    const entries = [at(to - 30 * 60_000), at(to - 40 * 60_000, { cost: 0.25 }), at(from + HOUR_MS + 1)];
    const s = timeSeries(entries, from, to);
    expect(s.labels).toHaveLength(25);
    expect(s.labels[0]).toBe('01-01 12:00');
    expect(s.requests.reduce((a, b) => a + b, 0)).toBe(3);
    expect(s.requests[23]).toBe(2);
    expect(s.cost[23]).toBeCloseTo(0.75, 12);
    expect(s.requests[1]).toBe(1);
  });

  it('uses daily buckets beyond two days and ignores entries outside the range', () => {
    const to = new Date(2026, 0, 8, 0).getTime();
    const s = timeSeries([at(to - DAY_MS / 2), at(to + 2 * DAY_MS)], to - 7 * DAY_MS, to);
    expect(s.labels).toHaveLength(8);
    expect(s.labels[0]).toBe('01-01');
    expect(s.requests.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('ranks cost by a key, folding the tail into "other"', () => {
    const entries = ['a', 'b', 'b', 'c', null].map((model, i) => at(i, { model, cost: 1 }));
    expect(costBy(entries, (e) => e.model, 2)).toEqual({
      labels: ['b', '(none)', 'other'],
      values: [2, 1, 2],
    });
  });

  it('summarises totals, errors and nearest-rank percentiles', () => {
    const entries = [1, 2, 3, 4, 100].map((ms, i) => at(i, { latency_ms: ms, status: i === 4 ? 502 : 200 }));
    expect(summarise(entries)).toMatchObject({
      requests: 5,
      cost: 2.5,
      promptTokens: 50,
      completionTokens: 10,
      errors: 1,
      p50LatencyMs: 3,
      p95LatencyMs: 100,
    });
    expect(percentile([], 0.5)).toBeNull();
  });

  it('lists virtual keys by spend, with their budgets', () => {
    const key = (slug: string, spent: number, budget_limit: number | null): VirtualKey => ({
      slug,
      name: slug,
      provider: 'openai',
      spent,
      budget_limit,
      period: 'all',
    });
    expect(budgets([key('a', 1, null), key('b', 3, 10)])).toEqual({
      labels: ['b', 'a'],
      spent: [3, 1],
      limit: [10, null],
    });
  });
});
