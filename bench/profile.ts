import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  frameName,
  type Mark,
  type Profile,
  type ProfileNode,
  STRETCHES,
  splitByStretch,
} from './request-stretches';
import {
  agent,
  call,
  fourBudgetHeaders,
  GATEWAY_READY,
  gatewayEnv,
  machineLine,
  passthroughHeaders,
  pct,
  type StartedChild,
  settle,
  sort,
  startChild,
  throughput,
  UPSTREAM_AUTH,
  warmUp,
} from './support';

// `npm run bench:profile`: a CPU profile (`node --cpu-prof`) of the local server as `npm start` runs it,
// under load at concurrency 16 (a request under four budgets: workspace, API key, user and virtual key,
// then one without any), and a summary: the functions with the most self time, and the time spent under
// each package or folder, for the server's main thread and for the embedded DynamoDB's thread. Then the
// same server and a bare proxy hop one request at a time, each profiled with its samples split where the
// request crosses the process (bench/request-stretches.ts): what the gateway adds in each stretch (the
// way there, the upstream's answer, the way back, after the reply), against the floor of any proxy on
// this machine.

const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 3000);
const CONCURRENCY = 16;
const TOP = 20;
const STRETCH_TOP = 12;
/** The one-at-a-time profiles' sampling interval, µs, handed to bench/stretch-marks.mjs. */
const STRETCH_SAMPLE_US = 50;

/** Where a frame's code lives: a package, one of our folders, or Node itself. */
function areaOf(url: string): string {
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const ours = /\/(functions\/[^/]+|local|bench)\//.exec(url);
  if (ours) return ours[1] as string;
  return url.startsWith('node:') ? 'node' : url ? 'other' : '(native)';
}

function summarise(profile: Profile): void {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    total += dt;
  });
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = (nodes.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') idle += us;
    const name = frameName(frame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    // Inclusive per area: each area on the sample's stack counts once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const area = areaOf((nodes.get(at) as ProfileNode).callFrame.url);
      if (area === '(native)' || seen.has(area)) continue;
      seen.add(area);
      byArea.set(area, (byArea.get(area) ?? 0) + us);
    }
  }
  const busy = total - idle;
  const share = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  console.log(`  busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms sampled`);
  console.log('  most self time (share of busy time):');
  for (const [name, us] of [...byFunction]
    .filter(([n]) => !n.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP))
    console.log(`    ${share(us)}  ${name}`);
  console.log('  time under each package or folder (inclusive):');
  for (const [area, us] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, TOP))
    console.log(`    ${share(us)}  ${area}`);
}

/** Waits for a file the profiled server writes (bench/stretch-marks.mjs). */
async function fileAppears(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(path)) throw new Error(`${path} did not appear`);
}

/**
 * The gateway (API-key auth, a custom host, a usage-log entry a request) and a bare proxy hop, each
 * profiled over the same number of requests made one at a time, each sample put in its stretch.
 */
async function oneAtATime(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
  const marks = join(process.cwd(), 'bench/stretch-marks.mjs');
  const upstream = await startChild(['bench/fake-upstream.ts'], {}, /fake upstream on (\d+)/);
  const upstreamPort = upstream.match[1] as string;
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
  const servers: Array<{
    label: string;
    dir: string;
    child: StartedChild;
    one: () => Promise<unknown>;
  }> = [];
  try {
    for (const [label, args, env, ready, portGroup, headers] of [
      [
        'this gateway',
        ['local/main.ts'],
        gatewayEnv(dataDir),
        GATEWAY_READY,
        2,
        passthroughHeaders(`http://127.0.0.1:${upstreamPort}/v1`),
      ],
      ['bare hop', ['bench/bare-proxy.ts', upstreamPort], {}, /bare proxy on (\d+)/, 1, UPSTREAM_AUTH],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'gateway-stretches-'));
      const child = await startChild(
        ['--import', marks, ...args],
        {
          ...env,
          BENCH_STRETCH_DIR: dir,
          BENCH_STRETCH_SAMPLE_US: String(STRETCH_SAMPLE_US),
        },
        ready,
      );
      const port = Number(child.match[portGroup]);
      servers.push({ label, dir, child, one: () => call(port, '/v1/chat/completions', body, headers) });
    }
    await warmUp(...servers.map((server) => server.one));
    const results = [];
    for (const { label, dir, child, one } of servers) {
      child.child.kill('SIGUSR2');
      await fileAppears(join(dir, 'started'));
      await throughput(REQUESTS, 1, one);
      await settle();
      child.child.kill('SIGUSR2');
      await fileAppears(join(dir, 'marks.json'));
      // The profile is written first; the marks file says both are whole.
      const profile = JSON.parse(readFileSync(join(dir, 'profile.json'), 'utf8')) as Profile;
      const split = splitByStretch(
        profile,
        JSON.parse(readFileSync(join(dir, 'marks.json'), 'utf8')) as Mark[],
      );
      // What the profiler took, which can be several times the interval asked for (docs/performance.md
      // gives this machine's figures): each sample counts for its gap.
      const medianGapUs = pct(sort(profile.timeDeltas.slice(1)), 50);
      results.push({ label, medianGapUs, ...split });
    }
    console.log(
      `\nOne request at a time, ${REQUESTS} requests each, a CPU sample asked every ${STRETCH_SAMPLE_US} µs, split where each request crosses the process`,
    );
    console.log(
      `  (median gap between the samples taken: ${results.map(({ label, medianGapUs }) => `${label} ${medianGapUs} µs`).join(', ')}; each sample counts for its gap)`,
    );
    console.log(
      '  (way there: the request in until the upstream request is handed to its socket; way back: the upstream reply headers until the reply has gone)',
    );
    console.log(`  main thread, µs a request   ${STRETCHES.map((s) => s.padStart(16)).join('')}`);
    for (const { label, requests, busyUs } of results) {
      console.log(
        `  ${label.padEnd(26)} ${STRETCHES.map((s) => (busyUs[s] / requests).toFixed(1).padStart(16)).join('')}`,
      );
    }
    for (const { label, requests, busyUs, byFunction } of results) {
      for (const stretch of STRETCHES) {
        console.log(`  ${label}, ${stretch}: most self time (share of the stretch, µs a request)`);
        for (const [name, us] of [...byFunction[stretch]].sort((a, b) => b[1] - a[1]).slice(0, STRETCH_TOP))
          console.log(
            `    ${((100 * us) / busyUs[stretch]).toFixed(1).padStart(5)}%  ${(us / requests).toFixed(1).padStart(6)}  ${name}`,
          );
      }
    }
  } finally {
    agent.destroy();
    for (const { child, dir } of servers) {
      child.child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
    upstream.child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(machineLine());
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
  const profileDir = mkdtempSync(join(tmpdir(), 'gateway-cpuprofile-'));
  const upstream = await startChild(['bench/fake-upstream.ts'], {}, /fake upstream on (\d+)/);
  const upstreamUrl = `http://127.0.0.1:${upstream.match[1]}/v1`;
  const gateway = await startChild(
    ['--cpu-prof', '--cpu-prof-dir', profileDir, 'local/main.ts'],
    gatewayEnv(dataDir),
    GATEWAY_READY,
  );
  const url = gateway.match[1] as string;
  const port = Number(gateway.match[2]);
  try {
    const fourHeaders = await fourBudgetHeaders(url, 'profile', 'p', upstreamUrl);
    const budgeted = JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'ping' }],
      user: 'u1',
    });
    const plain = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
    const four = () => call(port, '/v1/chat/completions', budgeted, fourHeaders);
    const noneHeaders = passthroughHeaders(upstreamUrl);
    const none = () => call(port, '/v1/chat/completions', plain, noneHeaders);
    const fourRps = await throughput(REQUESTS, CONCURRENCY, four);
    const noneRps = await throughput(REQUESTS, CONCURRENCY, none);
    console.log(
      `\nCPU profile of the local server under load: ${REQUESTS} requests at concurrency ${CONCURRENCY} under four budgets (${fourRps.toFixed(0)} requests/s), then ${REQUESTS} without any (${noneRps.toFixed(0)} requests/s)`,
    );
  } finally {
    agent.destroy();
    const exited = new Promise((r) => gateway.child.once('exit', r));
    gateway.child.kill('SIGTERM');
    await exited;
    upstream.child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
  // One profile per thread, named CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: the main thread is
  // thread 0; the embedded DynamoDB's worker is the one running dynalite (tsx has a loader thread too). On
  // Node 22 `npm start` restarts itself in place (local/async-context-frame.ts) and the process it was
  // before writes a main-thread profile of its own: the one that served the load started last.
  const profiles = readdirSync(profileDir).map((f) => ({
    file: join(profileDir, f),
    thread: Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(f)?.[1]),
    profile: JSON.parse(readFileSync(join(profileDir, f), 'utf8')) as Profile,
  }));
  const main = profiles
    .filter((p) => p.thread === 0)
    .sort((a, b) => b.profile.startTime - a.profile.startTime)[0];
  const dynamo = profiles.find(
    (p) => p.thread !== 0 && p.profile.nodes.some((n) => n.callFrame.url.includes('/dynalite/')),
  );
  for (const [name, found] of [
    ['server main thread', main],
    ['embedded DynamoDB thread', dynamo],
  ] as const) {
    if (!found) continue;
    console.log(`\n${name} (${found.file})`);
    summarise(found.profile);
  }
}

await main();
await oneAtATime();
