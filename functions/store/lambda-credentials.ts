import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

// Lambda gives every function its role's credentials in environment variables, so the SDK's full
// default chain (profiles, SSO, process, IMDS, and the STS/SSO clients they bring) is dead weight in a
// function bundle. lib/bundling.ts replaces `@aws-sdk/credential-provider-node` with this module in
// Lambda bundles only; the local runtime and tests keep the full chain. Read directly: the SDK's env
// provider would bring 15 KB of its config and feature plumbing into the first request.
export const defaultProvider =
  (): AwsCredentialIdentityProvider => async (): Promise<AwsCredentialIdentity> => {
    const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_CREDENTIAL_EXPIRATION } =
      process.env;
    if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) {
      throw new Error('No AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)');
    }
    return {
      accessKeyId: AWS_ACCESS_KEY_ID,
      secretAccessKey: AWS_SECRET_ACCESS_KEY,
      ...(AWS_SESSION_TOKEN ? { sessionToken: AWS_SESSION_TOKEN } : {}),
      ...(AWS_CREDENTIAL_EXPIRATION ? { expiration: new Date(AWS_CREDENTIAL_EXPIRATION) } : {}),
    };
  };
