import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { FUNCTION_GROUPS } from '../functions/core/operations';
import { BUNDLE_FILE_NAME, esbuildOptions, startupBytes, totalBytes } from '../lib/bundling';
import { type FirstChunk, streamCall } from './first-chunk';
import {
  addedTime,
  agent,
  call,
  cpuMs,
  fmt,
  machineLine,
  pairedPct,
  passthroughHeaders,
  pct,
  ratio,
  sort,
  startBenchStack,
  throughput,
  UPSTREAM_AUTH,
  warmUp,
} from './support';

// `npm run bench`: gateway overhead against a zero-latency fake upstream on loopback, requests per second,
// added time to first streamed chunk, bundle sizes and cold import times. Gateway, upstream and this
// client each run in their own process. Figures vary with the machine; compare runs on the same one.

const PAIRS = Number(process.env.BENCH_PAIRS ?? 2000);
const WARMUP = 300;
const CONCURRENCY = 16;
const RPS_REQUESTS = Number(process.env.BENCH_RPS_REQUESTS ?? 4000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);
const STREAM_PAUSE_MS = 30;
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 9);

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
const streamBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'ping' }],
  stream: true,
});

async function main() {
  console.log(machineLine());
  const { upstreamPort, gatewayPort, proxyPort, gatewayPid, proxyPid, stop } = await startBenchStack();
  const gwHeaders = passthroughHeaders(`http://127.0.0.1:${upstreamPort}/v1`);
  const direct = () => call(upstreamPort, '/v1/chat/completions', body, UPSTREAM_AUTH);
  const viaGateway = () => call(gatewayPort, '/v1/chat/completions', body, gwHeaders);
  const viaProxy = () => call(proxyPort, '/v1/chat/completions', body, UPSTREAM_AUTH);

  try {
    await warmUp(viaProxy, viaGateway);
    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await viaProxy();
      await viaGateway();
    }
    // Interleaved, one request at a time, so every path sees the same machine state.
    const d: number[] = [];
    const p: number[] = [];
    const g: number[] = [];
    // Only the gateway calls run in the gateway's process, so its CPU time grows by theirs alone; the
    // same holds for the bare hop's process, whose CPU per request is the yardstick on this machine.
    const cpuBefore = cpuMs(gatewayPid);
    const proxyCpuBefore = cpuMs(proxyPid);
    for (let i = 0; i < PAIRS; i++) {
      d.push((await direct()).total);
      p.push((await viaProxy()).total);
      g.push((await viaGateway()).total);
    }
    const cpuPerRequest = (cpuMs(gatewayPid) - cpuBefore) / PAIRS;
    const proxyCpuPerRequest = (cpuMs(proxyPid) - proxyCpuBefore) / PAIRS;
    const ds = sort(d);
    const ps = sort(p);
    const gs = sort(g);
    console.log(`\nNon-streaming chat completion, ${PAIRS} interleaved pairs, concurrency 1, back to back`);
    console.log('  (each gateway call also writes its usage log after the reply, on this same machine)');
    console.log(`  upstream direct     p50 ${fmt(pct(ds, 50))}   p99 ${fmt(pct(ds, 99))}`);
    console.log(
      `  bare node proxy     p50 ${fmt(pct(ps, 50))}   p99 ${fmt(pct(ps, 99))}   (any proxy hop here)`,
    );
    console.log(`  through gateway     p50 ${fmt(pct(gs, 50))}   p99 ${fmt(pct(gs, 99))}`);
    const overhead = addedTime(g, d);
    const beyondBare = addedTime(g, p);
    console.log(
      `  gateway overhead    p50 ${fmt(overhead.p50)}   p99 ${fmt(overhead.p99)}   (targets: p50 < 1 ms, p99 < 5 ms)`,
    );
    console.log(`  beyond a bare hop   p50 ${fmt(beyondBare.p50)}   p99 ${fmt(beyondBare.p99)}`);

    console.log(
      `  gateway CPU         ${fmt(cpuPerRequest)} per request   (user + system of the gateway process; includes the embedded DynamoDB and the usage log write)`,
    );
    // A ratio of two processes measured over the same requests moves less than either with the machine.
    console.log(
      `  bare hop CPU        ${fmt(proxyCpuPerRequest)} per request   (the gateway's: ${ratio(cpuPerRequest, proxyCpuPerRequest)})`,
    );

    const rps = await throughput(RPS_REQUESTS, CONCURRENCY, viaGateway);
    console.log(
      `\nThroughput through the gateway at concurrency ${CONCURRENCY}: ${rps.toFixed(0)} requests/s`,
    );

    // Each streamed call starts once the one before has ended and the gateway's work after it (the
    // usage log written a few ms later) is over, so that no path is measured beside another's leftovers.
    const paths = [
      { name: 'upstream direct', port: upstreamPort, headers: UPSTREAM_AUTH },
      { name: 'bare node proxy', port: proxyPort, headers: UPSTREAM_AUTH },
      { name: 'through gateway', port: gatewayPort, headers: gwHeaders },
    ];
    const firstChunks = paths.map(() => [] as FirstChunk[]);
    // A non-streamed call in the same rhythm: each process has idled as long before it as before a stream.
    const pausedDirect: number[] = [];
    const pausedGateway: number[] = [];
    const pause = () => new Promise((r) => setTimeout(r, STREAM_PAUSE_MS));
    for (let i = 0; i < STREAMS; i++) {
      for (const [j, path] of paths.entries()) {
        firstChunks[j]?.push(await streamCall(path.port, streamBody, path.headers));
        await pause();
      }
      pausedDirect.push((await direct()).total);
      await pause();
      pausedGateway.push((await viaGateway()).total);
      await pause();
    }
    const p50 = (j: number, leg: keyof FirstChunk) =>
      pct(sort((firstChunks[j] ?? []).map((t) => t[leg])), 50);
    const firstBytes = (j: number) => (firstChunks[j] ?? []).map((t) => t.firstByte);
    const p99 = (j: number) => pct(sort(firstBytes(j)), 99);
    // The tail of what one path adds over another: p99 of the per-round differences (see `pairedPct`).
    const added99 = (j: number, over: number) => fmt(pairedPct(firstBytes(j), firstBytes(over), 99));
    const row = (label: string, at: (leg: keyof FirstChunk) => number, tail: string) =>
      console.log(
        `  ${label.padEnd(19)} p50 ${fmt(at('firstByte'))}   p99 ${tail}   way there ${fmt(at('there'))}   way back ${fmt(at('back'))}`,
      );
    console.log(`\nStreaming: time to first chunk, ${STREAMS} interleaved rounds, one call at a time`);
    console.log(
      '  (way there: sent until the upstream has the request; way back: the upstream writes its first chunk until it arrives; p50 of each)',
    );
    for (const [j, path] of paths.entries()) row(path.name, (leg) => p50(j, leg), fmt(p99(j)));
    row('added by gateway', (leg) => p50(2, leg) - p50(0, leg), `${added99(2, 0)}   (target: < 0.5 ms)`);
    row('beyond a bare hop', (leg) => p50(2, leg) - p50(1, leg), added99(2, 1));
    console.log(
      `  a non-streamed call in the same rhythm: gateway overhead p50 ${fmt(addedTime(pausedGateway, pausedDirect).p50)}   (back to back above: ${fmt(overhead.p50)})`,
    );
  } finally {
    stop();
    agent.destroy();
  }

  console.log(
    `\nBundles (esbuild, as deployed): what a cold start loads (index.mjs and its static chunks), the whole package with lazy chunks, and cold import time (median of ${COLD_RUNS} fresh processes, each importing the whole static graph)`,
  );
  const outDir = mkdtempSync(join(tmpdir(), 'gateway-bundles-'));
  for (const [group, def] of Object.entries(FUNCTION_GROUPS)) {
    const result = await build(esbuildOptions(def.entry, join(outDir, group), false));
    const meta = result.metafile as Metafile;
    const outfile = join(outDir, group, BUNDLE_FILE_NAME);
    // Wall time, and the process's CPU time over the same span: the latter moves less with a busy machine.
    const script = `globalThis.awslambda={streamifyResponse:(h)=>h,HttpResponseStream:{from:(s)=>s}};const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(outfile)});const u=process.cpuUsage(c);console.log(performance.now()-t,(u.user+u.system)/1000)`;
    const times: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, TABLE_CONTROL: 'c', TABLE_LOGS: 'l', AWS_REGION: 'us-east-1' },
        encoding: 'utf8',
      });
      const [wall, used] = run.stdout.trim().split(' ').map(Number);
      times.push(wall as number);
      cpu.push(used as number);
    }
    console.log(
      `  ${group.padEnd(9)} ${(startupBytes(meta) / 1024).toFixed(1).padStart(7)} KB at start, ${(totalBytes(meta) / 1024).toFixed(1).padStart(7)} KB package   cold import ${fmt(pct(sort(times), 50))} (CPU ${fmt(pct(sort(cpu), 50))})   (chat targets: 300 KB, 60 ms)`,
    );
  }
  rmSync(outDir, { recursive: true, force: true });
}

await main();
