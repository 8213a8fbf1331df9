import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { badRequest } from '../../core/errors';
import { settings } from '../../core/settings';
import { Sha256 } from '../../core/sha256';
import type { ProviderTarget } from '../types';

// Credentials and SigV4 signing of Bedrock Runtime calls, with no AWS SDK client.

/** What a Bedrock virtual key's secret may hold. */
interface BedrockSecret {
  access_key_id?: string;
  secret_access_key?: string;
  session_token?: string;
  region?: string;
}

export type BedrockAuth =
  | { kind: 'sigv4'; credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider; region: string }
  | { kind: 'bearer'; token: string; region: string };

let roleCredentials: AwsCredentialIdentityProvider | undefined;

/** The function's own role (or the local AWS profile), loaded on first use and memoised per container. */
async function defaultCredentials(): Promise<AwsCredentialIdentityProvider> {
  if (!roleCredentials) {
    const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
    roleCredentials = defaultProvider();
  }
  return roleCredentials;
}

export const DEFAULT_REGION = 'us-east-1';

/**
 * The credential is JSON access keys (`{"access_key_id", "secret_access_key", "session_token?",
 * "region?"}`), JSON without keys (`{}` or `{"region": ...}`: the function's own IAM role), or any other
 * text: a Bedrock API key, sent as a bearer token.
 */
export async function bedrockAuth(target: ProviderTarget): Promise<BedrockAuth> {
  const raw = target.apiKey?.trim();
  if (!raw) {
    throw badRequest(
      'Bedrock needs a credential: a virtual key holding AWS access keys, {} for the gateway role, or a Bedrock API key.',
      'virtual_key',
      'missing_credential',
    );
  }
  let secret: BedrockSecret | undefined;
  if (raw.startsWith('{')) {
    try {
      secret = JSON.parse(raw) as BedrockSecret;
    } catch {
      throw badRequest('The Bedrock credential is not valid JSON.', 'virtual_key', 'invalid_credential');
    }
  }
  const region = target.region ?? secret?.region ?? settings().awsRegion ?? DEFAULT_REGION;
  if (!secret) return { kind: 'bearer', token: raw, region };
  if (secret.access_key_id && secret.secret_access_key) {
    return {
      kind: 'sigv4',
      region,
      credentials: {
        accessKeyId: secret.access_key_id,
        secretAccessKey: secret.secret_access_key,
        ...(secret.session_token ? { sessionToken: secret.session_token } : {}),
      },
    };
  }
  return { kind: 'sigv4', region, credentials: await defaultCredentials() };
}

/** Signs a request (a POST unless told) with SigV4 for the `bedrock` service; returns the headers to send. */
export async function signedHeaders(
  url: URL,
  body: string,
  headers: Record<string, string>,
  auth: Extract<BedrockAuth, { kind: 'sigv4' }>,
  method = 'POST',
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: 'bedrock',
    region: auth.region,
    credentials: auth.credentials,
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...headers, host: url.host },
    body,
  });
  return signed.headers;
}
