import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

// What the benchmarks share: child processes, one timed HTTP call, percentiles.

export const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

/** A child process the benches started, and what its ready line matched. */
export interface StartedChild {
  child: ChildProcess;
  match: RegExpExecArray;
}

/** Runs `node <args>` (TypeScript through tsx) and waits until its output matches `ready`. */
export function startChild(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  options: { tsx?: boolean } = {},
): Promise<StartedChild> {
  const child = spawn(process.execPath, [...(options.tsx === false ? [] : ['--import', 'tsx']), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) {
        // Once ready, stop holding what the child prints.
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve({ child, match: m });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => {
      out += d;
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}:\n${out}`)));
  });
}

export interface Timing {
  total: number;
  firstByte: number;
}

/** A JSON POST to 127.0.0.1 on the bench's shared keep-alive agent. */
export function postJson(
  port: number,
  path: string,
  payload: string,
  headers: Record<string, string>,
): http.RequestOptions {
  return {
    host: '127.0.0.1',
    port,
    path,
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
  };
}

/** One POST on the shared keep-alive agent: total time and time to the first body byte. */
export function call(
  port: number,
  path: string,
  payload: string,
  headers: Record<string, string>,
): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstByte = 0;
    const req = http.request(postJson(port, path, payload, headers), (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => {
        firstByte ||= performance.now() - t0;
        parts.push(d);
      });
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 400) {
          reject(new Error(`status ${res.statusCode}: ${Buffer.concat(parts).toString().slice(0, 300)}`));
        } else resolve({ total: performance.now() - t0, firstByte });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * What the figures were taken on: every server a bench starts runs on this same Node, and newer Nodes
 * move the figures (docs/performance.md gives runs on Node 20, 22 and 24).
 */
export const machineLine = () =>
  `Node ${process.version} (${process.arch}), ${availableParallelism()} CPUs, load average ${(loadavg()[0] ?? 0).toFixed(2)}`;

/**
 * A pause between loads: what a server still does after one (the gateway's last log writes, its store's
 * compaction) runs before the next load or timing, not during it.
 */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));

/**
 * Before anything is timed, each server serves `BENCH_WARMUP_REQUESTS` (5,000) requests at concurrency 16,
 * untimed, then the machine settles: the figures are those of a server that has been up a while, with
 * its hot code compiled (the gateway's first few thousand requests kept V8's compiler threads about
 * 0.35 ms of CPU a request busier), not of one still compiling.
 */
export async function warmUp(...servers: Array<() => Promise<unknown>>): Promise<void> {
  const requests = Number(process.env.BENCH_WARMUP_REQUESTS ?? 5000);
  for (const server of servers) {
    await throughput(requests, 16, server);
    await settle();
  }
}

/** Requests per second of `count` calls made `concurrency` at a time. */
export async function throughput(
  count: number,
  concurrency: number,
  one: () => Promise<unknown>,
): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await one();
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
export const sort = (xs: number[]) => [...xs].sort((a, b) => a - b);
/**
 * Percentile `p` of the per-round differences `a[i] - b[i]` of two interleaved series: the time one path
 * adds over the other at that percentile. A difference of the two series' own percentiles is not a
 * percentile of anything: where the baseline's tail is the longer, it can come out below the median.
 */
export function pairedPct(a: number[], b: number[], p: number): number {
  if (a.length !== b.length) throw new Error(`pairedPct: ${a.length} rounds against ${b.length}`);
  return pct(sort(a.map((x, i) => x - (b[i] as number))), p);
}
/**
 * The time path `a` adds over path `b`, two series of the same interleaved rounds: at p50 the medians'
 * difference (where the targets are taken), at p99 the p99 of the per-round differences (`pairedPct`).
 */
export function addedTime(a: number[], b: number[]): { p50: number; p99: number } {
  return { p50: pct(sort(a), 50) - pct(sort(b), 50), p99: pairedPct(a, b, 99) };
}
export const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
/** How many times `b` is `a`, as the benches print a ratio. */
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** A port free on loopback now, for a program that cannot listen on port 0 and say which it got. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process, in MB (Linux). */
export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

// Clock ticks per second of /proc's CPU times (USER_HZ); 100 on every common Linux build.
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/**
 * CPU time (user + system, every thread) a process has used so far, in ms (Linux): what
 * `process.cpuUsage()` says inside it, read from outside.
 */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1000;
  } catch {
    return Number.NaN;
  }
}

export const BENCH_ADMIN_KEY = 'gwk_bench_admin_key_0123456789';
/** The provider key the benches send the fake upstream (directly, through the bare hop or Portkey). */
const UPSTREAM_KEY = 'sk-bench';
export const UPSTREAM_AUTH = { authorization: `Bearer ${UPSTREAM_KEY}` };
/** Through the gateway on the bench's admin key, no virtual key; the provider key goes to `upstreamUrl`. */
export const passthroughHeaders = (upstreamUrl: string): Record<string, string> => ({
  'x-gateway-api-key': BENCH_ADMIN_KEY,
  'x-gateway-custom-host': upstreamUrl,
  ...UPSTREAM_AUTH,
});
/** Through the gateway on `apiKey` (the bench's admin key unless given) to the virtual key `slug`. */
export const virtualKeyHeaders = (slug: string, apiKey = BENCH_ADMIN_KEY): Record<string, string> => ({
  'x-gateway-api-key': apiKey,
  'x-gateway-provider': `@${slug}`,
});

/** An admin call to the gateway at `baseUrl` (its `/v1`) on the bench's admin key; any error status throws. */
async function adminCall(
  baseUrl: string,
  method: 'POST' | 'PATCH',
  path: string,
  payload: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-gateway-api-key': BENCH_ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A budget the benches never run out of: its checks and spend updates are on every request. */
const BENCH_BUDGET = 1_000_000;

/** A virtual key `slug` for the fake upstream at `upstreamUrl`, with a budget of `BENCH_BUDGET`. */
export const createBenchVirtualKey = (
  baseUrl: string,
  slug: string,
  upstreamUrl: string,
  workspace?: string,
) =>
  adminCall(baseUrl, 'POST', '/virtual-keys', {
    name: slug,
    slug,
    ...(workspace ? { workspace } : {}),
    provider: 'openai',
    key: UPSTREAM_KEY,
    custom_host: upstreamUrl,
    budget_limit: BENCH_BUDGET,
  });

/**
 * Four budgets on one request: a workspace `workspace` with a budget and a per-user one, an API key in it
 * with its own, and its virtual key `slug` with its own (the request names a `user`). Returns the headers
 * of a call on that API key through that virtual key.
 */
export async function fourBudgetHeaders(
  baseUrl: string,
  workspace: string,
  slug: string,
  upstreamUrl: string,
): Promise<Record<string, string>> {
  await adminCall(baseUrl, 'POST', '/workspaces', { name: workspace, slug: workspace });
  await adminCall(baseUrl, 'PATCH', `/workspaces/${workspace}`, {
    policy: { budget_limit: BENCH_BUDGET, user_limits: { budget_limit: BENCH_BUDGET } },
  });
  const { key } = await adminCall(baseUrl, 'POST', '/api-keys', {
    name: slug,
    workspace,
    policy: { budget_limit: BENCH_BUDGET },
  });
  await createBenchVirtualKey(baseUrl, slug, upstreamUrl, workspace);
  return virtualKeyHeaders(slug, String(key));
}

/** The local server as the benches run it: its own data dir, the bench's admin key, warnings only. */
export const gatewayEnv = (dataDir: string): Record<string, string> => ({
  PORT: '0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_ADMIN_KEY: BENCH_ADMIN_KEY,
  POWERTOOLS_LOG_LEVEL: 'ERROR',
  GATEWAY_LOG_LEVEL: 'warn',
});

/** The local server's ready line: its URL, then its port. */
export const GATEWAY_READY = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/v1)/;

export interface BenchStack {
  upstreamPort: number;
  gatewayPort: number;
  proxyPort: number;
  gatewayPid: number | undefined;
  proxyPid: number | undefined;
  stop(): void;
}

/**
 * The zero-latency fake upstream, the gateway as `npm start` runs it (no line per request on stdout:
 * the line costs a few µs and this measures the request path), and a bare proxy hop, each in its own
 * process, on a fresh data dir.
 */
export async function startBenchStack(): Promise<BenchStack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const upstream = await startChild(['bench/fake-upstream.ts'], {}, /fake upstream on (\d+)/);
  const upstreamPort = Number(upstream.match[1]);
  const gateway = await startChild(['local/main.ts'], gatewayEnv(dataDir), GATEWAY_READY);
  const proxy = await startChild(['bench/bare-proxy.ts', String(upstreamPort)], {}, /bare proxy on (\d+)/);
  return {
    upstreamPort,
    gatewayPort: Number(gateway.match[2]),
    proxyPort: Number(proxy.match[1]),
    gatewayPid: gateway.child.pid,
    proxyPid: proxy.child.pid,
    stop() {
      for (const started of [gateway, proxy, upstream]) started.child.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
