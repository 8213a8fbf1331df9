import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClientSignal, type StopSignal } from '../../functions/core/stop-signal';

// The client's signal of each request stands in for an AbortSignal wherever the gateway listens for the
// client going away: for any sequence of listeners added and removed (some by other listeners while the
// abort runs) and aborts, it calls the same listeners, in the same order, as an AbortSignal does.

type Step =
  | { op: 'add'; listener: number }
  | { op: 'remove'; listener: number }
  | { op: 'abort' }
  | { op: 'read' };

const LISTENERS = 5;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('add' as const), listener: fc.nat(LISTENERS - 1) }),
  fc.record({ op: fc.constant('remove' as const), listener: fc.nat(LISTENERS - 1) }),
  fc.constant({ op: 'abort' as const }),
  fc.constant({ op: 'read' as const }),
);

/** Runs the steps on a signal; listener i, when called, removes the listeners it was given. */
function run(
  signal: StopSignal,
  abort: () => void,
  steps: Step[],
  removesOnCall: number[][],
): Array<string | boolean> {
  const seen: Array<string | boolean> = [];
  const listeners: Array<() => void> = [];
  for (let i = 0; i < LISTENERS; i++) {
    listeners.push(() => {
      seen.push(`called ${i}`);
      for (const other of removesOnCall[i] ?? []) {
        const listener = listeners[other];
        if (listener) signal.removeEventListener('abort', listener);
      }
    });
  }
  for (const s of steps) {
    const listener = s.op === 'add' || s.op === 'remove' ? listeners[s.listener] : undefined;
    if (s.op === 'add' && listener) signal.addEventListener('abort', listener, { once: true });
    else if (s.op === 'remove' && listener) signal.removeEventListener('abort', listener);
    else if (s.op === 'abort') abort();
    else if (s.op === 'read') seen.push(signal.aborted);
  }
  return seen;
}

describe('ClientSignal', () => {
  it('calls the listeners an AbortSignal would, in its order, for any sequence', () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 30 }),
        fc.array(fc.array(fc.nat(LISTENERS - 1), { maxLength: 3 }), {
          minLength: LISTENERS,
          maxLength: LISTENERS,
        }),
        (steps, removesOnCall) => {
          const controller = new AbortController();
          const reference = run(controller.signal, () => controller.abort(), steps, removesOnCall);
          const client = new ClientSignal();
          expect(run(client, () => client.abort(), steps, removesOnCall)).toEqual(reference);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('calls each listener once, and none added after the abort', () => {
    const signal = new ClientSignal();
    const calls: string[] = [];
    const first = () => calls.push('first');
    signal.addEventListener('abort', first);
    signal.addEventListener('abort', first);
    signal.addEventListener('abort', () => calls.push('second'));
    expect(signal.aborted).toBe(false);
    signal.abort();
    signal.abort();
    signal.addEventListener('abort', () => calls.push('late'));
    expect(signal.aborted).toBe(true);
    expect(calls).toEqual(['first', 'second']);
  });

  it('runs every listener when one throws, then throws its error', () => {
    const signal = new ClientSignal();
    const calls: string[] = [];
    signal.addEventListener('abort', () => calls.push('before'));
    signal.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    signal.addEventListener('abort', () => calls.push('after'));
    expect(() => signal.abort()).toThrow('listener failed');
    expect(calls).toEqual(['before', 'after']);
    expect(signal.aborted).toBe(true);
  });
});
