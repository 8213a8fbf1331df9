import { timingSafeEqual } from 'node:crypto';
import { unauthorized } from '../gateway/errors';
import { ApiKeyService } from './api-keys';
import { bootstrap } from './bootstrap';
import type { Principal } from './principal';

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

export class Authenticator {
  private adminSecret?: Promise<string | undefined>;

  constructor(private readonly apiKeys = new ApiKeyService()) {}

  /** The key from `x-gateway-api-key`, else from `Authorization: Bearer` (then it is not the provider's). */
  static presentedKey(
    headers: Record<string, string>,
  ): { key: string; fromAuthorization: boolean } | undefined {
    const header = headers['x-gateway-api-key'];
    if (header !== undefined) return { key: header, fromAuthorization: false };
    const auth = headers.authorization;
    const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
    return m?.[1] ? { key: m[1].trim(), fromAuthorization: true } : undefined;
  }

  async authenticate(headers: Record<string, string>): Promise<Principal> {
    const presented = Authenticator.presentedKey(headers);
    if (!presented || presented.key === '') {
      throw unauthorized(
        'Missing gateway API key: send it in x-gateway-api-key or as Authorization: Bearer.',
      );
    }
    if (/^Bearer\s/i.test(presented.key) && !presented.fromAuthorization) {
      throw unauthorized('x-gateway-api-key takes the raw key or JWT, without a "Bearer " prefix.');
    }
    const principal =
      (await this.apiKeys.authenticate(presented.key)) ?? (await this.bootstrapOnFirstUse(presented.key));
    if (!principal) throw unauthorized();
    return principal;
  }

  /**
   * On AWS the stack generates the admin key into Secrets Manager; the first request that presents it
   * creates the organisation, the default workspace and the key record. No custom resource needed.
   */
  private async bootstrapOnFirstUse(key: string): Promise<Principal | undefined> {
    const arn = process.env.GATEWAY_ADMIN_KEY_SECRET_ARN;
    if (!arn) return undefined;
    this.adminSecret ??= loadAdminKeySecret(arn).catch(() => {
      this.adminSecret = undefined;
      return undefined;
    });
    const secret = await this.adminSecret;
    if (!secret || !sameSecret(secret, key)) return undefined;
    await bootstrap(key);
    return this.apiKeys.authenticate(key, { fresh: true });
  }
}
