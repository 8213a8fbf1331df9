// Gateway overhead of a chat completion with (a) the provider key passed through in Authorization and
// no budget, (b) a virtual key with a budget (one reservation before the call, one settlement after the
// last byte), and (c) a request under four budgets: workspace, API key, end user and virtual key (four
// reservations issued together, and four settlements). A zero-latency fake upstream on loopback.
//
// The overhead figures come from the local server in its own process (as `npm start` runs it, and as in
// `bench/run.ts` and `bench:peer`), the variants interleaved one request at a time, back to back, in
// alternating order; differences are medians of the per-round differences. Overhead = latency through
// the gateway minus the p50 of the same call made to the upstream directly. (Timed from inside the
// gateway's own process, a request would also count the work the gateway does after its reply, which
// runs before this process's client reads that reply: a virtual key's settlement then looked like 0.5 ms
// of latency that a client in another process does not see.)
//
// Then where each variant's time goes: CPU and wall time per request by stage of the request path
// (`functions/core/stage-clock.ts`), from a gateway started in this process, requests 15 ms apart so each
// stage's CPU is its own.
// `npx tsx bench/virtual-key-overhead.ts [requests per variant]`
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  addedTime,
  BENCH_ADMIN_KEY,
  createBenchVirtualKey,
  fourBudgetHeaders,
  GATEWAY_READY,
  gatewayEnv,
  pairedPct,
  passthroughHeaders,
  pct as percentile,
  agent as sharedAgent,
  sort,
  startChild,
  call as timedCall,
  UPSTREAM_AUTH,
  virtualKeyHeaders,
  warmUp,
} from './support';

const N = Number(process.argv[2] ?? 1000);
const WARMUP = 200;
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
// Read when the gateway's modules load, so set before they are imported.
process.env.GATEWAY_STAGE_TIMING = '1';
const { startGateway } = await import('../local/server');
const { STAGES, takeStageTotals } = await import('../functions/core/stage-clock');

const upstream = await startChild(['bench/fake-upstream.ts'], {}, /fake upstream on (\d+)/);
const upstreamPort = Number(upstream.match[1]);
const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const userBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hi' }],
  user: 'bench-user',
});
const VARIANTS = ['passthrough', 'virtualKey', 'fourBudgets'] as const;
type Variant = (typeof VARIANTS)[number];
const LABELS = {
  passthrough: '(a) passthrough, no budget',
  virtualKey: '(b) virtual key with budget',
  fourBudgets: '(c) four budgets',
} as const;

/** Creates the virtual keys, workspace and API key the variants use; returns each variant's call. */
async function setUp(
  baseUrl: string,
): Promise<Record<Variant, { headers: Record<string, string>; payload: string }>> {
  await createBenchVirtualKey(baseUrl, 'bench', upstreamUrl);
  const fourHeaders = await fourBudgetHeaders(baseUrl, 'bench-ws', 'bench4', upstreamUrl);
  return {
    passthrough: { headers: passthroughHeaders(upstreamUrl), payload: body },
    virtualKey: { headers: virtualKeyHeaders('bench'), payload: body },
    fourBudgets: {
      headers: fourHeaders,
      payload: userBody,
    },
  };
}

/** The `p`th percentile of unsorted samples. */
const pct = (xs: number[], p: number) => percentile(sort(xs), p);

type Calls = Awaited<ReturnType<typeof setUp>>;
/** One timed chat completion of a variant to the gateway on `port`, in ms. */
const chat = (port: number, calls: Calls) => (v: Variant) => () =>
  timedCall(port, '/v1/chat/completions', calls[v].payload, calls[v].headers).then((t) => t.total);

// 1. Overhead: the local server in its own process.
const serverDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
const server = await startChild(['local/main.ts'], gatewayEnv(serverDir), GATEWAY_READY);
const serverPort = Number(server.match[2]);
const viaServer = chat(serverPort, await setUp(String(server.match[1])));
const direct = () =>
  timedCall(upstreamPort, '/v1/chat/completions', body, UPSTREAM_AUTH).then((t) => t.total);
await warmUp(...VARIANTS.map(viaServer));
const samples: Record<Variant | 'direct', number[]> = {
  passthrough: [],
  virtualKey: [],
  fourBudgets: [],
  direct: [],
};
const paths = [['direct', direct], ...VARIANTS.map((v) => [v, viaServer(v)] as const)] as const;
for (let i = 0; i < WARMUP + N; i++) {
  // One request at a time, back to back, in alternating order: every variant sees the same machine state,
  // and each request's after-reply work falls as often before one variant as before another.
  const round: Partial<Record<Variant | 'direct', number>> = {};
  for (const [name, run] of i % 2 ? paths : [...paths].reverse()) round[name] = await run();
  if (i < WARMUP) continue;
  for (const [name] of paths) samples[name].push(round[name] as number);
}
server.child.kill('SIGTERM');

const base = pct(samples.direct, 50);
console.log(
  `requests per variant: ${N} (after ${WARMUP} warm-up), the local server in its own process, direct upstream p50 ${base.toFixed(3)} ms`,
);
console.log('variant                      overhead p50 (ms)   overhead p99 (ms)');
for (const name of VARIANTS) {
  const label = LABELS[name];
  const added = addedTime(samples[name], samples.direct);
  console.log(`${label.padEnd(29)}${added.p50.toFixed(3).padStart(17)}${added.p99.toFixed(3).padStart(20)}`);
}
// Median of the per-round differences: both calls of a pair ran moments apart, under the same load.
const diff = (x: number[], y: number[]) => pairedPct(x, y, 50).toFixed(3);
console.log(
  `difference (b) - (a) at p50: ${diff(samples.virtualKey, samples.passthrough)} ms   (target: 0.5 ms)`,
);
console.log(
  `four reservations against none, (c) - (a) at p50: ${diff(samples.fourBudgets, samples.passthrough)} ms`,
);
console.log(
  `four reservations against one, (c) - (b) at p50: ${diff(samples.fourBudgets, samples.virtualKey)} ms`,
);

// 2. Where the time goes, by stage: a gateway in this process, whose stage clock this process reads.
const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
const gateway = await startGateway({
  port: 0,
  dataDir,
  inMemory: true,
  adminKey: BENCH_ADMIN_KEY,
  requestLog: () => undefined,
});
const viaGateway = chat(gateway.port, await setUp(gateway.url));

const stageCpuUs = new Map<string, number>();
const stageWallMs = new Map<string, number>();
/** Adds the stages of the request just served to its variant's totals. */
function collectStages(variant: Variant) {
  for (const [stage, total] of takeStageTotals()) {
    const key = `${variant} ${stage}`;
    stageCpuUs.set(key, (stageCpuUs.get(key) ?? 0) + total.cpuUs);
    stageWallMs.set(key, (stageWallMs.get(key) ?? 0) + total.wallMs);
  }
}

// The spend settlements and the log write run after the last byte (locally within GATEWAY_WRITE_BATCH_MS,
// 5 ms); a short pause lets them finish so that one request's stages do not take in the next one's.
const settled = () => new Promise((r) => setTimeout(r, 15));
await warmUp(...VARIANTS.map(viaGateway));
for (let i = 0; i < WARMUP + N; i++) {
  for (const v of VARIANTS) {
    takeStageTotals();
    await viaGateway(v)();
    await settled();
    if (i >= WARMUP) collectStages(v);
  }
}

console.log(
  '\nPer request, by stage (a gateway in this process, requests 15 ms apart): CPU µs (all threads: the embedded DynamoDB counts where it was waited for) / wall ms',
);
console.log(`${'stage'.padEnd(20)}${VARIANTS.map((v) => LABELS[v].slice(0, 3).padStart(20)).join('')}`);
const perRequest = (m: Map<string, number>, v: Variant, s: string) => (m.get(`${v} ${s}`) ?? 0) / N;
for (const stage of [...STAGES, 'total'] as const) {
  const cell = (v: Variant) => {
    const pick = (m: Map<string, number>) =>
      stage === 'total' ? STAGES.reduce((sum, s) => sum + perRequest(m, v, s), 0) : perRequest(m, v, stage);
    return `${pick(stageCpuUs).toFixed(0)} / ${pick(stageWallMs).toFixed(3)}`.padStart(20);
  };
  console.log(`${stage.padEnd(20)}${VARIANTS.map(cell).join('')}`);
}

sharedAgent.destroy();
await gateway.close();
upstream.child.kill('SIGTERM');
rmSync(dataDir, { recursive: true, force: true });
rmSync(serverDir, { recursive: true, force: true });
