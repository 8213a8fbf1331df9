import { describe, expect, it } from 'vitest';
import { frameName, type Mark, type Profile, splitByStretch } from '../../bench/request-stretches';

// `npm run bench:profile` splits a one-at-a-time CPU profile where each request crosses the process; the
// split must put each sample's time in the stretch the last mark before it opened, and nothing else.

const ROOT = { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 3, 4] };
const IDLE = { id: 2, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } };
const OURS = {
  id: 3,
  callFrame: { functionName: 'plan', url: 'file:///repo/functions/gateway/plan.ts', lineNumber: 9 },
};
const NODE = { id: 4, callFrame: { functionName: 'writev', url: '', lineNumber: -1 } };

/** A profile whose samples fall at the given times (µs), each on the given node. */
function profile(startTime: number, samples: Array<[at: number, node: number]>): Profile {
  let last = startTime;
  return {
    nodes: [ROOT, IDLE, OURS, NODE],
    startTime,
    samples: samples.map(([, node]) => node),
    timeDeltas: samples.map(([at]) => {
      const delta = at - last;
      last = at;
      return delta;
    }),
  };
}

describe('a one-at-a-time profile split by stretch', () => {
  it('puts each sample in the stretch its last mark opened, timed to the next sample', () => {
    const marks: Mark[] = [
      ['reply', 1_600],
      ['request', 1_100],
      ['upstream request', 1_300],
      ['upstream reply', 1_500],
      ['request', 1_800],
    ];
    const split = splitByStretch(
      profile(1_000, [
        [1_050, 3], // before any mark: no request's
        [1_150, 3], // way there, 100 µs to the next sample
        [1_250, 4], // way there, 100 µs
        [1_350, 2], // idle while the upstream answers: not counted
        [1_400, 4], // upstream, 150 µs
        [1_550, 3], // way back, 100 µs
        [1_650, 4], // after the reply, 200 µs
        [1_850, 3], // the next request's way there, 50 µs
        [1_900, 2], // the last sample: no time after it
      ]),
      marks,
    );
    expect(split.requests).toBe(2);
    expect(split.busyUs).toEqual({
      'way there': 250,
      upstream: 150,
      'way back': 100,
      'after the reply': 200,
    });
    expect(Object.fromEntries(split.byFunction['way there'])).toEqual({
      'plan  functions/gateway/plan.ts:10': 150,
      writev: 100,
    });
    expect(Object.fromEntries(split.byFunction.upstream)).toEqual({ writev: 150 });
  });

  it('counts nothing without marks', () => {
    const split = splitByStretch(
      profile(0, [
        [10, 3],
        [20, 4],
      ]),
      [],
    );
    expect(split.requests).toBe(0);
    expect(Object.values(split.busyUs)).toEqual([0, 0, 0, 0]);
  });

  it('names a frame by function and, where it has one, its place', () => {
    expect(frameName(OURS.callFrame)).toBe('plan  functions/gateway/plan.ts:10');
    expect(
      frameName({ functionName: '', url: 'file:///x/node_modules/@middy/core/index.js', lineNumber: 0 }),
    ).toBe('(anonymous)  @middy/core/index.js:1');
    expect(frameName(NODE.callFrame)).toBe('writev');
  });
});
