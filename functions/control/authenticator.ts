import { timingSafeEqual } from 'node:crypto';
import { unauthorized } from '../core/errors';
import type { Principal } from '../core/principal';
import { settings } from '../core/settings';
import { ApiKeyService } from './api-keys';
import { AuditLog } from './audit-log';
import { bootstrap } from './bootstrap';
import { type DecodedJwt, decodeJwt, JwtVerificationError } from './jwt-token';
import type { JwtTokenVerifier } from './jwt-verifier';

/** About the request being authenticated, for the audit log. */
export interface AuthContext {
  requestId?: string;
  /** The client's address: invalid JWTs are audited once per source, error and minute. */
  source?: string;
}

/** Reads the bootstrap admin key from Secrets Manager on AWS; loaded once per container, on demand. */
async function loadAdminKeySecret(arn: string): Promise<string | undefined> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
  return out.SecretString || undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// Prefixes of provider keys (OpenAI, Anthropic, Google, Groq, OpenRouter, xAI, Fireworks, Perplexity):
// such a key where the gateway key belongs is the usual first mistake of pointing an app at the gateway.
const PROVIDER_KEY = /^(sk-|sk_|AIza|gsk_|xai-|fw_|pplx-)/;

/** Says what to change: most unknown keys are provider keys sent where the gateway key goes. */
function invalidKeyMessage(presented: { key: string; fromAuthorization: boolean }): string {
  if (!PROVIDER_KEY.test(presented.key)) {
    return `Invalid API key provided in ${presented.fromAuthorization ? 'Authorization' : 'x-gateway-api-key'}.`;
  }
  return presented.fromAuthorization
    ? 'Invalid API key provided: the key in Authorization looks like a provider key, not a gateway key. Send the gateway key in x-gateway-api-key (the provider key may stay in Authorization and is passed through), or keep the provider key in a virtual key and send the gateway key as Authorization: Bearer.'
    : 'Invalid API key provided: the key in x-gateway-api-key looks like a provider key. x-gateway-api-key takes the gateway key; the provider key goes in Authorization, or in a virtual key.';
}

export class Authenticator {
  private adminSecret?: Promise<string | undefined>;
  private jwts?: Promise<JwtTokenVerifier>;

  constructor(
    private readonly apiKeys = new ApiKeyService(),
    jwts?: JwtTokenVerifier,
    private readonly audit = new AuditLog(),
  ) {
    if (jwts) this.jwts = Promise.resolve(jwts);
  }

  // The JWT verifier (and aws-jwt-verify) loads with the first token: API-key callers never pay for it.
  private verifier(): Promise<JwtTokenVerifier> {
    this.jwts ??= import('./jwt-verifier').then((m) => new m.JwtTokenVerifier());
    return this.jwts;
  }

  /** The key from `x-gateway-api-key`, else `Authorization: Bearer`, else `x-api-key` (then it is not the provider's). */
  static presentedKey(
    headers: Record<string, string>,
  ): { key: string; fromAuthorization: boolean } | undefined {
    const header = headers['x-gateway-api-key'];
    if (header !== undefined) return { key: header, fromAuthorization: false };
    const auth = headers.authorization;
    const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
    if (m?.[1]) return { key: m[1].trim(), fromAuthorization: true };
    // Anthropic's SDKs (and Claude Code with ANTHROPIC_API_KEY) send their key in x-api-key.
    const apiKey = headers['x-api-key']?.trim();
    return apiKey ? { key: apiKey, fromAuthorization: true } : undefined;
  }

  /** The single entry point: an API key or a JWT (told apart by shape) to a principal, or a 401. */
  async authenticate(headers: Record<string, string>, context: AuthContext = {}): Promise<Principal> {
    const presented = Authenticator.presentedKey(headers);
    if (!presented || presented.key === '') {
      throw unauthorized(
        'Missing gateway API key: send it in x-gateway-api-key, as Authorization: Bearer, or in x-api-key.',
      );
    }
    if (/^Bearer\s/i.test(presented.key) && !presented.fromAuthorization) {
      const inner = presented.key.replace(/^Bearer\s+/i, '');
      const decoded = decodeJwt(inner);
      if (decoded) {
        const error = new JwtVerificationError('bearer_prefix');
        throw await this.rejectJwt(inner, decoded, error, context);
      }
      throw unauthorized('x-gateway-api-key takes the raw key or JWT, without a "Bearer " prefix.');
    }
    const decoded = decodeJwt(presented.key);
    if (decoded) {
      try {
        return await (await this.verifier()).verify(presented.key, decoded);
      } catch (error) {
        if (error instanceof JwtVerificationError) {
          throw await this.rejectJwt(presented.key, decoded, error, context);
        }
        throw error;
      }
    }
    const principal =
      (await this.apiKeys.authenticate(presented.key)) ?? (await this.bootstrapOnFirstUse(presented.key));
    if (!principal) throw unauthorized(invalidKeyMessage(presented));
    return principal;
  }

  /** Every invalid JWT is audited (masked) before its 401 goes out. */
  private async rejectJwt(
    token: string,
    decoded: DecodedJwt,
    error: JwtVerificationError,
    context: AuthContext,
  ): Promise<Error> {
    if (error.organisationId === null)
      error.organisationId = await (await this.verifier()).existingOrganisation(decoded);
    await this.audit.recordInvalidJwt(token, error, context.requestId, context.source);
    return unauthorized(error.message);
  }

  /**
   * On AWS the stack generates the admin key into Secrets Manager; the first request that presents it
   * creates the organisation, the default workspace and the key record. No custom resource needed.
   */
  private async bootstrapOnFirstUse(key: string): Promise<Principal | undefined> {
    const { adminKeySecretArn: arn, recoverAdminKey: recover } = settings();
    if (!arn) return undefined;
    this.adminSecret ??= loadAdminKeySecret(arn).catch(() => {
      this.adminSecret = undefined;
      return undefined;
    });
    const secret = await this.adminSecret;
    if (!secret || !sameSecret(secret, key)) return undefined;
    await bootstrap(key, undefined, { recover });
    return this.apiKeys.authenticate(key, { fresh: true });
  }
}
