import { expect } from 'vitest';

// What the benches print, as patterns: a test runs a bench at a small size and checks that each figure is
// there, never what it is.

/** The benches' sizes for a test: each script reads the ones it has, and ignores the rest. */
export const SMALL_BENCH = {
  BENCH_PAIRS: '30',
  BENCH_STREAMS: '5',
  BENCH_RPS_REQUESTS: '100',
  BENCH_RPS_ROUNDS: '2',
  BENCH_COLD_RUNS: '1',
  BENCH_WARMUP_REQUESTS: '50',
  ITERATIONS: '1000',
};

/** A time in ms as the benches print it (an added time may be negative at a small size). */
export const MS = String.raw`-?\d+\.\d{3} ms`;
/** A ratio as the benches print it; a tiny run may divide by zero or by a negative added time. */
export const X = String.raw`(-?\d+\.\d\d|-?Infinity|NaN)x`;

/** The part of `out` from `title` to the next blank line; fails the test if `title` is missing. */
export function section(out: string, title: string): string {
  const start = out.indexOf(title);
  expect(start, `no "${title}" in:\n${out}`).toBeGreaterThanOrEqual(0);
  const end = out.indexOf('\n\n', start);
  return out.slice(start, end < 0 ? undefined : end);
}

/** The first line every bench prints: the Node, architecture, CPUs and load average it ran on. */
export const MACHINE_LINE = /^Node v\d+\.\d+\.\d+ \(\w+\), \d+ CPUs, load average \d+\.\d\d$/m;
