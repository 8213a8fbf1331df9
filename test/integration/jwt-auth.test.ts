import { APIError } from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';
import {
  claims,
  craftJwt,
  createOrganisation,
  makeKey,
  nowSeconds,
  signJwt,
  type TestKey,
} from '../support/jwt';

// JWT authentication with a static key set (JWKS JSON): every row of the spec's JWT tables and errors.

const { gw, fake } = useGateway({ fake: startFakeOpenAI });
let keyA: TestKey;
let other: TestKey;
const SETTINGS_TTL_MS = Number(process.env.GATEWAY_AUTH_CACHE_TTL_MS ?? 300);
const settle = () => new Promise((r) => setTimeout(r, SETTINGS_TTL_MS + 150));

beforeAll(async () => {
  keyA = makeKey('key-a');
  other = makeKey('key-a'); // same kid, different key: a forged signature
  const put = await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyA.jwk] } });
  expect(put.status).toBe(200);
  expect((await gw.api('POST', '/workspaces', { name: 'Team', slug: 'team' })).status).toBe(201);
});

/** A raw call with a gateway credential; chat goes to the fake upstream. */
async function call(
  token: string,
  options: { method?: string; path?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const method = options.method ?? 'POST';
  const body =
    options.body ??
    (method === 'POST' ? { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } : undefined);
  const res = await fetch(`${gw.url}${options.path ?? '/chat/completions'}`, {
    method,
    headers: {
      'x-gateway-api-key': token,
      'x-gateway-custom-host': fake.url,
      authorization: 'Bearer sk-provider-key',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: replies of many shapes, asserted field by field
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** The 401 every JWT failure gives: invalid-API-key shape, gateway origin, the failure's text. */
async function expectRejected(token: string, text: string, options: Parameters<typeof call>[1] = {}) {
  const res = await call(token, options);
  expect(res.status).toBe(401);
  expect(res.headers.get('x-gateway-error-origin')).toBe('gateway');
  expect(res.body).toEqual({
    error: {
      message: `Error Verifying JWT token: ${text}`,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
      param: null,
    },
  });
  return res;
}

const token = (extra: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key = keyA) =>
  signJwt(claims(gw.organisationId, extra), key, header);

describe('key set configuration', () => {
  let org: { id: string; adminKey: string };
  beforeAll(async () => {
    org = await createOrganisation();
  });
  const put = (body: unknown) => gw.api('PUT', '/organisation/jwt', body, org.adminKey);

  it('stores a static key set (public parameters only), shows it, and deletes it', async () => {
    expect((await gw.api('GET', '/organisation/jwt', undefined, org.adminKey)).status).toBe(404);
    const key = makeKey('k1');
    const created = await put({ jwks: { keys: [{ ...key.jwk, x5t: 'ignored' }] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'organisation.jwt', organisation_id: org.id });
    expect(created.body.jwks.keys).toEqual([
      { kty: 'RSA', kid: 'k1', n: key.jwk.n, e: key.jwk.e, use: 'sig', alg: 'RS256' },
    ]);
    const got = await gw.api('GET', '/organisation/jwt', undefined, org.adminKey);
    expect(got.body.jwks).toEqual(created.body.jwks);
    expect((await gw.api('DELETE', '/organisation/jwt', undefined, org.adminKey)).body).toEqual({
      object: 'organisation.jwt',
      deleted: true,
    });
    expect((await gw.api('GET', '/organisation/jwt', undefined, org.adminKey)).status).toBe(404);
    expect((await gw.api('DELETE', '/organisation/jwt', undefined, org.adminKey)).status).toBe(404);
  });

  it('stores a JWKS URL: https anywhere, plain http only on loopback in the local runtime', async () => {
    const https = await put({ jwks_url: 'https://idp.example.com/.well-known/jwks.json' });
    expect(https.status).toBe(200);
    expect(https.body.jwks_url).toBe('https://idp.example.com/.well-known/jwks.json');
    expect(https.body.jwks).toBeUndefined();
    expect((await put({ jwks_url: 'http://127.0.0.1:9/jwks.json' })).status).toBe(200);
    const remoteHttp = await put({ jwks_url: 'http://idp.example.com/jwks.json' });
    expect(remoteHttp.status).toBe(400);
    expect(remoteHttp.body.error.param).toBe('jwks_url');
    expect((await put({ jwks_url: 'https://user:pw@idp.example.com/jwks' })).status).toBe(400);
    expect((await put({ jwks_url: 'not a url' })).status).toBe(400);
  });

  it('takes exactly one of jwks_url and jwks, and no other field', async () => {
    const key = makeKey('k2');
    for (const body of [
      {},
      { jwks_url: 'https://idp.example.com/jwks', jwks: { keys: [key.jwk] } },
      { jwks: { keys: [key.jwk] }, colour: 'x' },
      { jwks: { keys: [key.jwk] }, max_token_lifetime_seconds: 10 },
      { jwks: { keys: [key.jwk] }, audience: [] },
    ]) {
      const res = await put(body);
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
    }
  });

  it('refuses private key material, non-RSA keys, keys under 2048 bits, keys without kid, and sets without keys', async () => {
    const before = await gw.api('GET', '/organisation/jwt', undefined, org.adminKey);
    const key = makeKey('k3');
    const privateJwk = { ...key.privateKey.export({ format: 'jwk' }), kid: 'k3' };
    for (const param of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) {
      const leaked = { ...key.jwk, [param]: 'AQAB' };
      const res = await put({ jwks: { keys: [leaked] } });
      expect(res.status, param).toBe(400);
      expect(res.body.error.message).toMatch(/private key parameters/);
      expect(res.body.error.param).toBe('jwks');
    }
    expect((await put({ jwks: { keys: [privateJwk] } })).status).toBe(400);
    const ec = {
      kty: 'EC',
      crv: 'P-256',
      x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
      y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
      kid: 'ec',
    };
    expect((await put({ jwks: { keys: [ec] } })).body.error.message).toMatch(/only RSA/);
    expect((await put({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'h' }] } })).status).toBe(400);
    const small = makeKey('small', 1024);
    const tooSmall = await put({ jwks: { keys: [small.jwk] } });
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.body.error.message).toMatch(/1024-bit.*2048/);
    const { kid: _kid, ...noKid } = key.jwk;
    expect((await put({ jwks: { keys: [noKid] } })).body.error.message).toMatch(/no kid/);
    expect((await put({ jwks: { keys: [] } })).status).toBe(400);
    expect((await put({ jwks: { nokeys: true } })).status).toBe(400);
    expect((await put({ jwks: { keys: [key.jwk, key.jwk] } })).body.error.message).toMatch(/repeats/);
    expect((await put({ jwks: { keys: [{ ...key.jwk, alg: 'RS512' }] } })).status).toBe(400);
    // Nothing refused was stored.
    expect((await gw.api('GET', '/organisation/jwt', undefined, org.adminKey)).body).toEqual(before.body);
  });
});

describe('a valid JWT', () => {
  it('authenticates a chat completion through the openai client; the provider key passes through; the log shows the user', async () => {
    const client = gw.client({
      gatewayKey: token({ email_id: 'ada@example.com' }),
      apiKey: 'sk-provider-key',
      headers: { 'x-gateway-custom-host': fake.url },
    });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Echo: hello');
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-provider-key');
    const log = await waitForLog(gw, response.headers.get('x-gateway-request-id') ?? '');
    expect(log.auth).toEqual({ type: 'jwt', subject: 'ada@example.com' });
    expect(log.workspace).toBe('default');
    expect(log.organisation_id).toBe(gw.organisationId);
  });

  it('names the user by email_id, then sub, then uid', async () => {
    const subjects: unknown[] = [];
    for (const extra of [
      { email_id: 'e@example.com', sub: 's', uid: 'u' },
      { sub: 's-only', uid: 'u' },
      { sub: undefined, uid: 'u-only' },
      { sub: undefined },
    ]) {
      const res = await call(token(extra));
      expect(res.status).toBe(200);
      subjects.push((await waitForLog(gw, res.headers.get('x-gateway-request-id') ?? '')).auth.subject);
    }
    expect(subjects).toEqual(['e@example.com', 's-only', 'u-only', undefined]);
  });

  it('accepts the alternative claim names organisation_id, workspace_slug and scopes, in another workspace', async () => {
    const res = await call(
      token({
        gateway_oid: undefined,
        gateway_workspace: undefined,
        scope: undefined,
        organisation_id: gw.organisationId,
        workspace_slug: 'team',
        scopes: ['completions.write'],
      }),
    );
    expect(res.status).toBe(200);
    expect((await waitForLog(gw, res.headers.get('x-gateway-request-id') ?? '')).workspace).toBe('team');
  });

  it('tolerates a small clock skew on exp and nbf, and honours nbf and iat in the past', async () => {
    expect((await call(token({ exp: nowSeconds() - 20 }))).status).toBe(200);
    expect((await call(token({ nbf: nowSeconds() + 20 }))).status).toBe(200);
    expect((await call(token({ nbf: nowSeconds() - 60, iat: nowSeconds() - 60 }))).status).toBe(200);
  });

  it('is also taken from Authorization: Bearer when x-gateway-api-key is absent', async () => {
    const res = await fetch(`${gw.url}/organisation`, { headers: { authorization: `Bearer ${token()}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { workspaces: { slug: string }[] };
    expect(body.workspaces.map((w) => w.slug)).toEqual(['default']);
  });
});

describe('scopes', () => {
  it('accepts the gateway. prefix or none, as a space-separated string or an array, ignoring unknown scopes', async () => {
    for (const scope of [
      'gateway.completions.write',
      'completions.write',
      'gateway.logs.view   gateway.completions.write',
      ['gateway.completions.write'],
      ['completions.write', 'something.else'],
      'unknown.scope completions.write',
    ]) {
      expect((await call(token({ scope }))).status, JSON.stringify(scope)).toBe(200);
    }
    expect((await call(token({ scope: undefined, scopes: 'gateway.completions.write' }))).status).toBe(200);
  });

  it('answers 403 naming the missing scope', async () => {
    for (const scope of ['logs.view', 'gateway.logs.view', [], 'completions', 'gateway.completions.read']) {
      const res = await call(token({ scope }));
      expect(res.status, JSON.stringify(scope)).toBe(403);
      expect(res.body.error.message).toContain('completions.write');
      expect(res.headers.get('x-gateway-error-origin')).toBe('gateway');
    }
    const logs = await call(token({ scope: 'completions.write' }), { method: 'GET', path: '/logs' });
    expect(logs.status).toBe(403);
    expect(logs.body.error.message).toContain('logs.view');
  });

  it('reads logs of its own workspace only with logs.view', async () => {
    const teamToken = token({ gateway_workspace: 'team', scope: 'gateway.logs.view' });
    const res = await call(teamToken, { method: 'GET', path: '/logs?limit=100' });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    for (const entry of res.body.data) expect(entry.workspace).toBe('team');
  });

  it('acts as a workspace key: never an organisation admin, whatever its scopes', async () => {
    const all = token({
      scope: [
        'completions.write',
        'logs.view',
        'api_keys.read',
        'api_keys.write',
        'virtual_keys.write',
        'admin',
        'gateway.admin',
      ],
    });
    for (const [method, path, body] of [
      ['POST', '/workspaces', { name: 'Nope' }],
      ['GET', '/workspaces', undefined],
      ['PUT', '/organisation/jwt', { jwks: { keys: [keyA.jwk] } }],
      ['GET', '/organisation/jwt', undefined],
      ['DELETE', '/organisation/jwt', undefined],
      ['GET', '/audit-logs', undefined],
    ] as const) {
      const res = await call(all, { method, path, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe('admin_required');
    }
    const orgKey = await call(all, { path: '/api-keys', body: { name: 'x', type: 'organisation' } });
    expect(orgKey.status).toBe(403);
    const wsKey = await call(all, { path: '/api-keys', body: { name: 'x', workspace: 'team' } });
    expect(wsKey.status).toBe(403);
    expect((await gw.api('GET', '/organisation/jwt')).body.jwks.keys[0].kid).toBe('key-a');
  });
});

describe('invalid JWTs: 401 in the invalid-API-key shape', () => {
  it('rejects every algorithm but RS256: HS256 (even keyed with the public key), none, RS384, RS512', async () => {
    const payload = claims(gw.organisationId);
    const header = { typ: 'JWT', kid: 'key-a' };
    const algorithm = 'Unsupported Algorithm (only RS256 is accepted)';
    await expectRejected(craftJwt({ ...header, alg: 'HS256' }, payload, keyA, String(keyA.jwk.n)), algorithm);
    await expectRejected(craftJwt({ ...header, alg: 'HS256' }, payload, keyA), algorithm);
    await expectRejected(craftJwt({ ...header, alg: 'none' }, payload, keyA), algorithm);
    await expectRejected(craftJwt({ typ: 'JWT', kid: 'key-a' }, payload, keyA), algorithm);
    await expectRejected(craftJwt({ ...header, alg: 'RS384' }, payload, keyA), algorithm);
    await expectRejected(craftJwt({ ...header, alg: 'RS512' }, payload, keyA), algorithm);
    await expectRejected(craftJwt({ ...header, alg: 'ES256' }, payload, keyA), algorithm);
  });

  it('requires typ JWT and a kid that is in the key set', async () => {
    await expectRejected(token({}, { typ: undefined }), 'Invalid Token Type (typ must be JWT)');
    await expectRejected(token({}, { typ: 'at+jwt' }), 'Invalid Token Type (typ must be JWT)');
    await expectRejected(token({}, { kid: undefined }), 'Missing Key Id (kid)');
    await expectRejected(token({}, { kid: 'unknown-kid' }), 'Signing Key Not Found');
  });

  it('rejects a bad signature: another key under the same kid, or a changed payload', async () => {
    await expectRejected(token({}, {}, other), 'Invalid Signature');
    const [h, , s] = token().split('.');
    const forged = Buffer.from(JSON.stringify(claims(gw.organisationId, { sub: 'mallory' }))).toString(
      'base64url',
    );
    await expectRejected(`${h}.${forged}.${s}`, 'Invalid Signature');
    await expectRejected(`${h}.${forged}.`, 'Invalid Signature');
  });

  it('requires exp, in the future beyond the tolerated skew; honours nbf and iat', async () => {
    await expectRejected(token({ exp: undefined }), 'Missing Expiry (exp)');
    await expectRejected(token({ exp: nowSeconds() - 120 }), 'Token Expired');
    await expectRejected(token({ exp: 'tomorrow' }), 'Invalid Claim');
    await expectRejected(token({ nbf: nowSeconds() + 600 }), 'Token Not Yet Valid (nbf)');
    await expectRejected(token({ iat: nowSeconds() + 600 }), 'Token Issued In The Future (iat)');
  });

  it('requires the organisation, workspace and scope claims', async () => {
    await expectRejected(
      token({ gateway_oid: undefined }),
      'Missing Organisation Claim (gateway_oid or organisation_id)',
    );
    await expectRejected(
      token({ gateway_workspace: undefined }),
      'Missing Workspace Claim (gateway_workspace or workspace_slug)',
    );
    await expectRejected(token({ scope: undefined }), 'Missing Scope Claim (scope or scopes)');
    await expectRejected(token({ scope: 42 }), 'Missing Scope Claim (scope or scopes)');
  });

  it('requires the organisation and workspace to exist, and the organisation to own the key set', async () => {
    await expectRejected(token({ gateway_workspace: 'nope' }), 'Unknown Workspace');
    await expectRejected(
      token({ gateway_oid: 'org_does_not_exist' }),
      'JWT Authentication Is Not Configured For This Organisation',
    );
    const unconfigured = await createOrganisation();
    await expectRejected(
      token({ gateway_oid: unconfigured.id }),
      'JWT Authentication Is Not Configured For This Organisation',
    );
    // An organisation with its own key set: a token naming it but signed with our key is not its own.
    const b = await createOrganisation();
    const keyB = makeKey('key-b');
    expect(
      (await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyB.jwk] } }, b.adminKey)).status,
    ).toBe(200);
    await expectRejected(token({ gateway_oid: b.id }), 'Signing Key Not Found');
    await expectRejected(token({ gateway_oid: b.id }, { kid: 'key-b' }), 'Invalid Signature');
    expect((await call(signJwt(claims(b.id), keyB))).status).toBe(200);
    // ...and B's token never reaches our workspaces.
    await expectRejected(signJwt(claims(b.id, { gateway_workspace: 'team' }), keyB), 'Unknown Workspace');
  });

  it('rejects a Bearer prefix in x-gateway-api-key', async () => {
    await expectRejected(`Bearer ${token()}`, 'Bearer Prefix Not Allowed In x-gateway-api-key');
    const plain = await call(`Bearer ${ADMIN_KEY}`);
    expect(plain.status).toBe(401);
  });

  it('rejects a JWT-shaped value whose payload is not JSON', async () => {
    const [h, , s] = token().split('.');
    await expectRejected(
      `${h}.bm90IGpzb24.${s}`,
      'Missing Organisation Claim (gateway_oid or organisation_id)',
    );
  });

  it('still serves API keys', async () => {
    expect((await call(ADMIN_KEY)).status).toBe(200);
  });
});

describe('audit log', () => {
  // A fresh organisation: entries are one per source, error and minute, and earlier tests failed tokens too.
  let audited: { id: string; adminKey: string };
  const auditedToken = (extra: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
    signJwt(claims(audited.id, extra), keyA, header);
  beforeAll(async () => {
    audited = await createOrganisation();
    expect(
      (await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyA.jwk] } }, audited.adminKey)).status,
    ).toBe(200);
  });

  it('records each invalid JWT with the token masked, the error text and the time, newest first', async () => {
    const started = Date.now();
    const expired = auditedToken({ exp: nowSeconds() - 300, sub: 'audit-expired' });
    const unknownKid = auditedToken({ sub: 'audit-kid' }, { kid: 'gone' });
    await expectRejected(expired, 'Token Expired');
    await expectRejected(unknownKid, 'Signing Key Not Found');
    // A third error, so that the page of two has a next page.
    await expectRejected(auditedToken({ exp: undefined }), 'Missing Expiry (exp)');
    const res = await gw.api('GET', '/audit-logs?limit=3', undefined, audited.adminKey);
    expect(res.body.data[0].error).toBe('Error Verifying JWT token: Missing Expiry (exp)');
    const oldest = res.body.data[2];
    expect(oldest.error).toBe('Error Verifying JWT token: Token Expired');
    const page = await gw.api(
      'GET',
      `/audit-logs?limit=2&cursor=${Buffer.from(res.body.data[0].id).toString('base64url')}`,
      undefined,
      audited.adminKey,
    );
    await checkPage(page, expired, unknownKid, started);
  });

  async function checkPage(
    // biome-ignore lint/suspicious/noExplicitAny: a reply asserted field by field
    res: { status: number; body: any },
    expired: string,
    unknownKid: string,
    started: number,
  ) {
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data).toHaveLength(2);
    expect(res.body.next_cursor).toBeNull();
    const first = await gw.api('GET', '/audit-logs?limit=2', undefined, audited.adminKey);
    expect(typeof first.body.next_cursor).toBe('string');
    const [newest, previous] = res.body.data;
    expect(newest).toMatchObject({
      object: 'audit_log',
      event: 'jwt.invalid',
      organisation_id: audited.id,
      source: '127.0.0.1',
      count: 1,
      jwtToken: `${unknownKid.slice(0, 2)}${'*'.repeat(unknownKid.length - 4)}${unknownKid.slice(-2)}`,
      error: 'Error Verifying JWT token: Signing Key Not Found',
    });
    expect(previous).toMatchObject({
      jwtToken: `${expired.slice(0, 2)}${'*'.repeat(expired.length - 4)}${expired.slice(-2)}`,
      error: 'Error Verifying JWT token: Token Expired',
    });
    expect(Date.parse(newest.timestamp)).toBeGreaterThanOrEqual(started - 1000);
    expect(newest.id > previous.id).toBe(true);
    expect(JSON.stringify(res.body)).not.toContain(unknownKid.slice(2, -2));

    expect((await gw.api('GET', '/audit-logs?cursor=bad')).status).toBe(400);
    expect((await gw.api('GET', '/audit-logs?limit=0')).status).toBe(400);
  }

  it('keeps one entry per source, error and minute, with a count, however many tokens fail', async () => {
    const flooded = await createOrganisation();
    await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyA.jwk] } }, flooded.adminKey);
    for (let i = 0; i < 6; i++) {
      await expectRejected(signJwt(claims(flooded.id), keyA, { kid: `flood-${i}` }), 'Signing Key Not Found');
    }
    const entries = (await gw.api('GET', '/audit-logs?limit=100', undefined, flooded.adminKey)).body.data;
    // One entry, or two when a minute ended during the loop; every attempt is counted.
    expect(entries.length).toBeLessThanOrEqual(2);
    expect(entries.reduce((sum: number, e: { count: number }) => sum + e.count, 0)).toBe(6);
  });

  it('keeps each organisation to its own entries; entries naming no existing organisation go to the bootstrap admins', async () => {
    const b = await createOrganisation();
    const keyB = makeKey('key-b2');
    await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyB.jwk] } }, b.adminKey);
    const forB = signJwt(claims(b.id, { exp: nowSeconds() - 300 }), keyB);
    await expectRejected(forB, 'Token Expired');
    const noOrg = token({ gateway_oid: undefined });
    await expectRejected(noOrg, 'Missing Organisation Claim (gateway_oid or organisation_id)');

    const masked = (t: string) => `${t.slice(0, 2)}${'*'.repeat(t.length - 4)}${t.slice(-2)}`;
    const bList = (await gw.api('GET', '/audit-logs?limit=100', undefined, b.adminKey)).body.data;
    expect(bList.map((e: { jwtToken: string }) => e.jwtToken)).toEqual([masked(forB)]);
    expect(bList[0].organisation_id).toBe(b.id);

    const ours = (await gw.api('GET', '/audit-logs?limit=100')).body.data;
    const unknown = ours.find((e: { error: string }) => e.error.includes('Missing Organisation Claim'));
    // Earlier tests failed tokens without an organisation in this minute: the entry keeps the first one.
    expect(unknown).toMatchObject({ organisation_id: null });
    expect(unknown.jwtToken).toMatch(/^ey\*+[\w-]{2}$/);
    expect(ours.some((e: { organisation_id: string }) => e.organisation_id === b.id)).toBe(false);
  });

  it('records a Bearer-prefixed JWT, and nothing for a wrong API key', async () => {
    const before = (await gw.api('GET', '/audit-logs?limit=1', undefined, audited.adminKey)).body.data[0].id;
    const jwt = auditedToken();
    await expectRejected(`Bearer ${jwt}`, 'Bearer Prefix Not Allowed In x-gateway-api-key');
    const wrongKey = await call('gwk_wrong');
    expect(wrongKey.status).toBe(401);
    const after = (await gw.api('GET', '/audit-logs?limit=5', undefined, audited.adminKey)).body.data;
    const fresh = after.filter((e: { id: string }) => e.id > before);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).toMatchObject({
      error: 'Error Verifying JWT token: Bearer Prefix Not Allowed In x-gateway-api-key',
      jwtToken: `${jwt.slice(0, 2)}${'*'.repeat(jwt.length - 4)}${jwt.slice(-2)}`,
    });
  });
});

describe('caching and rotation with a static key set', () => {
  it('rotates to a new kid without restart; a removed key stops its tokens, cached or new, once the cache refreshes', async () => {
    const org = await createOrganisation();
    const oldKey = makeKey('2024');
    const newKey = makeKey('2025');
    const put = (keys: TestKey[]) =>
      gw.api('PUT', '/organisation/jwt', { jwks: { keys: keys.map((k) => k.jwk) } }, org.adminKey);
    expect((await put([oldKey])).status).toBe(200);
    const oldToken = signJwt(claims(org.id), oldKey);
    expect((await call(oldToken)).status).toBe(200);

    // Publish the new key beside the old one: new tokens work, issued ones stay valid.
    expect((await put([oldKey, newKey])).status).toBe(200);
    await settle();
    expect((await call(signJwt(claims(org.id), newKey))).status).toBe(200);
    expect((await call(oldToken)).status).toBe(200);
    expect((await call(signJwt(claims(org.id, { sub: 'fresh' }), oldKey))).status).toBe(200);

    // Revoke the old key: the cached token and new tokens signed with it stop.
    expect((await put([newKey])).status).toBe(200);
    await settle();
    await expectRejected(oldToken, 'Signing Key Not Found');
    await expectRejected(signJwt(claims(org.id, { sub: 'later' }), oldKey), 'Signing Key Not Found');
    expect((await call(signJwt(claims(org.id), newKey))).status).toBe(200);

    // Deleting the configuration stops JWTs altogether.
    expect((await gw.api('DELETE', '/organisation/jwt', undefined, org.adminKey)).status).toBe(200);
    await settle();
    await expectRejected(
      signJwt(claims(org.id), newKey),
      'JWT Authentication Is Not Configured For This Organisation',
    );
  });

  it('rejects through the openai client with a 401 AuthenticationError', async () => {
    const client = gw.client({
      gatewayKey: token({ exp: nowSeconds() - 600 }),
      headers: { 'x-gateway-custom-host': fake.url },
    });
    const error = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(401);
    expect((error as APIError).code).toBe('invalid_api_key');
  });
});

describe('issuer, audience and token lifetime', () => {
  it('checks iss and aud when set, and refuses tokens living longer than the maximum', async () => {
    const org = await createOrganisation();
    const put = await gw.api(
      'PUT',
      '/organisation/jwt',
      {
        jwks: { keys: [keyA.jwk] },
        issuer: 'https://idp.example.com/',
        audience: ['llm-gateway', 'other'],
        max_token_lifetime_seconds: 3600,
      },
      org.adminKey,
    );
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      issuer: 'https://idp.example.com/',
      audience: ['llm-gateway', 'other'],
      max_token_lifetime_seconds: 3600,
    });
    const good = { iss: 'https://idp.example.com/', aud: 'llm-gateway' };
    const jwt = (extra: Record<string, unknown>) => signJwt(claims(org.id, { ...good, ...extra }), keyA);
    expect((await call(jwt({}))).status).toBe(200);
    expect((await call(jwt({ aud: ['x', 'other'] }))).status).toBe(200);
    await expectRejected(jwt({ iss: 'https://evil.example.com/' }), 'Invalid Issuer (iss)');
    await expectRejected(jwt({ iss: undefined }), 'Invalid Issuer (iss)');
    await expectRejected(jwt({ aud: 'someone-else' }), 'Invalid Audience (aud)');
    await expectRejected(jwt({ aud: undefined }), 'Invalid Audience (aud)');
    const lifetime = 'Token Lifetime Exceeds The Maximum Allowed (exp - iat)';
    await expectRejected(jwt({ exp: nowSeconds() + 7200 }), lifetime);
    await expectRejected(jwt({ iat: undefined, exp: nowSeconds() + 7200 }), lifetime);
    await expectRejected(jwt({ iat: nowSeconds() - 7000, exp: nowSeconds() + 300 }), lifetime);
  });

  it('allows a day by default', async () => {
    const org = await createOrganisation();
    await gw.api('PUT', '/organisation/jwt', { jwks: { keys: [keyA.jwk] } }, org.adminKey);
    const got = await gw.api('GET', '/organisation/jwt', undefined, org.adminKey);
    expect(got.body).toMatchObject({ issuer: null, audience: null, max_token_lifetime_seconds: 86400 });
    expect((await call(signJwt(claims(org.id, { exp: nowSeconds() + 86_000 }), keyA))).status).toBe(200);
    await expectRejected(
      signJwt(claims(org.id, { exp: nowSeconds() + 2 * 86_400 }), keyA),
      'Token Lifetime Exceeds The Maximum Allowed (exp - iat)',
    );
  });
});
