// A CPU profile of a proxy serving one request at a time, split where each request crosses the process:
// from the client's request to the upstream request (the way there), while the upstream answers, from
// the upstream's reply to the client's reply (the way back), and after the reply until the next request.
// The marks are the times Node publishes its own HTTP diagnostics channels (bench/stretch-marks.mjs), on
// the machine's monotonic clock in µs, which is also the clock of V8's profile timestamps.

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** What happened, and when (µs). */
export type MarkKind = 'request' | 'upstream request' | 'upstream reply' | 'reply';
export type Mark = [kind: MarkKind, at: number];

export const STRETCHES = ['way there', 'upstream', 'way back', 'after the reply'] as const;
export type Stretch = (typeof STRETCHES)[number];

const STRETCH_AFTER: Record<MarkKind, Stretch> = {
  request: 'way there',
  'upstream request': 'upstream',
  'upstream reply': 'way back',
  reply: 'after the reply',
};

export interface StretchTotals {
  /** Requests the marks hold (one `request` mark each). */
  requests: number;
  /** Busy time (not idle) sampled in each stretch, µs. */
  busyUs: Record<Stretch, number>;
  /** Self time of each function in each stretch, µs. */
  byFunction: Record<Stretch, Map<string, number>>;
}

/** `name  where:line`, the way `npm run bench:profile` names a frame. */
export function frameName(frame: ProfileNode['callFrame']): string {
  const where = frame.url.replace(/.*node_modules\//, '').replace(/.*\/(functions|local|bench)\//, '$1/');
  return `${frame.functionName || '(anonymous)'}${where ? `  ${where}:${frame.lineNumber + 1}` : ''}`;
}

/**
 * Puts each busy sample in the stretch it fell in: the one the last mark before it opened. Samples before
 * the first mark belong to no request and are left out. A sample's time is the gap to the next one, as V8
 * takes it.
 */
export function splitByStretch(profile: Profile, marks: readonly Mark[]): StretchTotals {
  const sorted = [...marks].sort((a, b) => a[1] - b[1]);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const busyUs = Object.fromEntries(STRETCHES.map((s) => [s, 0])) as Record<Stretch, number>;
  const byFunction = Object.fromEntries(STRETCHES.map((s) => [s, new Map<string, number>()])) as Record<
    Stretch,
    Map<string, number>
  >;
  let at = profile.startTime;
  let next = 0;
  let stretch: Stretch | undefined;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    while (next < sorted.length && (sorted[next] as Mark)[1] <= at) {
      stretch = STRETCH_AFTER[(sorted[next] as Mark)[0]];
      next++;
    }
    const frame = nodes.get(id)?.callFrame;
    if (!stretch || !frame || frame.functionName === '(idle)') return;
    const us = profile.timeDeltas[i + 1] ?? 0;
    busyUs[stretch] += us;
    const name = frameName(frame);
    byFunction[stretch].set(name, (byFunction[stretch].get(name) ?? 0) + us);
  });
  return { requests: sorted.filter(([kind]) => kind === 'request').length, busyUs, byFunction };
}
