// Per-call cost of authenticating a cached JWT vs a cached API key through the Authenticator, in
// process, against the embedded DynamoDB (caches warm, so no call reaches it in the measured loop).
// Run: npx tsx bench/jwt-auth.ts
import { generateKeyPairSync, sign } from 'node:crypto';
import { Authenticator } from '../functions/control/authenticator';
import { bootstrap } from '../functions/control/bootstrap';
import { loadSettings } from '../functions/core/settings';
import { ControlStore } from '../functions/store/control-store';
import { ALL_TABLES } from '../functions/store/tables';
import { ensureTables, localTableName, startDynalite } from '../local/dynamodb';
import { BENCH_ADMIN_KEY } from './support';

const ITERATIONS = Number(process.env.ITERATIONS ?? 50_000);

const dynamo = await startDynalite(undefined);
process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
for (const def of ALL_TABLES) process.env[def.envVar] ??= localTableName(def);
// Settings are read once: load them again now that this process's variables are set.
loadSettings();
await ensureTables(dynamo.endpoint);
const { organisationId } = await bootstrap(BENCH_ADMIN_KEY);

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };
const now = new Date().toISOString();
await new ControlStore().putJwtSettings({
  organisation_id: organisationId,
  jwks_json: JSON.stringify({ keys: [jwk] }),
  created_at: now,
  updated_at: now,
});
const seg = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const input = `${seg({ alg: 'RS256', typ: 'JWT', kid: 'bench' })}.${seg({
  gateway_oid: organisationId,
  gateway_workspace: 'default',
  scope: 'gateway.completions.write gateway.logs.view',
  email_id: 'bench@example.com',
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 3600,
})}`;
const jwt = `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;

const authenticator = new Authenticator();

async function measure(label: string, headers: Record<string, string>) {
  const first = await authenticator.authenticate(headers);
  if (!first.organisationId) throw new Error(`${label}: not authenticated`);
  for (let i = 0; i < 2_000; i++) await authenticator.authenticate(headers);
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await authenticator.authenticate(headers);
    samples[i] = (performance.now() - t) * 1000;
  }
  samples.sort();
  const mean = samples.reduce((a, b) => a + b, 0) / ITERATIONS;
  const p = (q: number) => samples[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))] ?? 0;
  console.log(
    `${label.padEnd(16)} mean ${mean.toFixed(1).padStart(6)} µs   p50 ${p(0.5).toFixed(1).padStart(6)} µs   p99 ${p(0.99).toFixed(1).padStart(6)} µs`,
  );
  return { mean, p99: p(0.99) };
}

console.log(`cached authentication, ${ITERATIONS} calls each (Node ${process.version})`);
const apiKey = await measure('API key', { 'x-gateway-api-key': BENCH_ADMIN_KEY });
const token = await measure('JWT (RS256)', { 'x-gateway-api-key': jwt });
console.log(
  `JWT - API key: mean ${(token.mean - apiKey.mean).toFixed(1)} µs, p99 ${(token.p99 - apiKey.p99).toFixed(1)} µs (target: JWT within 200 µs)`,
);
await dynamo.close();
