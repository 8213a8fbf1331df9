import { afterEach, describe, expect, it, vi } from 'vitest';
import { TtlCache } from '../../functions/core/ttl-cache';

afterEach(() => {
  vi.useRealTimers();
});

describe('TtlCache', () => {
  it('reads once within the TTL, again after it, and not a refused value', async () => {
    vi.useFakeTimers();
    const cache = new TtlCache<string | undefined>(1_000);
    const load = vi.fn(async () => 'v');
    expect(await cache.getOrLoad('k', load)).toBe('v');
    expect(await cache.getOrLoad('k', load)).toBe('v');
    expect(load).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_001);
    await cache.getOrLoad('k', load);
    expect(load).toHaveBeenCalledTimes(2);

    const missing = vi.fn(async () => undefined);
    await cache.getOrLoad('gone', missing, (v) => v !== undefined);
    await cache.getOrLoad('gone', missing, (v) => v !== undefined);
    expect(missing).toHaveBeenCalledTimes(2);
  });

  it('drops the oldest entry when full, and an entry on delete', async () => {
    const cache = new TtlCache<number>(60_000, 2);
    const load = vi.fn(async () => 1);
    await cache.getOrLoad('a', load);
    await cache.getOrLoad('b', load);
    await cache.getOrLoad('c', load);
    await cache.getOrLoad('a', load);
    expect(load).toHaveBeenCalledTimes(4);
    cache.delete('c');
    await cache.getOrLoad('c', load);
    expect(load).toHaveBeenCalledTimes(5);
  });
});
