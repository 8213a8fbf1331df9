import { describe, expect, it } from 'vitest';
import { STAGES } from '../../functions/core/stage-clock';
import { MACHINE_LINE, MS, SMALL_BENCH, section, X } from '../support/bench-output';
import { runScript } from '../support/local-process';

// `npm run bench` is five scripts; each runs here end to end at a small size (every server it needs
// started on 127.0.0.1 and stopped), and each figure it prints is checked to be there, never its value.

const FUNCTIONS = ['chat', 'control', 'logs', 'responses', 'media', 'files', 'prompts', 'dashboard'];
// The three calls of each interleaved round, then what the gateway adds.
const LEGS = ['upstream direct', 'bare node proxy', 'through gateway'];
const US = String.raw`[\d.]+ µs`;

async function bench(args: string[]): Promise<string> {
  const { code, out } = await runScript(args, SMALL_BENCH, 100_000);
  expect(code, out).toBe(0);
  return out;
}

describe('npm run bench', () => {
  it('bench/run.ts: overhead, CPU against a bare hop, requests/s, first chunk, bundles and cold imports', async () => {
    const out = await bench(['bench/run.ts']);
    expect(out).toMatch(MACHINE_LINE);

    const overhead = section(out, 'Non-streaming chat completion');
    for (const row of [...LEGS, 'gateway overhead', 'beyond a bare hop']) {
      expect(overhead).toMatch(new RegExp(`${row}\\s+p50 ${MS}\\s+p99 ${MS}`));
    }
    expect(overhead).toMatch(/gateway CPU\s+\d+\.\d{3} ms per request/);
    expect(overhead).toMatch(
      new RegExp(`bare hop CPU\\s+\\d+\\.\\d{3} ms per request\\s+\\(the gateway's: ${X}\\)`),
    );
    expect(out).toMatch(/Throughput through the gateway at concurrency 16: \d+ requests\/s/);

    const streaming = section(out, 'Streaming: time to first chunk');
    for (const row of [...LEGS, 'added by gateway', 'beyond a bare hop']) {
      expect(streaming).toMatch(
        new RegExp(`${row}\\s+p50 ${MS}\\s+p99 ${MS}.*way there ${MS}\\s+way back ${MS}`),
      );
    }
    expect(streaming).toMatch(
      new RegExp(
        `a non-streamed call in the same rhythm: gateway overhead p50 ${MS}\\s+\\(back to back above: ${MS}\\)`,
      ),
    );

    const bundles = section(out, 'Bundles (esbuild, as deployed)');
    for (const name of FUNCTIONS) {
      expect(bundles).toMatch(
        new RegExp(
          `${name}\\s+\\d+\\.\\d KB at start,\\s+\\d+\\.\\d KB package\\s+cold import ${MS} \\(CPU ${MS}\\)`,
        ),
      );
    }
  }, 120_000);

  it('bench/virtual-key-overhead.ts: overhead with no budget, one and four, their differences, and the stage table', async () => {
    const out = await bench(['bench/virtual-key-overhead.ts', '20']);
    for (const variant of [
      '\\(a\\) passthrough, no budget',
      '\\(b\\) virtual key with budget',
      '\\(c\\) four budgets',
    ]) {
      expect(out).toMatch(new RegExp(`${variant}\\s+-?\\d+\\.\\d{3}\\s+-?\\d+\\.\\d{3}`));
    }
    expect(out).toMatch(new RegExp(`difference \\(b\\) - \\(a\\) at p50: ${MS}`));
    expect(out).toMatch(new RegExp(`four reservations against none, \\(c\\) - \\(a\\) at p50: ${MS}`));
    expect(out).toMatch(new RegExp(`four reservations against one, \\(c\\) - \\(b\\) at p50: ${MS}`));
    const stages = section(out, 'Per request, by stage');
    const cell = String.raw`\d+ / \d+\.\d{3}`;
    for (const stage of [...STAGES, 'total']) {
      const row = new RegExp(`^${stage}\\s+(${cell})\\s+(${cell})\\s+(${cell})$`, 'm').exec(stages);
      expect(row, `no row for ${stage} in:\n${stages}`).not.toBeNull();
      // Every stage was marked on every variant's path: its wall time is never nothing.
      for (const value of row?.slice(1) ?? []) expect(Number(value.split(' / ')[1])).toBeGreaterThan(0);
    }
  }, 120_000);

  it('bench/jwt-auth.ts: cached API key against cached JWT', async () => {
    const out = await bench(['bench/jwt-auth.ts']);
    for (const row of ['API key', 'JWT \\(RS256\\)']) {
      expect(out).toMatch(new RegExp(`${row}\\s+mean\\s+${US}\\s+p50\\s+${US}\\s+p99\\s+${US}`));
    }
    expect(out).toMatch(/JWT - API key: mean -?[\d.]+ µs, p99 -?[\d.]+ µs/);
  }, 60_000);

  it('bench/provider-translation.ts: a chunk translated, an event into Anthropic format, the bundle by provider', async () => {
    const out = await bench(['bench/provider-translation.ts']);
    expect(out).toMatch(/anthropic\s+[\d.]+ µs\/chunk/);
    expect(out).toMatch(/bedrock\s+[\d.]+ µs\/chunk/);
    expect(out).toMatch(/messages\s+[\d.]+ µs\/event/);
    expect(out).toMatch(/total\s+\d+\.\d KB/);
  }, 60_000);

  it('bench/guardrails.ts: checks on a 4 KB prompt, on 1 MB, and hostile patterns', async () => {
    const out = await bench(['bench/guardrails.ts']);
    expect(out).toMatch(/ten regex\/PII checks on a 4 KB prompt, \d+ runs: p50 [\d.]+ ms, p99 [\d.]+ ms/);
    expect(out).toMatch(/built-in checks on 1 MB, CPU time.*: pii email [\d.]+ ms/);
    expect(out).toMatch(/hostile caller patterns on 1 MB, CPU time.*: \(a\+\)\+\$ [\d.]+ ms/);
  }, 60_000);
});
