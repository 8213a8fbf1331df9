import { badRequest, conflict, notFound } from '../core/errors';
import { SCOPES, type Scope } from '../core/operations';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { type GuardedReply, guardedFetch } from '../gateway/address-guard';
import { ControlStore, type SsoSettingsRecord } from '../store/control-store';
import { asObject } from './api-keys';
import { SSO_SETTINGS } from './bodies';
import { refuseUnknownFields } from './fields';
import { checkJwksUrl, isLocalRuntime, KeySetError } from './jwt-settings';

// Single sign-on with OpenID Connect: the organisation names an issuer and a public client; the dashboard
// signs in with the authorization code flow and PKCE, and the ID token is then the gateway JWT. Its keys
// come from the issuer's discovery document, verified by the same key-set machinery as JWT key sets.

const CLAIM = /^[A-Za-z0-9_.:/-]{1,128}$/;
const SLUG = /^[A-Za-z0-9_.:-]{1,128}$/;
const DEFAULT_SCOPES = 'openid email profile';

/** An issuer URL: HTTPS, or HTTP on loopback in the local runtime (as JWKS URLs); no query or fragment. */
export function checkIssuer(value: unknown, local = isLocalRuntime()): string {
  if (typeof value !== 'string' || value === '' || value.length > 1024) {
    throw badRequest('issuer must be a URL of at most 1024 characters.', 'issuer');
  }
  let url: URL;
  try {
    url = checkJwksUrl(value, local);
  } catch (error) {
    if (error instanceof KeySetError) throw badRequest(error.message.replace('jwks_url', 'issuer'), 'issuer');
    throw error;
  }
  if (url.search || url.hash) throw badRequest('issuer must not carry a query or fragment.', 'issuer');
  // Issuers are compared as exact strings with `iss`: the configured text is kept as given.
  return value;
}

function text(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`${name} is required.`, name);
    return undefined;
  }
  if (typeof v !== 'string' || v === '' || v.length > 1024) {
    throw badRequest(`${name} must be a string of 1 to 1024 characters.`, name);
  }
  return v;
}

function parseSettings(
  organisationId: string,
  input: unknown,
  now: string,
  createdAt?: string,
): SsoSettingsRecord {
  const body = asObject(input);
  refuseUnknownFields(body, SSO_SETTINGS);
  const record: SsoSettingsRecord = {
    organisation_id: organisationId,
    issuer: checkIssuer(body.issuer),
    client_id: text(body, 'client_id', true) as string,
    scopes: text(body, 'scopes', false) ?? DEFAULT_SCOPES,
    created_at: createdAt ?? now,
    updated_at: now,
  };
  if (!record.scopes.split(/\s+/).includes('openid')) {
    throw badRequest('scopes must include openid.', 'scopes');
  }
  const audience = text(body, 'audience', false);
  if (audience !== undefined) record.audience = audience;

  const workspaceClaim = text(body, 'workspace_claim', false);
  const workspace = text(body, 'workspace', false);
  if ((workspaceClaim === undefined) === (workspace === undefined)) {
    throw badRequest(
      'Send exactly one of workspace_claim (a claim naming the workspace slug) and workspace (a fixed slug).',
      'workspace_claim',
    );
  }
  if (workspaceClaim !== undefined) {
    if (!CLAIM.test(workspaceClaim))
      throw badRequest('workspace_claim must be a claim name.', 'workspace_claim');
    record.workspace_claim = workspaceClaim;
  }
  if (workspace !== undefined) {
    if (!SLUG.test(workspace)) throw badRequest('workspace must be a workspace slug.', 'workspace');
    record.workspace = workspace;
  }

  const scopesClaim = text(body, 'scopes_claim', false);
  const fixed = body.gateway_scopes;
  if ((scopesClaim === undefined) === (fixed === undefined || fixed === null)) {
    throw badRequest(
      'Send exactly one of scopes_claim (a claim holding gateway scopes) and gateway_scopes (a fixed list).',
      'scopes_claim',
    );
  }
  if (scopesClaim !== undefined) {
    if (!CLAIM.test(scopesClaim)) throw badRequest('scopes_claim must be a claim name.', 'scopes_claim');
    record.scopes_claim = scopesClaim;
  } else {
    const known = new Set<string>(SCOPES);
    if (!Array.isArray(fixed) || fixed.some((s) => typeof s !== 'string' || !known.has(s))) {
      throw badRequest(
        `gateway_scopes must be a list of scopes from: ${SCOPES.join(', ')}.`,
        'gateway_scopes',
      );
    }
    record.gateway_scopes = [...new Set(fixed as Scope[])];
  }
  return record;
}

export function presentSsoSettings(record: SsoSettingsRecord) {
  return {
    object: 'organisation.sso',
    organisation_id: record.organisation_id,
    issuer: record.issuer,
    client_id: record.client_id,
    scopes: record.scopes,
    audience: record.audience ?? record.client_id,
    workspace_claim: record.workspace_claim ?? null,
    workspace: record.workspace ?? null,
    scopes_claim: record.scopes_claim ?? null,
    gateway_scopes: record.gateway_scopes ?? null,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** The parts of an OpenID Provider's discovery document the gateway and the dashboard use. */
export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

const MAX_DISCOVERY_BYTES = 256 * 1024;

/** Discovery documents by issuer, fetched through the address guard and kept for a while. */
export class DiscoveryCache {
  private readonly entries = new Map<string, { value: Promise<Discovery>; expires: number }>();

  constructor(
    private readonly maxAgeMs = settings().jwksCacheTtlMs,
    private readonly timeoutMs = 3_000,
  ) {}

  get(issuer: string): Promise<Discovery> {
    const now = Date.now();
    const hit = this.entries.get(issuer);
    if (hit && hit.expires > now) return hit.value;
    const value = this.fetch(issuer);
    // A failed fetch is not remembered beyond a short backoff: the IdP may come back.
    value.catch(() => {
      const entry = this.entries.get(issuer);
      if (entry?.value === value) entry.expires = Math.min(entry.expires, Date.now() + 5_000);
    });
    if (this.entries.size >= 1_000) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(issuer, { value, expires: now + this.maxAgeMs });
    return value;
  }

  private async fetch(issuer: string): Promise<Discovery> {
    checkIssuer(issuer);
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let res: GuardedReply;
    try {
      res = await guardedFetch(url, {
        headers: { accept: 'application/json' },
        timeoutMs: this.timeoutMs,
        maxBytes: MAX_DISCOVERY_BYTES,
      });
    } catch (error) {
      throw new KeySetError(`OpenID discovery failed: ${(error as Error).message}`);
    }
    if (res.status !== 200) throw new KeySetError(`OpenID discovery answered ${res.status}, expected 200.`);
    let doc: Record<string, unknown>;
    try {
      doc = asObject(JSON.parse(res.body.toString('utf8')));
    } catch {
      throw new KeySetError('The OpenID discovery document is not a JSON object.');
    }
    // OpenID Connect Discovery 1.0, section 4.3: the document's issuer is exactly the configured one.
    if (doc.issuer !== issuer) throw new KeySetError('The discovery document names another issuer.');
    for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (typeof doc[name] !== 'string') throw new KeySetError(`The discovery document has no ${name}.`);
    }
    checkJwksUrl(doc.jwks_uri as string);
    return {
      issuer,
      authorization_endpoint: doc.authorization_endpoint as string,
      token_endpoint: doc.token_endpoint as string,
      jwks_uri: doc.jwks_uri as string,
    };
  }
}

export const discoveryCache = new DiscoveryCache();

const NOT_CONFIGURED = 'Single sign-on is not configured for this organisation.';

export class SsoSettingsService {
  constructor(
    private readonly store = new ControlStore(),
    private readonly discovery = discoveryCache,
  ) {}

  async get(caller: Principal): Promise<SsoSettingsRecord> {
    const record = await this.store.getSsoSettings(caller.organisationId);
    if (!record) throw notFound(NOT_CONFIGURED);
    return record;
  }

  async put(caller: Principal, input: unknown): Promise<SsoSettingsRecord> {
    const existing = await this.store.getSsoSettings(caller.organisationId);
    const record = parseSettings(
      caller.organisationId,
      input,
      new Date().toISOString(),
      existing?.created_at,
    );
    if (!(await this.store.putSsoSettings(record, existing?.issuer))) {
      throw conflict('Another organisation already signs in with this issuer.', 'issuer');
    }
    return record;
  }

  async delete(caller: Principal): Promise<void> {
    if (!(await this.store.deleteSsoSettings(caller.organisationId))) throw notFound(NOT_CONFIGURED);
  }

  /** What the sign-in page needs to offer the button: public by nature (a public client). */
  async publicConfig(organisationId: string | undefined) {
    const id = organisationId || (await this.store.getBootstrapOrganisationId());
    const record = id ? await this.store.getSsoSettings(id) : undefined;
    if (!record) throw notFound(NOT_CONFIGURED);
    let discovery: Discovery;
    try {
      discovery = await this.discovery.get(record.issuer);
    } catch (error) {
      throw badRequest(
        `The identity provider cannot be reached: ${(error as Error).message}`,
        null,
        'sso_discovery_failed',
      );
    }
    return {
      object: 'organisation.sso.config',
      organisation_id: record.organisation_id,
      issuer: record.issuer,
      client_id: record.client_id,
      scopes: record.scopes,
      authorization_endpoint: discovery.authorization_endpoint,
      token_endpoint: discovery.token_endpoint,
    };
  }
}
