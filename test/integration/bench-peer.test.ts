import { describe, expect, it } from 'vitest';
import { MACHINE_LINE, MS, SMALL_BENCH, section, X } from '../support/bench-output';
import { runScript } from '../support/local-process';

// `npm run bench:peer` run end to end at a small size: the fake upstream, the bare hop, this gateway and
// Portkey's gateway started on 127.0.0.1, every figure printed for each, and this gateway's figures as
// ratios to Portkey's and to the bare hop's. Only what is printed is checked, never a timing.

describe('npm run bench:peer', () => {
  it('prints each figure for the bare hop, this gateway and Portkey, with ratios to Portkey and the bare hop', async () => {
    const { code, out } = await runScript(['bench/peer.ts'], SMALL_BENCH, 100_000);
    expect(code, out).toBe(0);
    expect(out).toMatch(MACHINE_LINE);

    const overhead = section(out, 'Non-streaming chat completion');
    for (const name of ['bare node proxy', 'this gateway', 'Portkey 1.15']) {
      expect(overhead).toMatch(new RegExp(`${name}\\s+p50 ${MS}\\s+p99 ${MS}`));
    }
    expect(overhead).toMatch(new RegExp(`this gateway / Portkey\\s+p50 ${X}\\s+p99 ${X}`));
    expect(overhead).toMatch(new RegExp(`this gateway / bare hop\\s+p50 ${X}\\s+p99 ${X}`));

    const streaming = section(out, 'Streaming: time to first chunk added');
    // The floor under the hops: a relay that pipes bytes without parsing HTTP, timed in the same rounds.
    expect(streaming).toMatch(new RegExp(`raw TCP relay\\s+p50 ${MS}\\s+p99 ${MS}`));
    expect(streaming).toMatch(new RegExp(`bare node proxy\\s+p50 ${MS}\\s+p99 ${MS}`));
    expect(streaming).toMatch(new RegExp(`this gateway\\s+p50 ${MS}\\s+p99 ${MS}`));
    // Portkey 1.15's streaming answers 500 (it appends headers to an immutable fetch Response): the
    // bench says so and still compares this gateway with the bare hop.
    expect(streaming).toMatch(new RegExp(`Portkey 1\\.15\\s+(p50 ${MS}\\s+p99 ${MS}|failed: .+)`));
    expect(streaming).toMatch(
      new RegExp(`this gateway / Portkey\\s+(p50 ${X}\\s+p99 ${X}|none \\(Portkey's streaming failed\\))`),
    );
    expect(streaming).toMatch(new RegExp(`this gateway / bare hop\\s+p50 ${X}\\s+p99 ${X}`));

    const throughput = section(out, 'Throughput');
    for (const concurrency of [16, 64]) {
      expect(throughput).toMatch(
        new RegExp(
          `concurrency ${concurrency}\\s+bare hop \\d+ req/s\\s+this gateway \\d+ req/s\\s+Portkey \\d+ req/s\\s+this/Portkey ${X} \\(target >= 1\\.5x\\)\\s+this/bare hop ${X}`,
        ),
      );
    }

    const memory = section(out, 'Memory after load (RSS)');
    for (const name of ['bare node proxy', 'this gateway', 'Portkey 1.15']) {
      expect(memory).toMatch(new RegExp(`${name}\\s+\\d+ MB`));
    }
    expect(memory).toMatch(new RegExp(`this gateway / Portkey ${X}\\s+this gateway / bare hop ${X}`));
  }, 120_000);
});
