import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid's default generator makes one crypto call per character; a pool refilled in one call is enough
// for ids that must be unique, not secret.
const pool = new Uint8Array(4096);
let next = pool.length;

function pooledRandom(): number {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}

/** A ULID, monotonic within a container: ids made in the same millisecond still sort in creation order. */
export const newId = monotonicFactory(pooledRandom);
