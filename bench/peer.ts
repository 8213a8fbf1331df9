import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  addedTime,
  agent,
  call,
  createBenchVirtualKey,
  fmt,
  freePort,
  machineLine,
  ratio,
  rssMb,
  type StartedChild,
  settle,
  startBenchStack,
  startChild,
  throughput,
  UPSTREAM_AUTH,
  virtualKeyHeaders,
  warmUp,
} from './support';

// `npm run bench:peer`: this gateway beside Portkey's open-source gateway (`@portkey-ai/gateway`, a
// devDependency) and a bare node:http proxy hop, against the same zero-latency fake upstream, in one
// interleaved run on this machine. This gateway runs as users run it: API-key auth, a virtual key with a
// budget, and a usage-log entry per request. Portkey's open-source build logs nothing.

const PAIRS = Number(process.env.BENCH_PAIRS ?? 1000);
const WARMUP = 200;
// Each throughput figure is the mean of this many runs, in alternating order between the servers: on a
// shared machine one run of a few seconds moves by a fifth from the next, more than the servers differ.
const RPS_ROUNDS = Number(process.env.BENCH_RPS_ROUNDS ?? 4);
const RPS_REQUESTS = Number(process.env.BENCH_RPS_REQUESTS ?? 3000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 100);

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
const streamBody = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'ping' }],
  stream: true,
});

function portkeyEntry(): string {
  const require = createRequire(import.meta.url);
  const entry = join(dirname(require.resolve('@portkey-ai/gateway/package.json')), 'build/start-server.js');
  if (!existsSync(entry)) throw new Error(`Portkey's gateway is not installed (${entry}): run npm ci`);
  return entry;
}

/** The start of a line comparing this gateway with another server, padded so the figures line up. */
const ratioLabel = (other: string) => `  this gateway / ${other.padEnd(8)}  `;

/** This gateway's added time as ratios to another server's, p50 and p99, with the target if there is one. */
function ratioLine(
  other: string,
  ours: ReturnType<typeof addedTime>,
  theirs: ReturnType<typeof addedTime>,
  target?: string,
): string {
  const line = `${ratioLabel(other)}p50 ${ratio(ours.p50, theirs.p50)}   p99 ${ratio(ours.p99, theirs.p99)}`;
  return target ? `${line}   (${target})` : line;
}

async function main() {
  console.log(machineLine());
  const { upstreamPort, gatewayPort, proxyPort, gatewayPid, proxyPid, stop } = await startBenchStack();
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
  const portkeyPort = await freePort();
  // Started inside the try, so that a child that fails to start still has the others stopped.
  let portkey: StartedChild | undefined;
  let relay: StartedChild | undefined;
  try {
    portkey = await startChild(
      [portkeyEntry(), `--port=${portkeyPort}`, '--headless'],
      { NODE_ENV: 'production' },
      /Ready for connections/,
      { tsx: false },
    );
    relay = await startChild(['bench/tcp-relay.ts', String(upstreamPort)], {}, /tcp relay on (\d+)/);
    const relayPort = Number(relay.match[1]);

    // A virtual key with a budget that never runs out here: the key lookup, the budget and the
    // spend update are all on every request.
    await createBenchVirtualKey(`http://127.0.0.1:${gatewayPort}/v1`, 'bench', upstreamUrl);
    const direct = () => call(upstreamPort, '/v1/chat/completions', body, UPSTREAM_AUTH);
    const viaProxy = () => call(proxyPort, '/v1/chat/completions', body, UPSTREAM_AUTH);
    const viaRelay = () => call(relayPort, '/v1/chat/completions', body, UPSTREAM_AUTH);
    const gwHeaders = virtualKeyHeaders('bench');
    const viaGateway = () => call(gatewayPort, '/v1/chat/completions', body, gwHeaders);
    const pkHeaders = {
      ...UPSTREAM_AUTH,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstreamUrl,
    };
    const viaPortkey = () => call(portkeyPort, '/v1/chat/completions', body, pkHeaders);

    await warmUp(viaProxy, viaGateway, viaPortkey, viaRelay);
    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await viaProxy();
      await viaGateway();
      await viaPortkey();
    }
    const d: number[] = [];
    const p: number[] = [];
    const g: number[] = [];
    const k: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      d.push((await direct()).total);
      p.push((await viaProxy()).total);
      g.push((await viaGateway()).total);
      k.push((await viaPortkey()).total);
    }
    const [bareAdded, gatewayAdded, portkeyAdded] = [addedTime(p, d), addedTime(g, d), addedTime(k, d)];
    console.log(`\nNon-streaming chat completion, ${PAIRS} interleaved rounds, one request at a time`);
    console.log('  overhead over calling the upstream directly:');
    for (const [name, added] of [
      ['bare node proxy', bareAdded],
      ['this gateway', gatewayAdded],
      ['Portkey 1.15', portkeyAdded],
    ] as const) {
      console.log(`  ${name.padEnd(16)} p50 ${fmt(added.p50)}   p99 ${fmt(added.p99)}`);
    }
    console.log(ratioLine('Portkey', gatewayAdded, portkeyAdded, 'target <= 0.5x'));
    console.log(ratioLine('bare hop', gatewayAdded, bareAdded, 'target <= 2x'));

    const sd: number[] = [];
    const sp: number[] = [];
    const sg: number[] = [];
    const sk: number[] = [];
    const sr: number[] = [];
    let portkeyStreamError = '';
    for (let i = 0; i < STREAMS; i++) {
      sd.push((await call(upstreamPort, '/v1/chat/completions', streamBody, UPSTREAM_AUTH)).firstByte);
      sp.push((await call(proxyPort, '/v1/chat/completions', streamBody, UPSTREAM_AUTH)).firstByte);
      sg.push((await call(gatewayPort, '/v1/chat/completions', streamBody, gwHeaders)).firstByte);
      if (!portkeyStreamError) {
        await call(portkeyPort, '/v1/chat/completions', streamBody, pkHeaders)
          .then((t) => sk.push(t.firstByte))
          .catch((error: Error) => {
            portkeyStreamError = error.message;
          });
      }
      // Last in the round, so that the other servers' calls keep the order and rhythm of earlier runs.
      sr.push((await call(relayPort, '/v1/chat/completions', streamBody, UPSTREAM_AUTH)).firstByte);
    }
    const [bareStreamed, streamed, relayed] = [addedTime(sp, sd), addedTime(sg, sd), addedTime(sr, sd)];
    console.log(`\nStreaming: time to first chunk added, ${STREAMS} interleaved rounds`);
    console.log(
      `  raw TCP relay    p50 ${fmt(relayed.p50)}   p99 ${fmt(relayed.p99)}   (bytes piped, no HTTP: the floor of any proxy process here)`,
    );
    console.log(`  bare node proxy  p50 ${fmt(bareStreamed.p50)}   p99 ${fmt(bareStreamed.p99)}`);
    console.log(
      `  this gateway     p50 ${fmt(streamed.p50)}   p99 ${fmt(streamed.p99)}   (target <= 0.5 ms p50)`,
    );
    const portkeyStreamed = portkeyStreamError ? undefined : addedTime(sk, sd);
    console.log(
      portkeyStreamed
        ? `  Portkey 1.15     p50 ${fmt(portkeyStreamed.p50)}   p99 ${fmt(portkeyStreamed.p99)}`
        : `  Portkey 1.15     failed: ${portkeyStreamError}`,
    );
    console.log(
      portkeyStreamed
        ? ratioLine('Portkey', streamed, portkeyStreamed)
        : `${ratioLabel('Portkey')}none (Portkey's streaming failed)`,
    );
    console.log(ratioLine('bare hop', streamed, bareStreamed));

    console.log(
      `\nThroughput, ${RPS_REQUESTS} non-streaming requests a run, mean of ${RPS_ROUNDS} runs in alternating order`,
    );
    for (const concurrency of [16, 64]) {
      const servers = [viaProxy, viaGateway, viaPortkey];
      const sums = [0, 0, 0];
      for (let round = 0; round < RPS_ROUNDS; round++) {
        for (const i of round % 2 === 0 ? [0, 1, 2] : [2, 1, 0]) {
          await settle();
          sums[i] =
            (sums[i] ?? 0) +
            (await throughput(RPS_REQUESTS, concurrency, servers[i] as () => Promise<unknown>));
        }
      }
      const [bare, ours, theirs] = sums.map((sum) => sum / RPS_ROUNDS) as [number, number, number];
      console.log(
        `  concurrency ${String(concurrency).padEnd(3)} bare hop ${bare.toFixed(0)} req/s   this gateway ${ours.toFixed(0)} req/s   Portkey ${theirs.toFixed(0)} req/s   this/Portkey ${ratio(ours, theirs)} (target >= 1.5x)   this/bare hop ${ratio(ours, bare)}`,
      );
    }
    const [bareRss, ourRss, theirRss] = [rssMb(proxyPid), rssMb(gatewayPid), rssMb(portkey.child.pid)];
    console.log('\nMemory after load (RSS)');
    console.log(`  bare node proxy  ${bareRss.toFixed(0)} MB`);
    console.log(`  this gateway     ${ourRss.toFixed(0)} MB (with its embedded DynamoDB worker)`);
    console.log(`  Portkey 1.15     ${theirRss.toFixed(0)} MB`);
    console.log(
      `  this gateway / Portkey ${ratio(ourRss, theirRss)}   this gateway / bare hop ${ratio(ourRss, bareRss)}`,
    );
  } finally {
    portkey?.child.kill('SIGTERM');
    relay?.child.kill('SIGTERM');
    stop();
    agent.destroy();
  }
}

await main();
