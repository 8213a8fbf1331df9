import { describe, expect, it } from 'vitest';
import {
  checkClaims,
  checkHeader,
  decodeJwt,
  JwtVerificationError,
  looksLikeJwt,
  maskToken,
  parseScopeClaim,
  subjectOf,
} from '../../functions/control/jwt-token';

const seg = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const NOW = 1_750_000_000;
const valid = {
  gateway_oid: 'org_1',
  gateway_workspace: 'default',
  scope: 'completions.write',
  exp: NOW + 60,
};

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof JwtVerificationError) return error.kind;
    throw error;
  }
  throw new Error('did not fail');
}

describe('telling a JWT from an API key', () => {
  it('takes three base64url segments whose header is a JSON object', () => {
    expect(looksLikeJwt(`${seg({ alg: 'RS256' })}.${seg({})}.c2ln`)).toBe(true);
    expect(looksLikeJwt(`${seg({ alg: 'none' })}.${seg({})}.`)).toBe(true);
    expect(decodeJwt(`${seg({ alg: 'RS256' })}.${seg({ a: 1 })}.c2ln`)?.payload).toEqual({ a: 1 });
  });

  it('leaves API keys and other values alone', () => {
    for (const value of [
      'gwk_abcDEF123-_xyz',
      'a.b.c',
      `${seg([1])}.${seg({})}.c2ln`,
      `${seg({ alg: 'RS256' })}.${seg({})}`,
      `${seg({ alg: 'RS256' })}.${seg({})}.c2ln.more`,
      `${seg({ alg: 'RS256' })}.${seg({})}.c2/n`,
      `${seg({ alg: 'RS256' })}.${'A'.repeat(9000)}.c2ln`,
      '',
    ]) {
      expect(looksLikeJwt(value), value.slice(0, 40)).toBe(false);
    }
  });
});

describe('maskToken', () => {
  it('keeps the first and last two characters and replaces every other one with *', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.payload.signatureXk';
    expect(maskToken(token)).toBe(`ey${'*'.repeat(token.length - 4)}Xk`);
    expect(maskToken(token)).toHaveLength(token.length);
    expect(maskToken(`ey${'x'.repeat(900)}Xk`)).toBe(`ey${'*'.repeat(900)}Xk`);
    expect(maskToken('short')).toBe('*****');
  });
});

describe('scopes', () => {
  it('reads a space-separated string or an array, with or without the gateway. prefix, ignoring unknown ones', () => {
    expect([...(parseScopeClaim({ scope: 'gateway.completions.write logs.view' }) ?? [])]).toEqual([
      'completions.write',
      'logs.view',
    ]);
    expect([...(parseScopeClaim({ scopes: ['completions.write', 'gateway.x', 'admin'] }) ?? [])]).toEqual([
      'completions.write',
    ]);
    expect([...(parseScopeClaim({ scope: '' }) ?? [])]).toEqual([]);
    expect(parseScopeClaim({ scope: 'gateway.gateway.logs.view' })?.size).toBe(0);
  });

  it('is absent when the claim is missing or not strings', () => {
    expect(parseScopeClaim({})).toBeUndefined();
    expect(parseScopeClaim({ scope: 1 })).toBeUndefined();
    expect(parseScopeClaim({ scopes: ['completions.write', 2] })).toBeUndefined();
  });
});

describe('subject', () => {
  it('prefers email_id, then sub, then uid', () => {
    expect(subjectOf({ email_id: 'e', sub: 's', uid: 'u' })).toBe('e');
    expect(subjectOf({ email_id: '', sub: 's', uid: 'u' })).toBe('s');
    expect(subjectOf({ uid: 42 })).toBe('42');
    expect(subjectOf({})).toBeUndefined();
  });
});

describe('checkHeader', () => {
  it('needs alg RS256, typ JWT and a kid', () => {
    expect(checkHeader({ alg: 'RS256', typ: 'JWT', kid: 'k' })).toBe('k');
    for (const alg of ['HS256', 'none', 'RS384', 'RS512', 'ES256', 'PS256', undefined, 'rs256']) {
      expect(failure(() => checkHeader({ alg, typ: 'JWT', kid: 'k' }))).toBe('algorithm');
    }
    expect(failure(() => checkHeader({ alg: 'RS256', kid: 'k' }))).toBe('type');
    expect(failure(() => checkHeader({ alg: 'RS256', typ: 'jwt', kid: 'k' }))).toBe('type');
    expect(failure(() => checkHeader({ alg: 'RS256', typ: 'JWT' }))).toBe('missing_kid');
    expect(failure(() => checkHeader({ alg: 'RS256', typ: 'JWT', kid: 7 }))).toBe('missing_kid');
  });
});

describe('checkClaims', () => {
  it('returns the gateway claims of a valid payload, from either claim name', () => {
    expect(checkClaims(valid, NOW, 60)).toMatchObject({
      organisationId: 'org_1',
      workspace: 'default',
      exp: NOW + 60,
    });
    const alt = checkClaims(
      {
        organisation_id: 'org_2',
        workspace_slug: 'team',
        scopes: ['gateway.logs.view'],
        exp: NOW + 1,
        sub: 's',
      },
      NOW,
      60,
    );
    expect(alt).toMatchObject({ organisationId: 'org_2', workspace: 'team', subject: 's' });
    expect([...alt.scopes]).toEqual(['logs.view']);
  });

  it('checks expiry first, with the skew, then nbf and iat, then the required claims', () => {
    const { exp: _exp, ...noExp } = valid;
    expect(failure(() => checkClaims({ ...noExp, gateway_oid: undefined }, NOW, 60))).toBe('missing_exp');
    expect(failure(() => checkClaims({ ...valid, exp: NOW - 61 }, NOW, 60))).toBe('expired');
    expect(failure(() => checkClaims({ ...valid, exp: NOW - 60 }, NOW, 60))).toBe('expired');
    expect(checkClaims({ ...valid, exp: NOW - 59 }, NOW, 60).exp).toBe(NOW - 59);
    expect(failure(() => checkClaims({ ...valid, exp: '1' }, NOW, 60))).toBe('invalid_claim');
    expect(failure(() => checkClaims({ ...valid, nbf: NOW + 61 }, NOW, 60))).toBe('not_yet_valid');
    expect(checkClaims({ ...valid, nbf: NOW + 59, iat: NOW + 59 }, NOW, 60).exp).toBe(NOW + 60);
    expect(failure(() => checkClaims({ ...valid, iat: NOW + 61 }, NOW, 60))).toBe('issued_in_future');
    expect(failure(() => checkClaims({ ...valid, gateway_oid: undefined }, NOW, 60))).toBe(
      'missing_organisation',
    );
    expect(failure(() => checkClaims({ ...valid, gateway_oid: 'org#1' }, NOW, 60))).toBe(
      'missing_organisation',
    );
    expect(failure(() => checkClaims({ ...valid, gateway_workspace: undefined }, NOW, 60))).toBe(
      'missing_workspace',
    );
    expect(failure(() => checkClaims({ ...valid, scope: undefined }, NOW, 60))).toBe('missing_scope');
  });

  it('words each failure as the audit log shows it', () => {
    expect(new JwtVerificationError('signing_key_not_found').message).toBe(
      'Error Verifying JWT token: Signing Key Not Found',
    );
    expect(new JwtVerificationError('expired').message).toBe('Error Verifying JWT token: Token Expired');
  });
});
