// Gateway overhead of a chat completion with (a) the provider key passed through in Authorization and
// no budget, (b) a virtual key with a budget (one reservation before the call, one settlement after the
// last byte), and (c) a request under four budgets: workspace, API key, end user and virtual key (four
// reservations issued together, and four settlements). Local gateway and a zero-latency fake upstream on
// loopback; runs interleaved and warm; differences are medians of per-round differences.
// Overhead = latency through the gateway minus the p50 of the same call made to the upstream directly.
// With it, where each variant's time goes: CPU and wall time per request by stage of the request path
// (`functions/core/stage-clock.ts`; requests run one at a time, so each stage's CPU is its own).
// `npx tsx bench/virtual-key-overhead.ts [requests per variant]`
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, throughput } from './support';

const N = Number(process.argv[2] ?? 1000);
const WARMUP = 200;
const ADMIN = 'gwk_bench_admin_key_0123456789';
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
// Read when the gateway's modules load, so set before they are imported.
process.env.GATEWAY_STAGE_TIMING = '1';
const { startGateway } = await import('../local/server');
const { STAGES, takeStageTotals } = await import('../functions/core/stage-clock');

// The upstream runs in its own process, as in `bench/run.ts`: its work is then not counted in the stages
// of the gateway, whose CPU this process measures.
const upstream = await startChild(['bench/fake-upstream.ts'], {}, /fake upstream on (\d+)/);
const upstreamUrl = `http://127.0.0.1:${upstream.match[1]}/v1`;

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
const gateway = await startGateway({
  port: 0,
  dataDir,
  inMemory: true,
  adminKey: ADMIN,
  requestLog: () => undefined,
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

function call(
  url: string,
  headers: Record<string, string>,
  payload = body,
  through = agent,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      url,
      { method: 'POST', agent: through, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 400) reject(new Error(`status ${res.statusCode}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const created = await fetch(`${gateway.url}/virtual-keys`, {
  method: 'POST',
  headers: { 'x-gateway-api-key': ADMIN, 'content-type': 'application/json' },
  body: JSON.stringify({
    name: 'bench',
    slug: 'bench',
    provider: 'openai',
    key: 'sk-bench',
    custom_host: upstreamUrl,
    budget_limit: 1_000_000,
  }),
});
if (created.status !== 201) throw new Error(`virtual key: ${created.status} ${await created.text()}`);

async function admin(path: string, payload: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: path.startsWith('/workspaces/') ? 'PATCH' : 'POST',
    headers: { 'x-gateway-api-key': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
const BIG = 1_000_000;
await admin('/workspaces', { name: 'bench-ws', slug: 'bench-ws' });
await admin('/workspaces/bench-ws', { policy: { budget_limit: BIG, user_limits: { budget_limit: BIG } } });
const wsKey = String(
  (await admin('/api-keys', { name: 'bench', workspace: 'bench-ws', policy: { budget_limit: BIG } })).key,
);
await admin('/virtual-keys', {
  name: 'bench4',
  slug: 'bench4',
  workspace: 'bench-ws',
  provider: 'openai',
  key: 'sk-bench',
  custom_host: upstreamUrl,
  budget_limit: BIG,
});
const userBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hi' }],
  user: 'bench-user',
});

const chatUrl = `${gateway.url}/chat/completions`;
const variants = {
  passthrough: {
    'x-gateway-api-key': ADMIN,
    authorization: 'Bearer sk-bench',
    'x-gateway-custom-host': upstreamUrl,
  },
  virtualKey: { 'x-gateway-api-key': ADMIN, 'x-gateway-provider': '@bench' },
  fourBudgets: { 'x-gateway-api-key': wsKey, 'x-gateway-provider': '@bench4' },
};
type Variant = keyof typeof variants;
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
const samples: Record<Variant | 'direct', number[]> = {
  passthrough: [],
  virtualKey: [],
  fourBudgets: [],
  direct: [],
};

// The spend settlements and the log write run after the last byte (locally within GATEWAY_WRITE_BATCH_MS,
// 5 ms); a short pause lets them finish so that one request's after-send work is not measured as the
// next request's latency.
const settled = () => new Promise((r) => setTimeout(r, 15));
// First each variant serves BENCH_WARMUP_REQUESTS requests 16 at a time, untimed: the figures are then
// those of a warmed server (V8 has compiled every variant's hot path), as in the other benches.
const WARMUP_LOAD = Number(process.env.BENCH_WARMUP_REQUESTS ?? 5000);
const warmAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
for (const [variant, headers] of Object.entries(variants)) {
  const payload = variant === 'fourBudgets' ? userBody : body;
  await throughput(WARMUP_LOAD, 16, () => call(chatUrl, headers, payload, warmAgent));
}
warmAgent.destroy();
await new Promise((r) => setTimeout(r, 1000));
for (let i = 0; i < WARMUP + N; i++) {
  const direct = await call(`${upstreamUrl}/chat/completions`, {});
  takeStageTotals();
  const a = await call(chatUrl, variants.passthrough);
  await settled();
  if (i >= WARMUP) collectStages('passthrough');
  const b = await call(chatUrl, variants.virtualKey);
  await settled();
  if (i >= WARMUP) collectStages('virtualKey');
  const c = await call(chatUrl, variants.fourBudgets, userBody);
  await settled();
  if (i >= WARMUP) collectStages('fourBudgets');
  if (i >= WARMUP) {
    samples.direct.push(direct);
    samples.passthrough.push(a);
    samples.virtualKey.push(b);
    samples.fourBudgets.push(c);
  }
}

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const base = pct(samples.direct, 50);
console.log(
  `requests per variant: ${N} (after ${WARMUP} warm-up), direct upstream p50 ${base.toFixed(3)} ms`,
);
console.log('variant                      overhead p50 (ms)   overhead p99 (ms)');
const LABELS = {
  passthrough: '(a) passthrough, no budget',
  virtualKey: '(b) virtual key with budget',
  fourBudgets: '(c) four budgets',
} as const;
for (const name of ['passthrough', 'virtualKey', 'fourBudgets'] as const) {
  const label = LABELS[name];
  console.log(
    `${label.padEnd(29)}${(pct(samples[name], 50) - base).toFixed(3).padStart(17)}${(pct(samples[name], 99) - base).toFixed(3).padStart(20)}`,
  );
}
// Median of the per-round differences: both calls of a pair ran moments apart, under the same load.
const diff = (x: number[], y: number[]) =>
  pct(
    x.map((v, i) => v - (y[i] as number)),
    50,
  ).toFixed(3);
console.log(`difference (b) - (a) at p50: ${diff(samples.virtualKey, samples.passthrough)} ms`);
console.log(
  `four reservations against none, (c) - (a) at p50: ${diff(samples.fourBudgets, samples.passthrough)} ms`,
);
console.log(
  `four reservations against one, (c) - (b) at p50: ${diff(samples.fourBudgets, samples.virtualKey)} ms`,
);

const VARIANTS = ['passthrough', 'virtualKey', 'fourBudgets'] as const;
console.log(
  '\nPer request, by stage: CPU µs (all threads: the embedded DynamoDB counts where it was waited for) / wall ms',
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

agent.destroy();
await gateway.close();
upstream.child.kill('SIGTERM');
rmSync(dataDir, { recursive: true, force: true });
