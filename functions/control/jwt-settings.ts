import { createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import { badRequest, notFound } from '../core/errors';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { ControlStore, type JwtSettingsRecord } from '../store/control-store';
import { asObject } from './api-keys';
import { JWT_SETTINGS } from './bodies';
import { refuseUnknownFields } from './fields';
import { DEFAULT_MAX_TOKEN_LIFETIME_SECONDS } from './jwt-token';

// The organisation's JWT key set: a JWKS URL or a static JWKS, exactly one. Public RSA keys of 2048 bits
// or more, each with a `kid`; no private material ever reaches the store or a verifier.

export const MIN_RSA_BITS = 2048;
const MAX_KEYS = 100;
const PRIVATE_PARAMETERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A public RSA signing key as the gateway keeps it: only these fields survive validation. */
export interface PublicRsaJwk {
  kty: 'RSA';
  kid: string;
  n: string;
  e: string;
  use?: 'sig';
  alg?: 'RS256';
}

export interface KeySet {
  keys: PublicRsaJwk[];
}

/** Why a key set was refused; its message names the offending key and field. */
export class KeySetError extends Error {
  override name = 'KeySetError';
}

/** Bits of an RSA modulus given as base64url, leading zero bytes ignored. */
export function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i] as number));
}

/** Checks a key set (from a PUT body or fetched from a URL) and returns its public keys only. */
export function validateKeySet(value: unknown): KeySet {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new KeySetError('The key set must be a JSON object with a "keys" array.');
  }
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) throw new KeySetError('The key set must have a "keys" array.');
  if (keys.length === 0) throw new KeySetError('The key set holds no keys.');
  if (keys.length > MAX_KEYS) throw new KeySetError(`The key set holds more than ${MAX_KEYS} keys.`);
  const seen = new Set<string>();
  return { keys: keys.map((key, i) => validateKey(key, `keys[${i}]`, seen)) };
}

function validateKey(key: unknown, where: string, seen: Set<string>): PublicRsaJwk {
  if (!key || typeof key !== 'object' || Array.isArray(key)) {
    throw new KeySetError(`${where} must be a JSON object.`);
  }
  const jwk = key as Record<string, unknown>;
  // Checked first: a key set that leaks private material is refused whatever else is wrong with it.
  const leaked = PRIVATE_PARAMETERS.filter((p) => p in jwk);
  if (leaked.length > 0) {
    throw new KeySetError(
      `${where} holds private key parameters (${leaked.join(', ')}); publish public keys only.`,
    );
  }
  if (jwk.kty !== 'RSA') {
    throw new KeySetError(`${where} has kty ${JSON.stringify(jwk.kty ?? null)}; only RSA keys are accepted.`);
  }
  if (typeof jwk.kid !== 'string' || jwk.kid === '' || jwk.kid.length > 256) {
    throw new KeySetError(`${where} has no kid; every key needs one (1 to 256 characters).`);
  }
  if (seen.has(jwk.kid)) throw new KeySetError(`${where} repeats the kid ${JSON.stringify(jwk.kid)}.`);
  seen.add(jwk.kid);
  if (
    typeof jwk.n !== 'string' ||
    !BASE64URL.test(jwk.n) ||
    typeof jwk.e !== 'string' ||
    !BASE64URL.test(jwk.e)
  ) {
    throw new KeySetError(`${where} needs the RSA modulus n and exponent e, base64url-encoded.`);
  }
  const bits = modulusBits(jwk.n);
  if (bits < MIN_RSA_BITS) {
    throw new KeySetError(`${where} is a ${bits}-bit RSA key; at least ${MIN_RSA_BITS} bits are required.`);
  }
  if (jwk.use !== undefined && jwk.use !== 'sig') {
    throw new KeySetError(`${where} has use ${JSON.stringify(jwk.use)}; signing keys have use "sig".`);
  }
  if (jwk.alg !== undefined && jwk.alg !== 'RS256') {
    throw new KeySetError(`${where} has alg ${JSON.stringify(jwk.alg)}; tokens must be signed with RS256.`);
  }
  const clean: PublicRsaJwk = { kty: 'RSA', kid: jwk.kid, n: jwk.n, e: jwk.e };
  if (jwk.use !== undefined) clean.use = 'sig';
  if (jwk.alg !== undefined) clean.alg = 'RS256';
  try {
    createPublicKey({ key: { ...clean }, format: 'jwk' });
  } catch {
    throw new KeySetError(`${where} is not a usable RSA public key.`);
  }
  return clean;
}

/** The local runtime sets GATEWAY_LOCAL=1; only there may a key set be served over plain HTTP. */
export const isLocalRuntime = () => settings().local;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** A JWKS URL the gateway may fetch: HTTPS, or HTTP on loopback in the local runtime; no credentials. */
export function checkJwksUrl(value: string, local = isLocalRuntime()): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new KeySetError('jwks_url must be an absolute URL.');
  }
  if (url.username || url.password) throw new KeySetError('jwks_url must not carry credentials.');
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && local && isLoopback(url.hostname)) return url;
  throw new KeySetError(
    local
      ? 'jwks_url must be an https URL (http is accepted only for loopback addresses in the local runtime).'
      : 'jwks_url must be an https URL.',
  );
}

/** The public view of the configuration. */
export function presentJwtSettings(record: JwtSettingsRecord) {
  return {
    object: 'organisation.jwt',
    organisation_id: record.organisation_id,
    ...(record.jwks_url !== undefined ? { jwks_url: record.jwks_url } : {}),
    ...(record.jwks_json !== undefined ? { jwks: JSON.parse(record.jwks_json) as KeySet } : {}),
    issuer: record.issuer ?? null,
    audience: record.audience ?? null,
    max_token_lifetime_seconds: record.max_token_lifetime_seconds ?? DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

const MAX_LIFETIME = 366 * 86_400;

/** The optional `issuer`, `audience` (a string or a list) and `max_token_lifetime_seconds`. */
function parseTokenRules(
  body: Record<string, unknown>,
): Pick<JwtSettingsRecord, 'issuer' | 'audience' | 'max_token_lifetime_seconds'> {
  const rules: Pick<JwtSettingsRecord, 'issuer' | 'audience' | 'max_token_lifetime_seconds'> = {};
  const { issuer, audience, max_token_lifetime_seconds: lifetime } = body;
  if (issuer !== undefined && issuer !== null) {
    if (typeof issuer !== 'string' || issuer === '' || issuer.length > 1024) {
      throw badRequest('issuer must be a string of 1 to 1024 characters.', 'issuer');
    }
    rules.issuer = issuer;
  }
  if (audience !== undefined && audience !== null) {
    const list = typeof audience === 'string' ? [audience] : audience;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.length > 20 ||
      list.some((a) => typeof a !== 'string' || a === '' || a.length > 1024)
    ) {
      throw badRequest('audience must be a string or a list of 1 to 20 strings.', 'audience');
    }
    rules.audience = list as string[];
  }
  if (lifetime !== undefined && lifetime !== null) {
    if (!Number.isInteger(lifetime) || (lifetime as number) < 60 || (lifetime as number) > MAX_LIFETIME) {
      throw badRequest(
        `max_token_lifetime_seconds must be a whole number from 60 to ${MAX_LIFETIME}.`,
        'max_token_lifetime_seconds',
      );
    }
    rules.max_token_lifetime_seconds = lifetime as number;
  }
  return rules;
}

export class JwtSettingsService {
  constructor(private readonly store = new ControlStore()) {}

  async get(caller: Principal): Promise<JwtSettingsRecord> {
    const record = await this.store.getJwtSettings(caller.organisationId);
    if (!record) throw notFound('JWT authentication is not configured for this organisation.');
    return record;
  }

  /** Replaces the key set configuration; validated here so a bad key set is a 400, not failed logins. */
  async put(caller: Principal, input: unknown): Promise<JwtSettingsRecord> {
    const body = asObject(input);
    refuseUnknownFields(body, JWT_SETTINGS);
    const rules = parseTokenRules(body);
    const hasUrl = body.jwks_url !== undefined && body.jwks_url !== null;
    const hasJwks = body.jwks !== undefined && body.jwks !== null;
    if (hasUrl === hasJwks) {
      throw badRequest(
        'Send exactly one of jwks_url (a URL) and jwks (a JSON object with a "keys" array).',
        'jwks_url',
      );
    }
    const now = new Date().toISOString();
    const existing = await this.store.getJwtSettings(caller.organisationId);
    const record: JwtSettingsRecord = {
      organisation_id: caller.organisationId,
      ...rules,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    try {
      if (hasUrl) {
        if (typeof body.jwks_url !== 'string' || body.jwks_url.length > 2048) {
          throw new KeySetError('jwks_url must be a URL of at most 2048 characters.');
        }
        record.jwks_url = checkJwksUrl(body.jwks_url).href;
      } else {
        record.jwks_json = JSON.stringify(validateKeySet(body.jwks));
      }
    } catch (error) {
      if (error instanceof KeySetError) throw badRequest(error.message, hasUrl ? 'jwks_url' : 'jwks');
      throw error;
    }
    await this.store.putJwtSettings(record);
    return record;
  }

  async delete(caller: Principal): Promise<void> {
    if (!(await this.store.deleteJwtSettings(caller.organisationId))) {
      throw notFound('JWT authentication is not configured for this organisation.');
    }
  }
}
