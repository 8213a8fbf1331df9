import { createHmac, generateKeyPairSync, type JsonWebKey, type KeyObject, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ulid } from 'ulid';
import { generateKey, hashKey } from '../../functions/control/api-keys';
import { ControlStore } from '../../functions/store/control-store';

// Test-side JWT kit: RSA keys made with node:crypto, tokens signed by hand (so the tests do not share
// the gateway's code), a JWKS server on 127.0.0.1, and extra organisations written straight to the store.

export interface TestKey {
  kid: string;
  privateKey: KeyObject;
  /** The public JWK as published in a key set. */
  jwk: JsonWebKey & { kid: string };
}

export function makeKey(kid: string, bits = 2048): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, jwk };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token with exactly this header and payload, signed as `header.alg` says (or not at all). */
export function craftJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: TestKey,
  hmacSecret = 'secret',
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const alg = header.alg;
  let signature = '';
  if (alg === 'RS256' || alg === 'RS384' || alg === 'RS512') {
    signature = sign(`sha${String(alg).slice(2)}`, Buffer.from(input), key.privateKey).toString('base64url');
  } else if (alg === 'HS256') {
    signature = createHmac('sha256', hmacSecret).update(input).digest('base64url');
  }
  return `${input}.${signature}`;
}

/** An RS256 token with `typ: JWT` and the key's kid; `header` overrides or removes (undefined) fields. */
export function signJwt(
  payload: Record<string, unknown>,
  key: TestKey,
  header: Record<string, unknown> = {},
): string {
  const full: Record<string, unknown> = { alg: 'RS256', typ: 'JWT', kid: key.kid, ...header };
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k];
  return craftJwt(full, payload, key);
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Claims of a valid token for an organisation's `default` workspace; `extra` overrides or removes. */
export function claims(organisationId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    gateway_oid: organisationId,
    gateway_workspace: 'default',
    scope: 'completions.write logs.view',
    sub: 'user-123',
    iat: nowSeconds(),
    exp: nowSeconds() + 600,
    ...extra,
  };
  for (const k of Object.keys(base)) if (base[k] === undefined) delete base[k];
  return base;
}

export interface JwksServer {
  /** Full URL of a path on the server. */
  url(path: string): string;
  /** What a path answers: a key set (JSON), raw text, or a status with no body. */
  serve(path: string, body: unknown, status?: number): void;
  /** How many times a path was fetched. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  const routes = new Map<string, { body: unknown; status: number }>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    const text = typeof route.body === 'string' ? route.body : JSON.stringify(route.body);
    res.writeHead(route.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    serve: (path, body, status = 200) => routes.set(path, { body, status }),
    hits: (path) => hits.get(path) ?? 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Another organisation with a `default` workspace and an admin key, written straight to the store (the
 * API has no way to create organisations). Call after the gateway started: it sets the table names.
 */
export async function createOrganisation(): Promise<{ id: string; adminKey: string }> {
  const store = new ControlStore();
  const id = `org_${ulid().toLowerCase()}`;
  const now = new Date().toISOString();
  await store.putOrganisation({ id, name: `Test ${id}`, created_at: now });
  await store.createWorkspace({
    id: `ws_${ulid().toLowerCase()}`,
    slug: 'default',
    name: 'Default workspace',
    organisation_id: id,
    created_at: now,
  });
  const adminKey = generateKey();
  await store.putApiKey({
    id: `key_${ulid()}`,
    name: 'admin',
    type: 'organisation',
    organisation_id: id,
    workspace: null,
    scopes: [],
    key_hash: hashKey(adminKey),
    last_four: adminKey.slice(-4),
    created_at: now,
  });
  return { id, adminKey };
}
