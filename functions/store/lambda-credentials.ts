import type { FromEnvInit } from '@aws-sdk/credential-provider-env';
import { fromEnv } from '@aws-sdk/credential-provider-env';

// Lambda gives every function its role's credentials in environment variables, so the SDK's full
// default chain (profiles, SSO, process, IMDS, and the STS/SSO clients they bring) is dead weight in a
// function bundle. lib/bundling.ts replaces `@aws-sdk/credential-provider-node` with this module in
// Lambda bundles only; the local runtime and tests keep the full chain.
export const defaultProvider = (init: FromEnvInit = {}) => fromEnv(init);
