import { SCOPES, type Scope } from '../core/operations';

// Pure pieces of JWT handling: telling a JWT from an API key, decoding (unverified), reading the
// gateway's claims, masking a token for the audit log, and the failure kinds with their texts.

/** Longer values are not taken for JWTs (a gateway token is well under this). */
export const MAX_JWT_LENGTH = 8192;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const ID_CLAIM = /^[A-Za-z0-9_.:-]{1,128}$/;
const SUBJECT_MAX = 256;

/** Every way a JWT can fail, each with one clear text for the caller and the audit log. */
export const JWT_FAILURES = {
  malformed: 'Malformed Token',
  bearer_prefix: 'Bearer Prefix Not Allowed In x-gateway-api-key',
  algorithm: 'Unsupported Algorithm (only RS256 is accepted)',
  type: 'Invalid Token Type (typ must be JWT)',
  missing_kid: 'Missing Key Id (kid)',
  missing_organisation: 'Missing Organisation Claim (gateway_oid or organisation_id)',
  not_configured: 'JWT Authentication Is Not Configured For This Organisation',
  key_set_unavailable: 'Key Set Unavailable',
  signing_key_not_found: 'Signing Key Not Found',
  invalid_signature: 'Invalid Signature',
  missing_exp: 'Missing Expiry (exp)',
  expired: 'Token Expired',
  not_yet_valid: 'Token Not Yet Valid (nbf)',
  issued_in_future: 'Token Issued In The Future (iat)',
  lifetime_too_long: 'Token Lifetime Exceeds The Maximum Allowed (exp - iat)',
  wrong_issuer: 'Invalid Issuer (iss)',
  wrong_audience: 'Invalid Audience (aud)',
  invalid_claim: 'Invalid Claim',
  missing_workspace: 'Missing Workspace Claim (gateway_workspace or workspace_slug)',
  missing_scope: 'Missing Scope Claim (scope or scopes)',
  unknown_workspace: 'Unknown Workspace',
} as const;
export type JwtFailureKind = keyof typeof JWT_FAILURES;

/** A JWT that cannot be accepted; `message` is the audit text. */
export class JwtVerificationError extends Error {
  override name = 'JwtVerificationError';
  /** Where the audit entry goes: set once the token names an organisation that exists. */
  organisationId: string | null = null;

  constructor(
    readonly kind: JwtFailureKind,
    /** Extra, safe-to-store detail for the audit entry (never the token). */
    readonly detail?: string,
  ) {
    super(`Error Verifying JWT token: ${JWT_FAILURES[kind]}`);
  }
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  headerB64: string;
  payloadB64: string;
  signatureB64: string;
}

function parseSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decodes without verifying. Undefined when the value is not a JWT: three base64url segments whose
 * first decodes to a JSON object. Gateway API keys hold no dot, so they are never mistaken for one.
 */
export function decodeJwt(value: string): DecodedJwt | undefined {
  if (value.length > MAX_JWT_LENGTH) return undefined;
  const parts = value.split('.');
  if (parts.length !== 3) return undefined;
  const [headerB64, payloadB64, signatureB64] = parts as [string, string, string];
  if (!SEGMENT.test(headerB64) || !SEGMENT.test(payloadB64)) return undefined;
  if (signatureB64 !== '' && !SEGMENT.test(signatureB64)) return undefined;
  const header = parseSegment(headerB64);
  if (!header) return undefined;
  // A JWT-shaped value with an unreadable payload is still a JWT attempt: it fails as malformed.
  const payload = parseSegment(payloadB64) ?? {};
  return { header, payload, headerB64, payloadB64, signatureB64 };
}

export const looksLikeJwt = (value: string) => decodeJwt(value) !== undefined;

/** The first and last two characters, every other one `*` (a value too short to show any: all `*`). */
export function maskToken(token: string): string {
  if (token.length <= 8) return '*'.repeat(token.length);
  return `${token.slice(0, 2)}${'*'.repeat(token.length - 4)}${token.slice(-2)}`;
}

const firstString = (payload: Record<string, unknown>, names: string[]): string | undefined => {
  for (const name of names) {
    const v = payload[name];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
};

/** The organisation a token claims (unverified until its signature is checked). */
export function claimedOrganisation(payload: Record<string, unknown>): string | undefined {
  const id = firstString(payload, ['gateway_oid', 'organisation_id']);
  return id !== undefined && ID_CLAIM.test(id) ? id : undefined;
}

/**
 * Scopes of a `scope`/`scopes` claim: a space-separated string or an array of strings, each with an
 * optional `gateway.` prefix. Unknown scopes are ignored; undefined when the claim is absent or unusable.
 */
export function parseScopeClaim(payload: Record<string, unknown>): Set<Scope> | undefined {
  const claim = payload.scope ?? payload.scopes;
  let names: unknown[];
  if (typeof claim === 'string') names = claim.split(/\s+/);
  else if (Array.isArray(claim)) names = claim;
  else return undefined;
  if (names.some((n) => typeof n !== 'string')) return undefined;
  const known = new Set<string>(SCOPES);
  const scopes = new Set<Scope>();
  for (const raw of names as string[]) {
    const name = raw.startsWith('gateway.') ? raw.slice('gateway.'.length) : raw;
    if (known.has(name)) scopes.add(name as Scope);
  }
  return scopes;
}

/** The user behind a token, for logs and analytics: `email_id`, then `sub`, then `uid`. */
export function subjectOf(payload: Record<string, unknown>): string | undefined {
  for (const name of ['email_id', 'sub', 'uid']) {
    const v = payload[name];
    if ((typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isFinite(v))) {
      return String(v).slice(0, SUBJECT_MAX);
    }
  }
  return undefined;
}

export interface GatewayClaims {
  organisationId: string;
  workspace: string;
  scopes: Set<Scope>;
  subject?: string;
  /** Seconds since the epoch. */
  exp: number;
}

/** An organisation's own rules for its tokens, from its key-set settings. */
export interface TokenRules {
  issuer?: string;
  /** A token's `aud` (a string or an array) must hold one of these. */
  audience?: string[];
  /** The longest `exp - iat` accepted, or `exp - now` for a token without `iat`. */
  maxLifetimeSeconds: number;
}

export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 86_400;

/** Checks the header rules that come before any key is looked up. */
export function checkHeader(header: Record<string, unknown>, typOptional = false): string {
  if (header.alg !== 'RS256') throw new JwtVerificationError('algorithm');
  // Identity providers' ID tokens often carry no typ (Cognito, Okta); gateway tokens must say JWT.
  if (header.typ !== 'JWT' && !(typOptional && header.typ === undefined)) {
    throw new JwtVerificationError('type');
  }
  if (typeof header.kid !== 'string' || header.kid === '') throw new JwtVerificationError('missing_kid');
  return header.kid;
}

/** Checks the time claims, issuer and audience of a payload whose signature is verified; returns `exp`. */
export function checkTokenRules(
  payload: Record<string, unknown>,
  nowSeconds: number,
  skewSeconds: number,
  rules: TokenRules,
): number {
  const { exp, nbf, iat } = payload;
  if (exp === undefined) throw new JwtVerificationError('missing_exp');
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    throw new JwtVerificationError('invalid_claim', 'exp');
  if (exp + skewSeconds <= nowSeconds) throw new JwtVerificationError('expired');
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf))
      throw new JwtVerificationError('invalid_claim', 'nbf');
    if (nbf - skewSeconds > nowSeconds) throw new JwtVerificationError('not_yet_valid');
  }
  if (iat !== undefined) {
    if (typeof iat !== 'number' || !Number.isFinite(iat))
      throw new JwtVerificationError('invalid_claim', 'iat');
    if (iat - skewSeconds > nowSeconds) throw new JwtVerificationError('issued_in_future');
  }
  // A stolen long-lived token would outlive every rotation: the organisation bounds how long one may live.
  const lifetime = exp - (typeof iat === 'number' ? iat : nowSeconds);
  if (lifetime > rules.maxLifetimeSeconds + skewSeconds) {
    throw new JwtVerificationError('lifetime_too_long', `at most ${rules.maxLifetimeSeconds} seconds`);
  }
  if (rules.issuer !== undefined && payload.iss !== rules.issuer)
    throw new JwtVerificationError('wrong_issuer');
  if (rules.audience !== undefined) {
    const aud = payload.aud;
    const given = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (!given.some((a) => typeof a === 'string' && rules.audience?.includes(a))) {
      throw new JwtVerificationError('wrong_audience');
    }
  }
  return exp;
}

/**
 * Checks time and required claims of a payload whose signature is verified, in the order of the spec:
 * expiry, then the required claims.
 */
export function checkClaims(
  payload: Record<string, unknown>,
  nowSeconds: number,
  skewSeconds: number,
  rules: TokenRules = { maxLifetimeSeconds: DEFAULT_MAX_TOKEN_LIFETIME_SECONDS },
): GatewayClaims {
  const exp = checkTokenRules(payload, nowSeconds, skewSeconds, rules);
  const organisationId = claimedOrganisation(payload);
  if (!organisationId) throw new JwtVerificationError('missing_organisation');
  const workspace = firstString(payload, ['gateway_workspace', 'workspace_slug']);
  if (!workspace) throw new JwtVerificationError('missing_workspace');
  if (!ID_CLAIM.test(workspace)) throw new JwtVerificationError('invalid_claim', 'workspace');
  const scopes = parseScopeClaim(payload);
  if (!scopes) throw new JwtVerificationError('missing_scope');
  return { organisationId, workspace, scopes, subject: subjectOf(payload), exp };
}

/** How an organisation's single sign-on maps an identity provider's claims to the gateway's. */
export interface SsoClaimMapping {
  workspaceClaim?: string;
  workspace?: string;
  scopesClaim?: string;
  gatewayScopes?: string[];
}

/** The user of an ID token for logs: its email, else its subject. */
export function ssoSubjectOf(payload: Record<string, unknown>): string | undefined {
  const email = payload.email;
  if (typeof email === 'string' && email !== '') return email.slice(0, SUBJECT_MAX);
  return subjectOf(payload);
}

/** Workspace, scopes and user of a verified identity-provider token, through the organisation's mapping. */
export function mapSsoClaims(
  payload: Record<string, unknown>,
  mapping: SsoClaimMapping,
): { workspace: string; scopes: Set<Scope>; subject?: string } {
  const workspace =
    mapping.workspace ??
    (mapping.workspaceClaim ? firstString(payload, [mapping.workspaceClaim]) : undefined);
  if (!workspace) throw new JwtVerificationError('missing_workspace', mapping.workspaceClaim);
  if (!ID_CLAIM.test(workspace)) throw new JwtVerificationError('invalid_claim', 'workspace');
  const scopes = parseScopeClaim({
    scope: mapping.gatewayScopes ?? (mapping.scopesClaim ? payload[mapping.scopesClaim] : undefined),
  });
  if (!scopes) throw new JwtVerificationError('missing_scope', mapping.scopesClaim);
  return { workspace, scopes, subject: ssoSubjectOf(payload) };
}
