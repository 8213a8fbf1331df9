import { randomUUID, timingSafeEqual } from 'node:crypto';
import { forbidden } from '../gateway/errors';
import type { GatewayMiddleware } from './types';

const TRACE_ID = /^[\w.:/-]{1,128}$/;

/** CloudFront adds this header, with a secret value, to every request it sends to a function URL. */
export const ORIGIN_SECRET_HEADER = 'x-gateway-origin-secret';

/** The expected origin secret, or undefined when none is configured (locally: nothing is refused). */
export type OriginSecret = () => Promise<string | undefined>;

async function loadSecret(arn: string): Promise<string | undefined> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
  return out.SecretString || undefined;
}

/**
 * The origin secret from `GATEWAY_ORIGIN_SECRET`, or read once per container from the Secrets Manager
 * secret `GATEWAY_ORIGIN_SECRET_ARN` names. Reading starts at once (during Lambda's init phase) and is
 * retried on the next request if it failed; until it succeeds every request is refused, never let through.
 */
export function originSecretFromEnv(env: NodeJS.ProcessEnv = process.env): OriginSecret {
  const value = env.GATEWAY_ORIGIN_SECRET;
  if (value) return async () => value;
  const arn = env.GATEWAY_ORIGIN_SECRET_ARN;
  if (!arn) return async () => undefined;
  let loading: Promise<string | undefined> | undefined;
  const get = () => {
    loading ??= loadSecret(arn).catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  get().catch(() => undefined);
  return get;
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Lower-cases headers, settles the trace id, and stamps the id headers every reply carries. When an
 * origin secret is configured, refuses any request that did not come through CloudFront.
 */
export function requestContext(originSecret: OriginSecret = originSecretFromEnv()): GatewayMiddleware {
  return {
    before: async (request) => {
      const state = request.context.gateway;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.event.headers ?? {})) {
        if (v !== undefined) headers[k.toLowerCase()] = v;
      }
      const given = headers['x-gateway-trace-id'];
      state.traceId = given && TRACE_ID.test(given) ? given : randomUUID();
      state.replyHeaders['x-gateway-request-id'] = state.requestId;
      state.replyHeaders['x-gateway-trace-id'] = state.traceId;
      const expected = await originSecret();
      const presented = headers[ORIGIN_SECRET_HEADER];
      // The secret has done its work here; nothing after this point may see or forward it.
      delete headers[ORIGIN_SECRET_HEADER];
      state.headers = headers;
      if (expected !== undefined && !sameSecret(presented, expected)) {
        throw forbidden(
          'Call the gateway through its base URL; direct calls to its function URLs are refused.',
          'origin_not_allowed',
        );
      }
    },
  };
}
