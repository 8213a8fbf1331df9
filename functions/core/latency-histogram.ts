// The fixed-bucket latency histogram of the usage aggregates: the server writes it, the API and the
// dashboard read quantiles from it (any range's histograms merge bucket by bucket).

/** Upper bounds (ms) of the latency histogram's buckets; the last is open. */
export const LATENCY_BOUNDS_MS = [
  25, 50, 100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000,
  60_000, 120_000, 300_000,
];

/** The histogram bucket of a latency. */
export function latencyBucket(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? LATENCY_BOUNDS_MS.length : i;
}

/** The latency at quantile `q` of a histogram, interpolated inside its bucket. */
export function latencyQuantile(histogram: number[], q: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    const n = histogram[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const low = i === 0 ? 0 : (LATENCY_BOUNDS_MS[i - 1] as number);
      const high = LATENCY_BOUNDS_MS[i];
      if (high === undefined) return low;
      return Math.round(low + ((high - low) * (rank - seen)) / n);
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1] as number;
}
