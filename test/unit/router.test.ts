import { describe, expect, it } from 'vitest';
import {
  badRequest,
  budgetExceeded,
  clientGone,
  GatewayError,
  providerFailure,
  upstreamUnreachable,
} from '../../functions/core/errors';
import { buildPlan, type PlanTarget } from '../../functions/gateway/plan';
import { backoffMs, pickWeighted, Router, retryAfterMs } from '../../functions/gateway/router';

interface Prepared {
  providerName: string;
  virtualKeySlug: string | null;
}

const failing = (status: number) =>
  providerFailure(status, 'api_error', `provider ${status}`, null, { 'retry-after-ms': '0' });

/** A router whose attempts answer from a script per target index. */
function scripted(
  script: Record<string, Array<number | GatewayError>>,
  signal = new AbortController().signal,
) {
  const calls: string[] = [];
  const router = new Router<Prepared, { status: number }>(
    async (target: PlanTarget) => ({
      providerName: target.provider?.value ?? 'openai',
      virtualKeySlug: null,
    }),
    async (_prepared, target) => {
      calls.push(target.index);
      const next = script[target.index]?.shift();
      if (next === undefined) throw new Error(`no scripted outcome for ${target.index}`);
      if (next instanceof GatewayError) throw next;
      return { status: next };
    },
    signal,
  );
  return { router, calls };
}

describe('Router', () => {
  it('serves from the single target and records the attempt', async () => {
    const { router, calls } = scripted({ '0': [200] });
    const served = await router.run(buildPlan({ provider: 'openai' }));
    expect(served).toMatchObject({ index: '0', retries: 0, success: { status: 200 } });
    expect(calls).toEqual(['0']);
    expect(router.attempts).toEqual([
      expect.objectContaining({ target_index: '0', provider: 'openai', status: 200, error: null }),
    ]);
  });

  it('retries a provider failure on a listed status, then succeeds', async () => {
    const { router, calls } = scripted({ '0': [failing(503), failing(429), 200] });
    const served = await router.run(buildPlan({ provider: 'openai', retry: { attempts: 2 } }));
    expect(served.retries).toBe(2);
    expect(calls).toEqual(['0', '0', '0']);
    expect(router.attempts.map((a) => a.status)).toEqual([503, 429, 200]);
  });

  it('does not retry past the attempts allowed, nor on a status that is not listed', async () => {
    const a = scripted({ '0': [failing(500), failing(500)] });
    await expect(a.router.run(buildPlan({ retry: { attempts: 1 } }))).rejects.toMatchObject({ status: 500 });
    expect(a.calls).toHaveLength(2);
    const b = scripted({ '0': [failing(400)] });
    await expect(b.router.run(buildPlan({ retry: { attempts: 3 } }))).rejects.toMatchObject({ status: 400 });
    expect(b.calls).toHaveLength(1);
  });

  it("never retries the gateway's own refusals of the request", async () => {
    const { router, calls } = scripted({ '0': [badRequest('bad', 'model')] });
    await expect(
      router.run(buildPlan({ retry: { attempts: 3, on_status_codes: [400] } })),
    ).rejects.toMatchObject({
      status: 400,
    });
    expect(calls).toEqual(['0']);
  });

  it('falls back to the next target on 5xx, 429 and unreachable, in order', async () => {
    const { router, calls } = scripted({
      '0': [failing(502)],
      '1': [upstreamUnreachable('refused')],
      '2': [200],
    });
    const served = await router.run(
      buildPlan({
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'a' }, { provider: 'b' }, { provider: 'c' }],
      }),
    );
    expect(served.index).toBe('2');
    expect(calls).toEqual(['0', '1', '2']);
    expect(router.attempts.map((a) => [a.target_index, a.provider, a.status])).toEqual([
      ['0', 'a', 502],
      ['1', 'b', 502],
      ['2', 'c', 200],
    ]);
  });

  it('does not fall back on a client error unless the strategy lists its status', async () => {
    const plain = scripted({ '0': [failing(400)], '1': [200] });
    const twoTargets = {
      strategy: { mode: 'fallback' as const },
      targets: [{ provider: 'a' }, { provider: 'b' }],
    };
    await expect(plain.router.run(buildPlan(twoTargets))).rejects.toMatchObject({ status: 400 });
    expect(plain.calls).toEqual(['0']);
    const listed = scripted({ '0': [failing(400)], '1': [200] });
    const served = await listed.router.run(
      buildPlan({ ...twoTargets, strategy: { mode: 'fallback', on_status_codes: [400] } }),
    );
    expect(served.index).toBe('1');
  });

  it('stops at once when the client has gone', async () => {
    const gone = clientGone();
    const { router, calls } = scripted({ '0': [gone], '1': [200] });
    await expect(
      router.run(
        buildPlan({ strategy: { mode: 'fallback' }, targets: [{ provider: 'a' }, { provider: 'b' }] }),
      ),
    ).rejects.toBe(gone);
    expect(calls).toEqual(['0']);
  });

  it('records a target refused before any attempt (prepare failed) and moves on when the refusal is movable', async () => {
    const calls: string[] = [];
    const router = new Router<Prepared, { status: number }>(
      async (target) => {
        if (target.index === '0') throw budgetExceeded('virtual_key', 'spent', 1);
        return { providerName: 'b', virtualKeySlug: null };
      },
      async (_p, target) => {
        calls.push(target.index);
        return { status: 200 };
      },
      new AbortController().signal,
    );
    const served = await router.run(
      buildPlan({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'spent' }, { provider: 'b' }] }),
    );
    expect(served.index).toBe('1');
    expect(calls).toEqual(['1']);
    expect(router.attempts[0]).toMatchObject({
      target_index: '0',
      provider: null,
      virtual_key: 'spent',
      status: 412,
    });
  });

  it('picks a loadbalance target by weight and never one of weight 0', () => {
    const items = [
      { weight: 0, id: 'zero' },
      { weight: 1, id: 'one' },
      { weight: 3, id: 'three' },
    ];
    expect(pickWeighted(items, 0).id).toBe('one');
    expect(pickWeighted(items, 0.24).id).toBe('one');
    expect(pickWeighted(items, 0.26).id).toBe('three');
    expect(pickWeighted(items, 0.999).id).toBe('three');
    expect(() => pickWeighted([{ weight: 0 }], 0.5)).toThrow(/weight above 0/);
  });
});

describe('retry timing', () => {
  it('reads retry-after-ms, retry-after seconds and an HTTP date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250' })).toBe(250);
    expect(retryAfterMs({ 'retry-after': '2' })).toBe(2000);
    const date = new Date(Date.now() + 5000).toUTCString();
    expect(retryAfterMs({ 'retry-after': date })).toBeGreaterThan(3000);
    expect(retryAfterMs({})).toBeUndefined();
  });

  it("honours the provider's wait, capped, and backs off exponentially with jitter otherwise", () => {
    const withWait = failing(429);
    expect(backoffMs(0, withWait)).toBe(0);
    const bare = providerFailure(503, 'api_error', 'x');
    for (const retry of [0, 1, 2, 3]) {
      const ms = backoffMs(retry, bare);
      const full = Math.min(10_000, 200 * 2 ** retry);
      expect(ms).toBeGreaterThanOrEqual(full / 2);
      expect(ms).toBeLessThanOrEqual(full);
    }
    const far = providerFailure(429, 'x', 'x', null, { 'retry-after': '3600' });
    expect(backoffMs(0, far)).toBe(10_000);
  });
});
