import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeKey, nowSeconds, signJwt, type TestKey } from './jwt';

// A small OpenID Provider on 127.0.0.1: discovery, JWKS, an /authorize that signs the test user in at
// once and redirects back with a code, and a /token that checks PKCE and returns an RS256 ID token.

export interface FakeOidc {
  issuer: string;
  key: TestKey;
  /** Claims of the signed-in user, added to every ID token. */
  user: Record<string, unknown>;
  /** An ID token as /token would return it; `extra` overrides claims. */
  idToken(clientId: string, extra?: Record<string, unknown>): string;
  /** The last /authorize query and /token form seen. */
  last: { authorize?: URLSearchParams; token?: URLSearchParams };
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
}

export async function startFakeOidc(user: Record<string, unknown>): Promise<FakeOidc> {
  const key = makeKey('oidc-key-1');
  const grants = new Map<string, Grant>();
  const last: FakeOidc['last'] = {};
  let issuer = '';
  const idToken = (clientId: string, extra: Record<string, unknown> = {}) =>
    signJwt(
      {
        iss: issuer,
        aud: clientId,
        iat: nowSeconds(),
        exp: nowSeconds() + 3600,
        ...user,
        ...extra,
      },
      key,
      // Like Cognito's and Okta's ID tokens: no typ in the header.
      { typ: undefined },
    );

  const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type' };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json', ...cors }).end(JSON.stringify(body));

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: [key.jwk] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      last.authorize = q;
      const redirect = new URL(q.get('redirect_uri') ?? '');
      if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256') {
        redirect.searchParams.set('error', 'invalid_request');
      } else {
        const code = randomBytes(16).toString('hex');
        grants.set(code, {
          clientId: q.get('client_id') ?? '',
          redirectUri: q.get('redirect_uri') ?? '',
          challenge: q.get('code_challenge') ?? '',
          nonce: q.get('nonce'),
        });
        redirect.searchParams.set('code', code);
      }
      redirect.searchParams.set('state', q.get('state') ?? '');
      return res.writeHead(302, { location: redirect.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        last.token = form;
        const grant = grants.get(form.get('code') ?? '');
        grants.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (
          !grant ||
          form.get('grant_type') !== 'authorization_code' ||
          form.get('client_id') !== grant.clientId ||
          form.get('redirect_uri') !== grant.redirectUri ||
          challenge !== grant.challenge
        ) {
          return json(res, 400, { error: 'invalid_grant' });
        }
        const token = idToken(grant.clientId, grant.nonce ? { nonce: grant.nonce } : {});
        return json(res, 200, {
          token_type: 'Bearer',
          expires_in: 3600,
          id_token: token,
          access_token: 'opaque',
        });
      });
      return;
    }
    res.writeHead(404, cors).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    get issuer() {
      return issuer;
    },
    key,
    user,
    idToken,
    last,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
