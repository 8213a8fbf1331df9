import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkJwksUrl, KeySetError, modulusBits, validateKeySet } from '../../functions/control/jwt-settings';

const rsa = (bits: number, kid = 'k') => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return {
    pub: { ...publicKey.export({ format: 'jwk' }), kid },
    priv: { ...privateKey.export({ format: 'jwk' }), kid },
  };
};
const k2048 = rsa(2048);

describe('validateKeySet', () => {
  it('keeps only the public parameters of RSA keys', () => {
    const set = validateKeySet({
      keys: [{ ...k2048.pub, use: 'sig', alg: 'RS256', x5c: ['...'], extra: 1 }],
    });
    expect(set.keys).toEqual([
      { kty: 'RSA', kid: 'k', n: k2048.pub.n, e: k2048.pub.e, use: 'sig', alg: 'RS256' },
    ]);
  });

  it.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])('refuses the private parameter %s', (param) => {
    expect(() => validateKeySet({ keys: [{ ...k2048.pub, [param]: 'AQAB' }] })).toThrow(
      /private key parameters/,
    );
  });

  it('refuses a private JWK, non-RSA keys, keys without kid, bad use or alg, duplicates and empty sets', () => {
    const bad: unknown[] = [
      { keys: [k2048.priv] },
      { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'e' }] },
      { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AA', kid: 'o' }] },
      { keys: [{ ...k2048.pub, kid: undefined }] },
      { keys: [{ ...k2048.pub, kid: '' }] },
      { keys: [{ ...k2048.pub, use: 'enc' }] },
      { keys: [{ ...k2048.pub, alg: 'RS384' }] },
      { keys: [k2048.pub, k2048.pub] },
      { keys: [{ ...k2048.pub, n: 'not base64url!' }] },
      { keys: [] },
      { keys: 'x' },
      {},
      [],
      null,
      'keys',
    ];
    for (const value of bad) expect(() => validateKeySet(value), JSON.stringify(value)).toThrow(KeySetError);
  });

  it('measures the modulus: 2048 bits pass, 2047 and 1024 do not', () => {
    expect(modulusBits(String(k2048.pub.n))).toBe(2048);
    const k1024 = rsa(1024);
    expect(modulusBits(String(k1024.pub.n))).toBe(1024);
    expect(() => validateKeySet({ keys: [k1024.pub] })).toThrow(/1024-bit RSA key; at least 2048/);
    // A leading zero byte does not count; a 2047-bit modulus is too small.
    const n2047 = Buffer.alloc(256, 0xff);
    n2047[0] = 0x7f;
    expect(modulusBits(Buffer.concat([Buffer.from([0]), n2047]).toString('base64url'))).toBe(2047);
    expect(() => validateKeySet({ keys: [{ ...k2048.pub, n: n2047.toString('base64url') }] })).toThrow(
      /2047-bit/,
    );
    expect(modulusBits(rsa(3072).pub.n as string)).toBe(3072);
  });
});

describe('checkJwksUrl', () => {
  it('takes https anywhere', () => {
    expect(checkJwksUrl('https://idp.example.com/jwks.json', false).href).toBe(
      'https://idp.example.com/jwks.json',
    );
  });

  it('takes plain http only for loopback and only in the local runtime', () => {
    for (const url of ['http://127.0.0.1:8080/jwks', 'http://localhost/jwks', 'http://[::1]:9/jwks']) {
      expect(() => checkJwksUrl(url, true)).not.toThrow();
      expect(() => checkJwksUrl(url, false)).toThrow(KeySetError);
    }
    expect(() => checkJwksUrl('http://10.0.0.1/jwks', true)).toThrow(/loopback/);
    expect(() => checkJwksUrl('http://example.com/jwks', true)).toThrow(KeySetError);
  });

  it('refuses credentials, other schemes and non-URLs', () => {
    expect(() => checkJwksUrl('https://a:b@idp.example.com/jwks', false)).toThrow(/credentials/);
    expect(() => checkJwksUrl('file:///etc/passwd', true)).toThrow(KeySetError);
    expect(() => checkJwksUrl('idp.example.com/jwks', false)).toThrow(/absolute URL/);
  });
});
