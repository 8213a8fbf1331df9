import { badRequest, type ErrorCode, GatewayError, hasCode } from '../core/errors';
import type { AttemptRecord } from '../core/log-entry';
import { settings } from '../core/settings';
import type { StopSignal } from '../core/stop-signal';
import type { PlanNode, PlanTarget } from './plan';

/** What `prepare` made of a target: the router only needs to know whom it names. */
export interface PreparedTarget {
  providerName: string;
  virtualKeySlug: string | null;
}

/** The outcome of an attempt that did not throw: the reply has started and will be served. */
export interface AttemptSuccess {
  status: number;
}

export interface Served<P, S> {
  prepared: P;
  success: S;
  /** Index path of the target that served. */
  index: string;
  /** Retries it took at that target. */
  retries: number;
}

// Failures that say nothing about the request itself, so another target may well succeed.
const MOVABLE_CODES: ReadonlySet<string | null> = new Set<ErrorCode>([
  'upstream_unreachable',
  'upstream_timeout',
  'budget_exceeded',
  'rate_limit_exceeded',
  'virtual_key_unavailable',
]);

const clientGone = (e: GatewayError) => hasCode(e, 'client_closed');

/** Seconds (or an HTTP date) in `retry-after`, or `retry-after-ms`, as milliseconds. */
export function retryAfterMs(headers: Record<string, string>): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers['retry-after'];
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Exponential backoff with jitter: half the delay fixed, half random, so retries never bunch up. */
export function backoffMs(retry: number, error: GatewayError): number {
  const { retryBaseMs: base, retryMaxDelayMs: cap } = settings();
  const after = retryAfterMs(error.headers);
  if (after !== undefined) return Math.min(after, cap);
  const delay = Math.min(cap, base * 2 ** retry);
  return delay / 2 + Math.random() * (delay / 2);
}

function sleep(ms: number, signal: StopSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Weighted random pick; weights of 0 are never picked. */
export function pickWeighted<T extends { weight: number }>(items: T[], random = Math.random()): T {
  const total = items.reduce((sum, t) => sum + Math.max(0, t.weight), 0);
  let point = random * total;
  for (const item of items) {
    const w = Math.max(0, item.weight);
    if (w > 0 && point < w) return item;
    point -= w;
  }
  const last = [...items].reverse().find((t) => t.weight > 0);
  if (!last) throw badRequest('No target has a weight above 0.', 'config.targets');
  return last;
}

/**
 * Walks a plan: `prepare` resolves a target once (virtual key, budget, rate limit), `attempt` makes one
 * upstream call and throws a GatewayError when it fails before the reply is under way. Retries happen
 * within a target, fallback moves to the next target, loadbalance picks one by weight. Everything runs
 * before the client has a byte, so switching targets is always safe here.
 */
export class Router<P extends PreparedTarget, S extends AttemptSuccess> {
  readonly attempts: AttemptRecord[] = [];
  /** The last target tried and its retries, for the reply headers of a failure too. */
  lastIndex = '0';
  lastRetries = 0;
  /** Milliseconds spent waiting between retries (backoff or the provider's `retry-after`). */
  waitedMs = 0;

  constructor(
    private readonly prepare: (target: PlanTarget) => Promise<P>,
    private readonly attempt: (prepared: P, target: PlanTarget) => Promise<S>,
    private readonly signal: StopSignal,
  ) {}

  run(plan: PlanNode): Promise<Served<P, S>> {
    return plan.kind === 'target' ? this.runTarget(plan) : this.runGroup(plan);
  }

  private async runGroup(group: Extract<PlanNode, { kind: 'group' }>): Promise<Served<P, S>> {
    if (group.mode === 'loadbalance') return this.run(pickWeighted(group.targets));
    let last: unknown;
    for (const target of group.targets) {
      try {
        return await this.run(target);
      } catch (error) {
        if (!(error instanceof GatewayError) || clientGone(error)) throw error;
        if (!movable(error, group.onStatusCodes)) throw error;
        last = error;
      }
    }
    throw last;
  }

  private async runTarget(target: PlanTarget): Promise<Served<P, S>> {
    this.lastIndex = target.index;
    this.lastRetries = 0;
    let prepared: P;
    const preparedAt = performance.now();
    try {
      prepared = await this.prepare(target);
    } catch (error) {
      this.record(target, undefined, error, preparedAt);
      throw error;
    }
    // The backoff waited before the next attempt, logged on that attempt.
    let waitBeforeMs = 0;
    for (let retry = 0; ; retry++) {
      this.lastRetries = retry;
      const startedAt = performance.now();
      try {
        const success = await this.attempt(prepared, target);
        this.record(target, prepared, success, startedAt, waitBeforeMs);
        return { prepared, success, index: target.index, retries: retry };
      } catch (error) {
        this.record(target, prepared, error, startedAt, waitBeforeMs);
        if (!(error instanceof GatewayError) || clientGone(error)) throw error;
        const retryable =
          retry < target.retry.attempts &&
          !hasCode(error, 'host_not_allowed') &&
          target.retry.onStatusCodes.includes(error.status) &&
          (error.origin === 'provider' || MOVABLE_CODES.has(error.code));
        if (!retryable) throw error;
        const waitStartedAt = performance.now();
        await sleep(backoffMs(retry, error), this.signal);
        waitBeforeMs = performance.now() - waitStartedAt;
        this.waitedMs += waitBeforeMs;
        if (this.signal.aborted) throw error;
      }
    }
  }

  private record(
    target: PlanTarget,
    prepared: P | undefined,
    outcome: unknown,
    startedAt: number,
    waitBeforeMs = 0,
  ): void {
    const failure = outcome instanceof Error ? outcome : undefined;
    this.attempts.push({
      target_index: target.index,
      provider: prepared?.providerName ?? (target.virtualKey ? null : (target.provider?.value ?? 'openai')),
      virtual_key: prepared?.virtualKeySlug ?? target.virtualKey?.value ?? null,
      status: failure
        ? failure instanceof GatewayError
          ? failure.status
          : 500
        : (outcome as AttemptSuccess).status,
      latency_ms: Math.round((performance.now() - startedAt) * 100) / 100,
      // Timed apart so that the wait is not mistaken for the gateway's own overhead.
      wait_ms: Math.round(waitBeforeMs * 100) / 100,
      // Gateway errors carry messages written for clients; anything else might carry internals.
      error: failure ? (failure instanceof GatewayError ? failure.message : 'internal error') : null,
    });
  }
}

/** Whether a fallback moves on: listed statuses (default 429 and 5xx), or the target was unreachable. */
function movable(error: GatewayError, onStatusCodes: number[] | undefined): boolean {
  if (MOVABLE_CODES.has(error.code)) return true;
  if (hasCode(error, 'host_not_allowed') || hasCode(error, 'unknown_virtual_key')) return false;
  return onStatusCodes ? onStatusCodes.includes(error.status) : error.status >= 500 || error.status === 429;
}
