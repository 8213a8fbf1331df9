import { describe, expect, it } from 'vitest';
import { LATENCY_BOUNDS_MS, latencyBucket, latencyQuantile } from '../../functions/core/latency-histogram';

// The latency histogram behind the analytics' p50/p95: fixed buckets, a quantile interpolated inside one.

const histogramOf = (latencies: number[]) => {
  const h = LATENCY_BOUNDS_MS.map(() => 0).concat(0);
  for (const ms of latencies) h[latencyBucket(ms)] = (h[latencyBucket(ms)] ?? 0) + 1;
  return h;
};

describe('the latency histogram', () => {
  it('puts a latency in the first bucket whose upper bound holds it, and past the last bound in the open one', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(25)).toBe(0);
    expect(latencyBucket(26)).toBe(1);
    expect(latencyBucket(1_000_000)).toBe(LATENCY_BOUNDS_MS.length);
  });

  it('reads p50 and p95 within the bucket that holds them', () => {
    // 100 requests: 1..100 ms, so p50 is about 50 ms and p95 about 95 ms.
    const h = histogramOf(Array.from({ length: 100 }, (_, i) => i + 1));
    const p50 = latencyQuantile(h, 0.5) as number;
    const p95 = latencyQuantile(h, 0.95) as number;
    expect(p50).toBeGreaterThan(25);
    expect(p50).toBeLessThanOrEqual(100);
    expect(p95).toBeGreaterThan(50);
    expect(p95).toBeLessThanOrEqual(100);
    expect(p95).toBeGreaterThanOrEqual(p50);
  });

  it('is null without requests, and the last bound for latencies past it', () => {
    expect(latencyQuantile(histogramOf([]), 0.5)).toBeNull();
    expect(latencyQuantile(histogramOf([900_000]), 0.95)).toBe(LATENCY_BOUNDS_MS.at(-1));
  });
});
