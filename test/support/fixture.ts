import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startTestGateway, type TestGateway } from './gateway';

/** What every fake on 127.0.0.1 offers: forget what it received, and stop. */
export interface Fake {
  reset(): void;
  close(): Promise<void>;
}

type Starters = Record<string, () => Promise<Fake>>;

export type Fixture<S extends Starters> = { gw: TestGateway } & {
  [K in keyof S]: Awaited<ReturnType<S[K]>>;
};

/**
 * A stand-in for a value made in `beforeAll`: the file can name it at module level, and every use after
 * `beforeAll` reaches the running server or fake (all of them are plain objects, so forwarding is exact).
 */
function late<T extends object>(name: string, current: () => T | undefined): T {
  const target = (): T => {
    const value = current();
    if (!value) throw new Error(`${name} is used before beforeAll started it`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(target(), key),
    set: (_, key, value) => Reflect.set(target(), key, value),
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
      // The proxy's own target is an empty extensible object, so a forwarded property must be configurable.
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

/**
 * Registers the hooks of an integration test file: `beforeAll` starts the fakes named in `starters`, then
 * the local gateway; `beforeEach` resets every fake; `afterAll` stops the gateway, then the fakes. A start
 * that fails part-way stops what did start. Returns the gateway (`gw`) and each fake under its name.
 */
export function useGateway<S extends Starters = Record<never, never>>(starters: S = {} as S): Fixture<S> {
  const names = Object.keys(starters);
  let gateway: TestGateway | undefined;
  const fakes = new Map<string, Fake>();

  async function stop() {
    const [gw, started] = [gateway, [...fakes.values()]];
    gateway = undefined;
    fakes.clear();
    await gw?.stop();
    await Promise.all(started.map((f) => f.close()));
  }

  beforeAll(async () => {
    const results = await Promise.allSettled(
      Object.entries(starters).map(async ([name, start]) => fakes.set(name, await start())),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      gateway = await startTestGateway();
    } catch (error) {
      await stop();
      throw error;
    }
  });
  beforeEach(() => {
    for (const fake of fakes.values()) fake.reset();
  });
  afterAll(stop);

  const handles: Record<string, object> = { gw: late('gw', () => gateway) };
  for (const name of names) handles[name] = late(name, () => fakes.get(name));
  return handles as Fixture<S>;
}
