import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOidc, startFakeOidc } from '../support/fake-oidc';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai';
import { startTestGateway, type TestGateway, waitForLog } from '../support/gateway';
import { createOrganisation, makeKey, nowSeconds, signJwt } from '../support/jwt';

// Single sign-on: an ID token from the organisation's OpenID Provider (a fake one on 127.0.0.1) is the
// gateway JWT, its claims mapped to workspace and scopes by the organisation's settings.

const CLIENT_ID = 'gateway-dashboard';

let gw: TestGateway;
let fake: FakeOpenAI;
let idp: FakeOidc;
let other: FakeOidc;

const settings = () => ({
  issuer: idp.issuer,
  client_id: CLIENT_ID,
  workspace_claim: 'gw_workspace',
  scopes_claim: 'groups',
});

beforeAll(async () => {
  // Read by the handlers when the gateway starts: settings changed by a test are seen at once.
  process.env.GATEWAY_AUTH_CACHE_TTL_MS = '0';
  [gw, fake, idp, other] = await Promise.all([
    startTestGateway(),
    startFakeOpenAI(),
    startFakeOidc({
      sub: 'u-1',
      email: 'grace@example.com',
      gw_workspace: 'team-a',
      groups: ['completions.write'],
    }),
    startFakeOidc({
      sub: 'u-2',
      email: 'eve@example.com',
      gw_workspace: 'team-a',
      groups: ['completions.write'],
    }),
  ]);
  expect((await gw.api('POST', '/workspaces', { slug: 'team-a', name: 'Team A' })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all([gw?.stop(), fake?.close(), idp?.close(), other?.close()]);
});

async function chat(token: string) {
  const res = await fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
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

describe('SSO settings', () => {
  it('are refused when incomplete or not https, and readable only by an admin', async () => {
    const put = (body: unknown) => gw.api('PUT', '/organisation/sso', body);
    expect((await gw.api('GET', '/organisation/sso')).status).toBe(404);
    expect((await gw.api('GET', '/organisation/sso/config')).status).toBe(404);
    const missingWorkspace = await put({ issuer: idp.issuer, client_id: CLIENT_ID, scopes_claim: 'groups' });
    expect(missingWorkspace.status).toBe(400);
    expect(missingWorkspace.body.error.param).toBe('workspace_claim');
    expect((await put({ ...settings(), issuer: 'http://idp.example.com' })).status).toBe(400);
    expect((await put({ ...settings(), issuer: 'not a url' })).status).toBe(400);
    expect((await put({ ...settings(), client_id: '' })).status).toBe(400);
    expect((await put({ ...settings(), scopes: 'email' })).status).toBe(400);
    expect((await put({ ...settings(), scopes_claim: undefined, gateway_scopes: ['root'] })).status).toBe(
      400,
    );
    expect((await put({ ...settings(), client_secret: 'x' })).status).toBe(400);

    const saved = await put(settings());
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      object: 'organisation.sso',
      issuer: idp.issuer,
      client_id: CLIENT_ID,
      scopes: 'openid email profile',
      audience: CLIENT_ID,
      workspace_claim: 'gw_workspace',
      scopes_claim: 'groups',
    });
    expect((await gw.api('GET', '/organisation/sso')).body).toEqual(saved.body);

    const key = await gw.api('POST', '/api-keys', { name: 'ws', scopes: ['logs.view'] });
    expect(key.status).toBe(201);
    expect((await gw.api('GET', '/organisation/sso', undefined, key.body.key)).status).toBe(403);
    expect((await gw.api('PUT', '/organisation/sso', settings(), key.body.key)).status).toBe(403);
  });

  it('publish the sign-in configuration without authentication, endpoints from discovery', async () => {
    const res = await fetch(`${gw.url}/organisation/sso/config?organisation=${gw.organisationId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      object: 'organisation.sso.config',
      organisation_id: gw.organisationId,
      issuer: idp.issuer,
      client_id: CLIENT_ID,
      scopes: 'openid email profile',
      authorization_endpoint: `${idp.issuer}/authorize`,
      token_endpoint: `${idp.issuer}/token`,
    });
    // Without an organisation: the deployment's own (bootstrap) organisation.
    expect((await gw.api('GET', '/organisation/sso/config', undefined, '')).body.issuer).toBe(idp.issuer);
  });

  it('claim an issuer for one organisation only', async () => {
    const org = await createOrganisation();
    const res = await gw.api('PUT', '/organisation/sso', settings(), org.adminKey);
    expect(res.status).toBe(409);
    expect(res.body.error.param).toBe('issuer');
  });
});

describe('an ID token from the configured issuer', () => {
  it('authenticates API calls in the mapped workspace with the mapped scopes; the log names the user', async () => {
    const res = await chat(idp.idToken(CLIENT_ID));
    expect(res.status).toBe(200);
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') ?? '');
    expect(log.workspace).toBe('team-a');
    expect(log.auth).toEqual({ type: 'jwt', subject: 'grace@example.com' });
    expect(log.organisation_id).toBe(gw.organisationId);

    // Only completions.write was mapped: reading logs is refused.
    const logs = await gw.api('GET', '/logs', undefined, idp.idToken(CLIENT_ID, { sub: 'u-3' }));
    expect(logs.status).toBe(403);
    const viewer = idp.idToken(CLIENT_ID, { groups: ['gateway.logs.view'], sub: 'u-4' });
    expect((await gw.api('GET', '/logs', undefined, viewer)).status).toBe(200);
  });

  it('is refused from another issuer, for another audience, with another key or for an unknown workspace', async () => {
    const refused = async (token: string, text: string) => {
      const res = await chat(token);
      expect(res.status).toBe(401);
      expect(res.body.error?.message).toBe(`Error Verifying JWT token: ${text}`);
    };
    // An issuer no organisation configured: checked as a gateway JWT, whose header must say typ JWT.
    await refused(other.idToken(CLIENT_ID), 'Invalid Token Type (typ must be JWT)');
    // Another provider's key (same kid) claiming the configured issuer.
    await refused(other.idToken(CLIENT_ID, { iss: idp.issuer }), 'Invalid Signature');
    const unknownKey = signJwt(
      { iss: idp.issuer, aud: CLIENT_ID, exp: nowSeconds() + 600, ...idp.user },
      makeKey('x'),
    );
    await refused(unknownKey, 'Signing Key Not Found');
    await refused(idp.idToken('another-client'), 'Invalid Audience (aud)');
    await refused(idp.idToken(CLIENT_ID, { exp: nowSeconds() - 3600 }), 'Token Expired');
    await refused(idp.idToken(CLIENT_ID, { gw_workspace: 'nowhere' }), 'Unknown Workspace');
    await refused(
      idp.idToken(CLIENT_ID, { gw_workspace: undefined }),
      'Missing Workspace Claim (gateway_workspace or workspace_slug)',
    );
  });

  it('maps a fixed workspace and fixed scopes, and can be removed', async () => {
    const put = await gw.api('PUT', '/organisation/sso', {
      ...settings(),
      workspace_claim: undefined,
      workspace: 'default',
      scopes_claim: undefined,
      gateway_scopes: ['completions.write', 'logs.view'],
      audience: 'api://gateway',
    });
    expect(put.status).toBe(200);
    const token = idp.idToken('api://gateway', { sub: 'u-5', email: undefined });
    const res = await chat(token);
    expect(res.status).toBe(200);
    const log = await waitForLog(gw, res.headers.get('x-gateway-request-id') ?? '');
    expect(log.workspace).toBe('default');
    expect(log.auth).toEqual({ type: 'jwt', subject: 'u-5' });
    expect((await gw.api('GET', '/logs', undefined, token)).status).toBe(200);

    expect((await gw.api('DELETE', '/organisation/sso')).status).toBe(200);
    expect((await gw.api('GET', '/organisation/sso')).status).toBe(404);
    // The issuer is free again for another organisation.
    const org = await createOrganisation();
    expect((await gw.api('PUT', '/organisation/sso', settings(), org.adminKey)).status).toBe(200);
  });
});
