import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/gateway';
import {
  claims,
  createOrganisation,
  type JwksServer,
  makeKey,
  signJwt,
  startJwksServer,
  type TestKey,
} from '../support/jwt';

// JWT authentication against a key set served from a URL (a JWKS server on 127.0.0.1).

// Read by the handlers when the gateway starts: a fetched key set is used for this long before it is
// fetched again, so a revoked key can be observed within the test.
const JWKS_MAX_AGE_MS = 1_000;

let gw: TestGateway;
let fake: FakeOpenAI;
let jwks: JwksServer;
let keyA: TestKey;
let keyB: TestKey;

beforeAll(async () => {
  process.env.GATEWAY_JWKS_CACHE_TTL_MS = String(JWKS_MAX_AGE_MS);
  jwks = await startJwksServer();
  fake = await startFakeOpenAI();
  gw = await startTestGateway();
  keyA = makeKey('a');
  keyB = makeKey('b');
});
afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await jwks?.close();
});

async function call(token: string) {
  const res = await fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': token,
      'x-gateway-custom-host': fake.url,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as { error?: { message: string } },
  };
}

async function expectRejected(token: string, text: string) {
  const res = await call(token);
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
}

/** A fresh organisation whose key set is served at `path`. */
async function organisationAt(path: string, served: unknown) {
  jwks.serve(path, served);
  const org = await createOrganisation();
  const put = await gw.api('PUT', '/organisation/jwt', { jwks_url: jwks.url(path) }, org.adminKey);
  expect(put.status).toBe(200);
  expect(put.body.jwks_url).toBe(jwks.url(path));
  return org;
}

describe('a key set from a URL', () => {
  it('is fetched once and cached; a new kid published later is picked up by one refetch', async () => {
    const org = await organisationAt('/rotate', { keys: [keyA.jwk] });
    expect(jwks.hits('/rotate')).toBe(0);
    expect((await call(signJwt(claims(org.id), keyA))).status).toBe(200);
    expect((await call(signJwt(claims(org.id, { sub: 'two' }), keyA))).status).toBe(200);
    expect(jwks.hits('/rotate')).toBe(1);

    // Rotation: publish the new key beside the old; a token with the new kid triggers one fetch.
    jwks.serve('/rotate', { keys: [keyA.jwk, keyB.jwk] });
    const oldToken = signJwt(claims(org.id, { sub: 'old' }), keyA);
    expect((await call(oldToken)).status).toBe(200);
    expect((await call(signJwt(claims(org.id), keyB))).status).toBe(200);
    expect(jwks.hits('/rotate')).toBe(2);
    expect((await call(signJwt(claims(org.id, { sub: 'b2' }), keyB))).status).toBe(200);
    expect((await call(oldToken)).status).toBe(200);
    expect(jwks.hits('/rotate')).toBe(2);
  });

  it('refetches for an unknown kid at most once per back-off period', async () => {
    const org = await organisationAt('/penalty', { keys: [keyA.jwk] });
    const stranger = makeKey('stranger');
    await expectRejected(signJwt(claims(org.id), stranger), 'Signing Key Not Found');
    expect(jwks.hits('/penalty')).toBe(1);
    for (const kid of ['x1', 'x2', 'x3']) {
      await expectRejected(signJwt(claims(org.id), stranger, { kid }), 'Signing Key Not Found');
    }
    expect(jwks.hits('/penalty')).toBe(1);
    // Known keys keep working meanwhile.
    expect((await call(signJwt(claims(org.id), keyA))).status).toBe(200);
  });

  it('stops tokens of a key removed from the set, cached or new, once the fetched set is refreshed', async () => {
    const org = await organisationAt('/revoke', { keys: [keyA.jwk, keyB.jwk] });
    const cached = signJwt(claims(org.id), keyB);
    expect((await call(cached)).status).toBe(200);
    jwks.serve('/revoke', { keys: [keyA.jwk] });
    // Until the set is refreshed the removal is not known.
    expect((await call(cached)).status).toBe(200);
    await new Promise((r) => setTimeout(r, JWKS_MAX_AGE_MS + 200));
    await expectRejected(cached, 'Signing Key Not Found');
    await expectRejected(signJwt(claims(org.id, { sub: 'new' }), keyB), 'Signing Key Not Found');
    expect((await call(signJwt(claims(org.id), keyA))).status).toBe(200);
  });

  it('validates the fetched set like a configured one', async () => {
    const small = makeKey('small', 1024);
    const leaked = { ...keyA.privateKey.export({ format: 'jwk' }), kid: 'a' };
    const cases: [string, unknown, RegExp][] = [
      ['/private', { keys: [leaked] }, /private key parameters/],
      ['/small', { keys: [small.jwk] }, /1024-bit/],
      ['/ec', { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'a' }] }, /only RSA/],
      ['/nokid', { keys: [{ ...keyA.jwk, kid: undefined }] }, /no kid/],
    ];
    for (const [path, served, detail] of cases) {
      const org = await organisationAt(path, served);
      await expectRejected(signJwt(claims(org.id), path === '/small' ? small : keyA), 'Key Set Unavailable');
      const audit = (await gw.api('GET', '/audit-logs?limit=1', undefined, org.adminKey)).body.data[0];
      expect(audit.error).toBe('Error Verifying JWT token: Key Set Unavailable');
      expect(audit.detail).toMatch(detail);
    }
  });

  it('is a 401 with an audit entry when unreachable or malformed, and API keys keep working', async () => {
    const unreachable = await createOrganisation();
    await gw.api(
      'PUT',
      '/organisation/jwt',
      { jwks_url: 'http://127.0.0.1:1/jwks.json' },
      unreachable.adminKey,
    );
    const cases: [{ id: string; adminKey: string }, string][] = [
      [unreachable, 'unreachable'],
      [await organisationAt('/not-json', 'hello, not JSON'), 'not JSON'],
      [await organisationAt('/no-keys', { issuer: 'x' }), 'no keys'],
      [await organisationAt('/empty', { keys: [] }), 'empty'],
    ];
    jwks.serve('/status', '', 500);
    const failing = await createOrganisation();
    await gw.api('PUT', '/organisation/jwt', { jwks_url: jwks.url('/status') }, failing.adminKey);
    cases.push([failing, '500']);
    for (const [org, label] of cases) {
      const jwt = signJwt(claims(org.id), keyA);
      await expectRejected(jwt, 'Key Set Unavailable');
      const audit = await gw.api('GET', '/audit-logs?limit=1', undefined, org.adminKey);
      expect(audit.body.data[0], label).toMatchObject({
        organisation_id: org.id,
        error: 'Error Verifying JWT token: Key Set Unavailable',
        jwtToken: `${jwt.slice(0, 2)}${'*'.repeat(jwt.length - 4)}${jwt.slice(-2)}`,
      });
      // A second attempt inside the back-off does not fetch again, and is audited too.
      await expectRejected(signJwt(claims(org.id, { sub: 'again' }), keyA), 'Key Set Unavailable');
    }
    expect(jwks.hits('/status')).toBe(1);
    expect((await call(ADMIN_KEY)).status).toBe(200);
  });

  it('refuses plain http to anything but loopback', async () => {
    const org = await createOrganisation();
    const res = await gw.api(
      'PUT',
      '/organisation/jwt',
      { jwks_url: 'http://10.0.0.1/jwks.json' },
      org.adminKey,
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/https/);
  });
});
