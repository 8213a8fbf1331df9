import { describe, expect, it } from 'vitest';
import { addedTime, pairedPct, pct, sort } from '../../bench/support';

// The benches give the time a path adds at p99 as the p99 of the per-round differences of interleaved
// calls, never as a difference of the two series' own p99s, which can fall below the median when the
// baseline's own tail is the longer one.

describe('pairedPct', () => {
  // 100 rounds: the path always adds 2 ms, except one round where it adds 9; the baseline takes 1 ms,
  // except two rounds where it took 20 ms (its own tail, which the path's calls beside them did not see).
  const baseline = Array.from({ length: 100 }, (_, i) => (i === 10 || i === 60 ? 20 : 1));
  const path = Array.from({ length: 100 }, (_, i) => (i === 30 ? 10 : 3));

  it('keeps the tail the path adds, which a difference of percentiles loses', () => {
    expect(pct(sort(path), 99) - pct(sort(baseline), 99)).toBe(-10);
    expect(pairedPct(path, baseline, 99)).toBe(9);
    expect(pairedPct(path, baseline, 50)).toBe(2);
  });

  it('pairs by round, not by rank', () => {
    // By rank every difference would be 1.
    expect(pairedPct([5, 1, 3], [0, 4, 2], 99)).toBe(5);
    expect(pairedPct([5, 1, 3], [0, 4, 2], 0)).toBe(-3);
  });

  it('refuses series of different lengths', () => {
    expect(() => pairedPct([1, 2, 3], [1, 2], 99)).toThrow('3 rounds against 2');
  });
});

describe('addedTime', () => {
  it("gives the medians' difference at p50 and the per-round p99", () => {
    const baseline = Array.from({ length: 100 }, (_, i) => (i === 10 || i === 60 ? 20 : 1));
    const path = Array.from({ length: 100 }, (_, i) => (i === 30 ? 10 : 3 + (i % 3)));
    expect(addedTime(path, baseline)).toEqual({
      p50: pct(sort(path), 50) - pct(sort(baseline), 50),
      p99: pairedPct(path, baseline, 99),
    });
    expect(addedTime(path, baseline).p50).toBe(3);
  });
});
