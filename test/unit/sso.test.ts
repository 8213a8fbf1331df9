import { describe, expect, it } from 'vitest';
import { checkHeader, JwtVerificationError, mapSsoClaims } from '../../functions/control/jwt-token';
import { checkIssuer } from '../../functions/control/sso';

describe('mapSsoClaims', () => {
  it('reads workspace and scopes from the configured claims, the user from email then sub', () => {
    const mapped = mapSsoClaims(
      {
        sub: 's',
        email: 'a@example.com',
        ws: 'team-a',
        groups: ['gateway.logs.view', 'Everyone', 'completions.write'],
      },
      { workspaceClaim: 'ws', scopesClaim: 'groups' },
    );
    expect(mapped).toEqual({
      workspace: 'team-a',
      scopes: new Set(['logs.view', 'completions.write']),
      subject: 'a@example.com',
    });
    expect(
      mapSsoClaims({ sub: 's', scp: 'logs.view' }, { workspace: 'default', scopesClaim: 'scp' }).subject,
    ).toBe('s');
  });

  it('uses fixed values when configured, ignoring the token', () => {
    const mapped = mapSsoClaims(
      { sub: 's', ws: 'other' },
      { workspace: 'default', gatewayScopes: ['logs.view'] },
    );
    expect(mapped.workspace).toBe('default');
    expect([...mapped.scopes]).toEqual(['logs.view']);
  });

  it('refuses a token without the mapped claims', () => {
    const kind = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return (error as JwtVerificationError).kind;
      }
      return 'accepted';
    };
    expect(kind(() => mapSsoClaims({ groups: [] }, { workspaceClaim: 'ws', scopesClaim: 'groups' }))).toBe(
      'missing_workspace',
    );
    expect(kind(() => mapSsoClaims({ ws: 'a b' }, { workspaceClaim: 'ws', scopesClaim: 'groups' }))).toBe(
      'invalid_claim',
    );
    expect(kind(() => mapSsoClaims({ ws: 'a' }, { workspaceClaim: 'ws', scopesClaim: 'groups' }))).toBe(
      'missing_scope',
    );
  });
});

describe('checkHeader for identity-provider tokens', () => {
  it('accepts a missing typ only when asked, never another typ or algorithm', () => {
    expect(checkHeader({ alg: 'RS256', kid: 'k' }, true)).toBe('k');
    expect(() => checkHeader({ alg: 'RS256', kid: 'k' })).toThrow(JwtVerificationError);
    expect(() => checkHeader({ alg: 'RS256', typ: 'at+jwt', kid: 'k' }, true)).toThrow(JwtVerificationError);
    expect(() => checkHeader({ alg: 'HS256', kid: 'k' }, true)).toThrow(JwtVerificationError);
  });
});

describe('checkIssuer', () => {
  it('takes https, http only on loopback locally, and no query, fragment or credentials', () => {
    expect(checkIssuer('https://idp.example.com/oauth2/default', false)).toBe(
      'https://idp.example.com/oauth2/default',
    );
    expect(checkIssuer('http://127.0.0.1:9000', true)).toBe('http://127.0.0.1:9000');
    expect(() => checkIssuer('http://127.0.0.1:9000', false)).toThrow(/https/);
    expect(() => checkIssuer('http://idp.example.com', true)).toThrow(/https/);
    expect(() => checkIssuer('https://idp.example.com/?x=1', false)).toThrow(/query/);
    expect(() => checkIssuer('https://u:p@idp.example.com', false)).toThrow(/credentials/);
    expect(() => checkIssuer('', false)).toThrow(/issuer/);
  });
});
