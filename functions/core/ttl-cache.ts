// Every per-container cache of the process, held weakly: a local server started again in the same process
// (tests do) is a new container, and must not answer from what the last one's store held.
const containerCaches = new Set<WeakRef<{ clear(): void }>>();

/** A map that lives as long as its owner, emptied with every other by `clearContainerCaches`. */
export function containerMap<K, V>(): Map<K, V> {
  const map = new Map<K, V>();
  containerCaches.add(new WeakRef(map));
  return map;
}

/** Empties every per-container cache of the process (a local server's start). */
export function clearContainerCaches(): void {
  for (const ref of containerCaches) {
    const cache = ref.deref();
    if (cache) cache.clear();
    else containerCaches.delete(ref);
  }
}

/**
 * A per-container cache of values read from the store: each entry lives `ttlMs`, the oldest entry gives
 * way when `maxEntries` is reached, and the container that changes a value drops it at once.
 */
export class TtlCache<V> {
  private readonly entries = containerMap<string, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached value, or the one `load` reads (cached unless `keep` refuses it). */
  async getOrLoad(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = await load();
    if (keep(value)) {
      if (!hit && this.entries.size >= this.maxEntries) {
        this.entries.delete(this.entries.keys().next().value as string);
      }
      this.entries.set(key, { value, expires: now + this.ttlMs });
    }
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
