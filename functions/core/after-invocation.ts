import { settings } from './settings';

// The after-send work (log entry, spend, counters) of invocations that returned before it finished, where
// the process outlives its invocations and writes what they leave behind itself: the local server, whose
// stores gather writes for `GATEWAY_WRITE_BATCH_MS` and write them all when it stops. There an invocation
// that waited for its log batch to be written held its whole request (the client's and the provider's
// sockets, the event, the handler chain's state) for that long, 20 ms at the median and over 100 ms at the
// 90th percentile at concurrency 16, long enough for the garbage collector to move it to the old space.
// On Lambda the window is 0: an environment may be frozen once its invocation returns, so the invocation
// waits for all of it, as before.

const pending = new Set<Promise<void>>();

/** Whether after-send work may outlive its invocation here (see above). */
export const workOutlivesInvocation = (): boolean => settings().writeBatchMs > 0;

/** Keeps `work` until it settles, for `drainAfterInvocationWork`; it must not reject. */
export function outliveInvocation(work: Promise<void>): void {
  pending.add(work);
  void work.finally(() => pending.delete(work));
}

/** Resolves once every piece of after-send work left by returned invocations has settled. */
export async function drainAfterInvocationWork(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}
