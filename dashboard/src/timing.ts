import type { LogEntry } from './api';

export interface Timing {
  /** The attempt that served (or last failed), from sending it to its last byte. */
  upstreamMs: number | null;
  /** Upstream time of the attempts before it: retries and fallback targets that failed. */
  earlierAttemptsMs: number;
  /** The backoff waits between retries (each attempt's `wait_ms`). */
  retryWaitsMs: number;
  /** Retries at any target (`x-gateway-retry-count` counts those at the last target only). */
  retries: number;
  /** The target index that served when a fallback moved past the first, else null. */
  fallbackTarget: string | null;
  /** The request's time that no upstream attempt and no retry wait took: the gateway's own work. */
  gatewayMs: number | null;
  /**
   * True for an entry written before attempts carried `wait_ms`: its retry waits cannot be told
   * apart, so they stay inside `gatewayMs`.
   */
  includesWaits: boolean;
}

/** Splits a request's latency into upstream attempts, retry waits and the gateway's own time. */
export function timing(e: LogEntry): Timing {
  const attempts = e.attempts ?? [];
  const last = attempts[attempts.length - 1];
  const earlier = attempts.slice(0, -1);
  // A retry is an attempt at the same target as the one before it; backoff waits sit between them.
  const retries = attempts.filter((a, i) => i > 0 && attempts[i - 1]?.target_index === a.target_index).length;
  const targets = new Set(attempts.map((a) => a.target_index));
  const earlierAttemptsMs = earlier.reduce((sum, a) => sum + a.latency_ms, 0);
  const waitsTimed = attempts.every((a) => a.wait_ms !== undefined);
  const retryWaitsMs = attempts.reduce((sum, a) => sum + (a.wait_ms ?? 0), 0);
  const upstreamMs = e.upstream_latency_ms;
  const gatewayMs =
    upstreamMs === null
      ? null
      : Math.max(0, round(e.latency_ms - upstreamMs - earlierAttemptsMs - retryWaitsMs));
  return {
    upstreamMs,
    earlierAttemptsMs: round(earlierAttemptsMs),
    retryWaitsMs: round(retryWaitsMs),
    retries,
    fallbackTarget: targets.size > 1 && last ? last.target_index : null,
    gatewayMs,
    includesWaits: retries > 0 && !waitsTimed,
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The route a request took, in a few words: "2 retries", "1 retry, fallback → 1", "—". */
export function routeSummary(t: Timing): string {
  const parts = [];
  if (t.retries > 0) parts.push(`${t.retries} ${t.retries === 1 ? 'retry' : 'retries'}`);
  if (t.fallbackTarget !== null) parts.push(`fallback → ${t.fallbackTarget}`);
  return parts.join(', ') || '—';
}
