import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ReadableStream as OnDemand } from '../../functions/core/web-streams-on-demand';

// The stand-in Lambda bundles get for `node:stream/web`'s ReadableStream answers `instanceof` as Node's own.

describe('ReadableStream on demand', () => {
  it("takes Node's web streams for what they are, and nothing else", () => {
    expect(new globalThis.ReadableStream() instanceof OnDemand).toBe(true);
    expect(Readable.toWeb(Readable.from(['x'])) instanceof OnDemand).toBe(true);
    expect(Readable.from(['x']) instanceof OnDemand).toBe(false);
    const others: unknown[] = ['text', null, {}];
    for (const other of others) expect((other as object) instanceof OnDemand).toBe(false);
  });
});
