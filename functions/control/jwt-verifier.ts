import { createHash } from 'node:crypto';
import { JwtVerifier } from 'aws-jwt-verify';
import {
  FetchError,
  JwtInvalidSignatureError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from 'aws-jwt-verify/error';
import type { Fetcher } from 'aws-jwt-verify/https';
import { type Jwk, type Jwks, type PenaltyBox, SimpleJwksCache } from 'aws-jwt-verify/jwk';
import type { DecomposedJwt } from 'aws-jwt-verify/jwt';
import { logger } from '../core/logger';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { type GuardedReply, guardedFetch } from '../gateway/address-guard';
import { ControlStore, type JwtSettingsRecord, type SsoSettingsRecord } from '../store/control-store';
import { checkJwksUrl, type KeySet, KeySetError, validateKeySet } from './jwt-settings';
import {
  checkClaims,
  checkHeader,
  checkTokenRules,
  claimedOrganisation,
  DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
  type DecodedJwt,
  JwtVerificationError,
  mapSsoClaims,
  type TokenRules,
} from './jwt-token';
import { type DiscoveryCache, discoveryCache } from './sso';

// JWT verification for one container: signatures through aws-jwt-verify against each organisation's
// key set, the key set configuration cached like API keys, validated tokens cached until their `exp`.

export interface JwtVerifierOptions {
  /** Clock skew tolerated on exp, nbf and iat. */
  skewSeconds: number;
  /** Validated tokens kept per container. */
  tokenCacheMax: number;
  /** How long an organisation's key set configuration (from the control table) is trusted. */
  settingsTtlMs: number;
  /** How long a key set fetched from a URL is used before it is fetched again (revocations show then). */
  jwksMaxAgeMs: number;
  /** After a failed fetch, or an unknown kid that a fresh fetch did not find, no fetch for this long. */
  jwksBackoffMs: number;
  jwksFetchTimeoutMs: number;
}

export function defaultJwtVerifierOptions(): JwtVerifierOptions {
  return {
    skewSeconds: 60,
    tokenCacheMax: 10_000,
    settingsTtlMs: settings().authCacheTtlMs,
    jwksMaxAgeMs: settings().jwksCacheTtlMs,
    jwksBackoffMs: settings().jwksBackoffMs,
    jwksFetchTimeoutMs: 3_000,
  };
}

const MAX_JWKS_BYTES = 512 * 1024;

/** Fetches a JWKS through the address guard: the library's own fetcher is https-only and unguarded. */
class JwksFetcher implements Fetcher {
  constructor(private readonly timeoutMs: number) {}

  async fetch(uri: string): Promise<ArrayBuffer> {
    // Checked again here: a stored URL is only fetched if it would be accepted today.
    checkJwksUrl(uri);
    let res: GuardedReply;
    try {
      res = await guardedFetch(uri, {
        headers: { accept: 'application/json' },
        timeoutMs: this.timeoutMs,
        maxBytes: MAX_JWKS_BYTES,
      });
    } catch (error) {
      throw new FetchError(uri, (error as Error).message);
    }
    if (res.status !== 200) throw new FetchError(uri, `status ${res.status}, expected 200`);
    const body = res.body;
    return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  }
}

/** Parses and validates a fetched key set exactly as a configured one: public RSA keys only. */
function parseFetchedKeySet(body: ArrayBuffer): Jwks {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new KeySetError('The key set is not JSON.');
  }
  return validateKeySet(value) as unknown as Jwks;
}

/**
 * The library's SimplePenaltyBox only backs off after a fetch that succeeded without the kid; a URL that
 * is down would then be fetched on every request. This one backs off after any failed attempt, and keeps
 * no timers (a Lambda container may be frozen between requests).
 */
class BackoffPenaltyBox implements PenaltyBox {
  private readonly until = new Map<string, number>();

  constructor(private readonly backoffMs: number) {}

  async wait(jwksUri: string): Promise<void> {
    if ((this.until.get(jwksUri) ?? 0) > Date.now()) {
      throw new WaitPeriodNotYetEndedJwkError('Not fetching the key set again yet: backing off');
    }
  }

  registerFailedAttempt(jwksUri: string): void {
    this.until.set(jwksUri, Date.now() + this.backoffMs);
  }

  registerSuccessfulAttempt(jwksUri: string): void {
    this.until.delete(jwksUri);
  }
}

/** The library's JWKS cache, also remembering when the set was fetched and backing off on fetch failures. */
class UrlJwksCache extends SimpleJwksCache {
  current?: KeySet;
  fetchedAt = 0;

  constructor(
    private readonly box: BackoffPenaltyBox,
    fetcher: Fetcher,
  ) {
    super({ penaltyBox: box, fetcher, jwksParser: parseFetchedKeySet });
  }

  override async getJwks(jwksUri: string): Promise<Jwks> {
    try {
      const jwks = await super.getJwks(jwksUri);
      this.current = jwks as unknown as KeySet;
      this.fetchedAt = Date.now();
      return jwks;
    } catch (error) {
      this.box.registerFailedAttempt(jwksUri);
      throw error;
    }
  }
}

type VerifyProps = { issuer: null; audience: null; jwksUri: string };

/** aws-jwt-verify's verifier, opened up to take a token we decoded ourselves (see `verifySignature`). */
class KeySetVerifier extends JwtVerifier<Omit<VerifyProps, 'jwksUri'>, VerifyProps, false> {
  constructor(
    readonly jwksUri: string,
    cache: SimpleJwksCache,
  ) {
    super({ issuer: null, audience: null, jwksUri }, cache);
  }

  /**
   * The library's own decoder refuses a `scope` claim that is an array, which the gateway accepts; so
   * the token is decoded by us, and the library verifies the signature over the original segments. The
   * payload handed to it is empty: time and claim checks are ours, with their own messages.
   */
  async verifySignature(decoded: DecodedJwt, sync: boolean): Promise<Jwk> {
    let used: Jwk | undefined;
    const jwt: DecomposedJwt = {
      header: decoded.header as DecomposedJwt['header'],
      headerB64: decoded.headerB64,
      payload: {},
      payloadB64: decoded.payloadB64,
      signatureB64: decoded.signatureB64,
    };
    const props = {
      issuer: null,
      audience: null,
      customJwtCheck: ({ jwk }: { jwk: Jwk }) => {
        used = jwk;
      },
    };
    if (sync) this.verifyDecomposedJwtSync(jwt, this.jwksUri, props);
    else await this.verifyDecomposedJwt(jwt, this.jwksUri, props);
    if (!used) throw new JwtVerificationError('invalid_signature');
    return used;
  }
}

/** One organisation's key set as configured: a static JWKS, or a URL with its fetched set. */
export class OrgKeySet {
  private readonly verifier: KeySetVerifier;
  private readonly urlCache?: UrlJwksCache;
  private readonly staticKeys?: Map<string, string>;
  private nextRefreshAt = 0;

  constructor(
    public record: JwtSettingsRecord,
    private readonly options: JwtVerifierOptions,
  ) {
    if (record.jwks_url !== undefined) {
      this.urlCache = new UrlJwksCache(
        new BackoffPenaltyBox(options.jwksBackoffMs),
        new JwksFetcher(options.jwksFetchTimeoutMs),
      );
      this.verifier = new KeySetVerifier(record.jwks_url, this.urlCache);
    } else {
      const keySet = JSON.parse(record.jwks_json ?? '{"keys":[]}') as KeySet;
      this.staticKeys = new Map(keySet.keys.map((k) => [k.kid, k.n]));
      // A static set has no URL; the library keys its cache by one, so it gets a name that is never fetched.
      this.verifier = new KeySetVerifier(`static:${record.organisation_id}`, new SimpleJwksCache());
      this.verifier.cacheJwks(keySet as unknown as Jwks);
    }
  }

  /** Same configuration: the caches of this instance (fetched set, key objects) stay valid. */
  matches(record: JwtSettingsRecord): boolean {
    return record.jwks_url === this.record.jwks_url && record.jwks_json === this.record.jwks_json;
  }

  /** The organisation's issuer, audience and lifetime rules, as the settings hold them now. */
  rules(): TokenRules {
    const r = this.record;
    return {
      ...(r.issuer !== undefined ? { issuer: r.issuer } : {}),
      ...(r.audience !== undefined ? { audience: r.audience } : {}),
      maxLifetimeSeconds: r.max_token_lifetime_seconds ?? DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
    };
  }

  /** Verifies the signature; returns the key that verified it. */
  async verify(decoded: DecodedJwt, kid: string): Promise<Jwk> {
    await this.refreshIfStale();
    try {
      return await this.verifier.verifySignature(decoded, this.urlCache === undefined);
    } catch (error) {
      throw this.failure(error, kid);
    }
  }

  /** Whether the key that verified a cached token is still in the set (a removed key stops its tokens). */
  async holds(kid: string, n: string): Promise<boolean> {
    if (this.staticKeys) return this.staticKeys.get(kid) === n;
    await this.refreshIfStale();
    return this.urlCache?.current?.keys.some((k) => k.kid === kid && k.n === n) ?? false;
  }

  /** Fetches a URL key set again once it is older than its max age; a failed refresh keeps the old set. */
  private async refreshIfStale(): Promise<void> {
    const cache = this.urlCache;
    const now = Date.now();
    if (!cache?.current || now - cache.fetchedAt < this.options.jwksMaxAgeMs || now < this.nextRefreshAt)
      return;
    try {
      await cache.getJwks(this.verifier.jwksUri);
    } catch (error) {
      this.nextRefreshAt = now + this.options.jwksBackoffMs;
      logger.warn('JWKS refresh failed; using the key set fetched before', {
        organisation_id: this.record.organisation_id,
        error: (error as Error).message,
      });
    }
  }

  private failure(error: unknown, kid: string): JwtVerificationError {
    if (error instanceof JwtVerificationError) return error;
    if (error instanceof KidNotFoundInJwksError) return new JwtVerificationError('signing_key_not_found');
    if (error instanceof WaitPeriodNotYetEndedJwkError) {
      // Backing off: with a set in hand the kid is simply not in it; without one the set is unavailable.
      return this.urlCache?.current
        ? new JwtVerificationError('signing_key_not_found')
        : new JwtVerificationError('key_set_unavailable', 'backing off after a failed fetch');
    }
    if (error instanceof KeySetError || error instanceof FetchError) {
      return new JwtVerificationError('key_set_unavailable', error.message.slice(0, 500));
    }
    if (error instanceof JwtInvalidSignatureError) return new JwtVerificationError('invalid_signature');
    logger.warn('JWT signature check failed', { kid, error: (error as Error).message });
    return new JwtVerificationError('invalid_signature');
  }
}

interface CachedToken {
  principal: Principal;
  exp: number;
  kid: string;
  /** Modulus of the verifying key: a kid reused for another key does not keep old tokens alive. */
  n: string;
  /** `updated_at` of the settings it was checked against. */
  settingsAt: string;
  /** Signed by the organisation's single sign-on issuer, not its JWT key set. */
  sso: boolean;
}

/** An organisation's single sign-on: its settings and the key set its issuer's discovery names. */
interface SsoKeySet {
  settings: SsoSettingsRecord;
  keySet: OrgKeySet;
}

interface SettingsEntry {
  keySet: Promise<OrgKeySet | null>;
  expires: number;
}

const SETTINGS_CACHE_MAX = 1_000;

export class JwtTokenVerifier {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly settings = new Map<string, SettingsEntry>();
  private readonly ssoSettings = new Map<string, { keySet: Promise<SsoKeySet | null>; expires: number }>();

  constructor(
    private readonly store = new ControlStore(),
    private readonly options = defaultJwtVerifierOptions(),
    private readonly discovery: DiscoveryCache = discoveryCache,
  ) {}

  /**
   * A principal for a valid token; otherwise a `JwtVerificationError` carrying the organisation it
   * belongs to when that organisation exists.
   */
  async verify(token: string, decoded: DecodedJwt): Promise<Principal> {
    const hash = createHash('sha256').update(token).digest('base64url');
    const hit = this.tokens.get(hash);
    if (hit) {
      const keySet = hit.sso
        ? (await this.ssoKeySetFor(hit.principal.organisationId))?.keySet
        : await this.keySetFor(hit.principal.organisationId);
      // Settings changed since (issuer, audience, lifetime): the token is checked afresh against them.
      if (
        Date.now() / 1000 < hit.exp + this.options.skewSeconds &&
        keySet?.record.updated_at === hit.settingsAt &&
        (await keySet.holds(hit.kid, hit.n))
      ) {
        return hit.principal;
      }
      // Expired or its key removed: verify afresh, which fails with the reason and is audited.
      this.tokens.delete(hash);
    }

    let knownOrganisation: string | null = null;
    try {
      // A token without the gateway's organisation claim may come from an organisation's identity provider.
      const ssoOrganisation = claimedOrganisation(decoded.payload)
        ? undefined
        : typeof decoded.payload.iss === 'string' && decoded.payload.iss.length <= 1024
          ? await this.store.getSsoIssuerOrganisation(decoded.payload.iss)
          : undefined;
      if (ssoOrganisation) {
        knownOrganisation = ssoOrganisation;
        return await this.verifySso(hash, decoded, ssoOrganisation);
      }
      const kid = checkHeader(decoded.header);
      const organisationId = claimedOrganisation(decoded.payload);
      if (!organisationId) throw new JwtVerificationError('missing_organisation');
      const keySet = await this.keySetFor(organisationId);
      if (!keySet) {
        if (await this.store.getOrganisation(organisationId)) knownOrganisation = organisationId;
        throw new JwtVerificationError('not_configured');
      }
      knownOrganisation = organisationId;
      const jwk = await keySet.verify(decoded, kid);
      const claims = checkClaims(
        decoded.payload,
        Date.now() / 1000,
        this.options.skewSeconds,
        keySet.rules(),
      );
      const [organisation, workspace] = await Promise.all([
        this.store.getOrganisation(organisationId),
        this.store.getWorkspace(organisationId, claims.workspace),
      ]);
      if (!organisation) throw new JwtVerificationError('not_configured');
      if (!workspace) throw new JwtVerificationError('unknown_workspace');
      return this.remember(hash, organisationId, claims, {
        exp: claims.exp,
        kid,
        n: String(jwk.n),
        settingsAt: keySet.record.updated_at,
        sso: false,
      });
    } catch (error) {
      // Unresolved (null) here is settled by the caller with `existingOrganisation`, once.
      if (error instanceof JwtVerificationError) error.organisationId = knownOrganisation;
      throw error;
    }
  }

  /** An identity provider's token, through the organisation's single sign-on settings. */
  private async verifySso(hash: string, decoded: DecodedJwt, organisationId: string): Promise<Principal> {
    const kid = checkHeader(decoded.header, true);
    const sso = await this.ssoKeySetFor(organisationId);
    if (!sso) throw new JwtVerificationError('not_configured');
    const jwk = await sso.keySet.verify(decoded, kid);
    const exp = checkTokenRules(
      decoded.payload,
      Date.now() / 1000,
      this.options.skewSeconds,
      sso.keySet.rules(),
    );
    const { settings } = sso;
    const claims = mapSsoClaims(decoded.payload, {
      ...(settings.workspace_claim !== undefined ? { workspaceClaim: settings.workspace_claim } : {}),
      ...(settings.workspace !== undefined ? { workspace: settings.workspace } : {}),
      ...(settings.scopes_claim !== undefined ? { scopesClaim: settings.scopes_claim } : {}),
      ...(settings.gateway_scopes !== undefined ? { gatewayScopes: settings.gateway_scopes } : {}),
    });
    if (!(await this.store.getWorkspace(organisationId, claims.workspace))) {
      throw new JwtVerificationError('unknown_workspace');
    }
    return this.remember(hash, organisationId, claims, {
      exp,
      kid,
      n: String(jwk.n),
      settingsAt: sso.keySet.record.updated_at,
      sso: true,
    });
  }

  /** The principal a verified token stands for, cached until the token expires. */
  private remember(
    hash: string,
    organisationId: string,
    claims: { workspace: string; scopes: Principal['scopes']; subject?: string },
    entry: Omit<CachedToken, 'principal'>,
  ): Principal {
    const principal: Principal = {
      type: 'jwt',
      organisationId,
      workspace: claims.workspace,
      isOrganisationAdmin: false,
      scopes: claims.scopes,
      ...(claims.subject !== undefined ? { subject: claims.subject } : {}),
    };
    if (this.tokens.size >= this.options.tokenCacheMax) {
      this.tokens.delete(this.tokens.keys().next().value as string);
    }
    this.tokens.set(hash, { principal, ...entry });
    return principal;
  }

  /** The single sign-on key set: settings cached like JWT settings, the JWKS URL from discovery. */
  private ssoKeySetFor(organisationId: string): Promise<SsoKeySet | null> {
    const now = Date.now();
    const entry = this.ssoSettings.get(organisationId);
    if (entry && entry.expires > now) return entry.keySet;
    const previous = entry?.keySet;
    const keySet = (async (): Promise<SsoKeySet | null> => {
      const settings = await this.store.getSsoSettings(organisationId);
      if (!settings) return null;
      let jwksUri: string;
      try {
        jwksUri = (await this.discovery.get(settings.issuer)).jwks_uri;
      } catch (error) {
        throw new JwtVerificationError('key_set_unavailable', (error as Error).message.slice(0, 500));
      }
      const record: JwtSettingsRecord = {
        organisation_id: organisationId,
        jwks_url: jwksUri,
        issuer: settings.issuer,
        audience: [settings.audience ?? settings.client_id],
        created_at: settings.created_at,
        updated_at: settings.updated_at,
      };
      const before = previous ? await previous.catch(() => null) : null;
      if (!before?.keySet.matches(record)) return { settings, keySet: new OrgKeySet(record, this.options) };
      before.keySet.record = record;
      return { settings, keySet: before.keySet };
    })();
    keySet.catch(() => {
      if (this.ssoSettings.get(organisationId)?.keySet === keySet) this.ssoSettings.delete(organisationId);
    });
    if (!entry && this.ssoSettings.size >= SETTINGS_CACHE_MAX) {
      this.ssoSettings.delete(this.ssoSettings.keys().next().value as string);
    }
    this.ssoSettings.set(organisationId, { keySet, expires: now + this.options.settingsTtlMs });
    return keySet;
  }

  /** The organisation a token names, if it exists: where its audit entry belongs. */
  async existingOrganisation(decoded: DecodedJwt): Promise<string | null> {
    const claimed = claimedOrganisation(decoded.payload);
    return claimed && (await this.store.getOrganisation(claimed)) ? claimed : null;
  }

  /** The organisation's key set, from a short per-container cache of its configuration (misses too). */
  private keySetFor(organisationId: string): Promise<OrgKeySet | null> {
    const now = Date.now();
    const entry = this.settings.get(organisationId);
    if (entry && entry.expires > now) return entry.keySet;
    const previous = entry?.keySet;
    const keySet = (async () => {
      const record = await this.store.getJwtSettings(organisationId);
      if (!record) return null;
      const before = previous ? await previous.catch(() => null) : null;
      if (!before?.matches(record)) return new OrgKeySet(record, this.options);
      // Same keys: the caches stay, the token rules are the latest.
      before.record = record;
      return before;
    })();
    // A failed read is not remembered: the next request reads again.
    keySet.catch(() => {
      if (this.settings.get(organisationId)?.keySet === keySet) this.settings.delete(organisationId);
    });
    if (!entry && this.settings.size >= SETTINGS_CACHE_MAX) {
      this.settings.delete(this.settings.keys().next().value as string);
    }
    this.settings.set(organisationId, { keySet, expires: now + this.options.settingsTtlMs });
    return keySet;
  }
}
