import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeJwt, JwtVerificationError } from '../../functions/control/jwt-token';
import { defaultJwtVerifierOptions, JwtTokenVerifier } from '../../functions/control/jwt-verifier';
import type { ControlStore, JwtSettingsRecord } from '../../functions/store/control-store';
import { claims, makeKey, signJwt, type TestKey } from '../support/jwt';

// The verifier's caches, with an in-memory store and a controlled clock.

const ORG = 'org_unit';
const keyA = makeKey('a');
const keyB = makeKey('b');

function fakeStore(keys: TestKey[]) {
  const calls = { settings: 0, workspace: 0 };
  let settings: JwtSettingsRecord | undefined;
  const setKeys = (next: TestKey[]) => {
    settings = {
      organisation_id: ORG,
      jwks_json: JSON.stringify({ keys: next.map((k) => k.jwk) }),
      created_at: '',
      updated_at: '',
    };
  };
  setKeys(keys);
  const store = {
    getJwtSettings: async () => {
      calls.settings++;
      return settings;
    },
    getOrganisation: async (id: string) => (id === ORG ? { id, name: 'x', created_at: '' } : undefined),
    getWorkspace: async (_org: string, slug: string) => {
      calls.workspace++;
      return slug === 'default'
        ? { id: 'ws', slug, name: 'd', organisation_id: ORG, created_at: '' }
        : undefined;
    },
  };
  return { store: store as unknown as ControlStore, calls, setKeys };
}

async function kindOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof JwtVerificationError) return error.kind;
    throw error;
  }
  return 'ok';
}

describe('JwtTokenVerifier caches', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  const options = { ...defaultJwtVerifierOptions(), settingsTtlMs: 1_000, skewSeconds: 60, tokenCacheMax: 2 };
  const verify = (v: JwtTokenVerifier, token: string) => v.verify(token, decodeJwt(token) ?? fail());
  const fail = (): never => {
    throw new Error('not a JWT');
  };

  it('serves a validated token from the cache, re-checking exp on every hit', async () => {
    const { store, calls } = fakeStore([keyA]);
    const v = new JwtTokenVerifier(store, options);
    const now = Math.floor(Date.now() / 1000);
    const token = signJwt(claims(ORG, { iat: now, exp: now + 10 }), keyA);
    expect((await verify(v, token)).type).toBe('jwt');
    expect(await kindOf(verify(v, token))).toBe('ok');
    expect(calls.workspace).toBe(1);
    vi.setSystemTime(Date.now() + 69_000);
    expect(await kindOf(verify(v, token))).toBe('ok');
    vi.setSystemTime(Date.now() + 2_000);
    expect(await kindOf(verify(v, token))).toBe('expired');
  });

  it('drops a cached token whose key left the set once the settings cache expires', async () => {
    const { store, setKeys, calls } = fakeStore([keyA, keyB]);
    const v = new JwtTokenVerifier(store, options);
    const token = signJwt(claims(ORG), keyB);
    expect(await kindOf(verify(v, token))).toBe('ok');
    setKeys([keyA]);
    expect(await kindOf(verify(v, token))).toBe('ok');
    vi.setSystemTime(Date.now() + 1_001);
    expect(await kindOf(verify(v, token))).toBe('signing_key_not_found');
    expect(calls.settings).toBe(2);
  });

  it('keeps at most tokenCacheMax validated tokens', async () => {
    const { store, calls } = fakeStore([keyA]);
    const v = new JwtTokenVerifier(store, options);
    const tokens = ['1', '2', '3'].map((sub) => signJwt(claims(ORG, { sub }), keyA));
    for (const t of tokens) await verify(v, t);
    expect(calls.workspace).toBe(3);
    await verify(v, tokens[2] as string);
    expect(calls.workspace).toBe(3);
    await verify(v, tokens[0] as string);
    expect(calls.workspace).toBe(4);
  });
});
