import { randomUUID, timingSafeEqual } from 'node:crypto';
import { forbidden } from '../core/errors';
import { type Settings, settings } from '../core/settings';
import type { GatewayMiddleware } from './types';

const TRACE_ID = /^[\w.:/-]{1,128}$/;

/** CloudFront adds this header, with a secret value, to every request it sends to a function URL. */
export const ORIGIN_SECRET_HEADER = 'x-gateway-origin-secret';

/**
 * The accepted origin secrets (the current value and, during a rotation, the previous one), or undefined
 * when none is configured (locally: nothing is refused). `refresh` asks for a fresh read: a warm
 * container must learn a rotated value before it refuses the first request that carries it.
 */
export type OriginSecret = (refresh?: boolean) => Promise<string | string[] | undefined>;

/** None configured (the local server): every request passes, and the middleware has nothing to await. */
const NO_ORIGIN_SECRET: OriginSecret = async () => undefined;

/** A fresh read after a mismatch at most this often, so wrong values cannot hammer Secrets Manager. */
const REFRESH_INTERVAL_MS = 10_000;

async function loadSecrets(arn: string): Promise<string[]> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  const read = (VersionStage: string) =>
    client
      .send(new GetSecretValueCommand({ SecretId: arn, VersionStage }))
      .then((out) => out.SecretString || undefined);
  // AWSPREVIOUS exists only after a first rotation; its absence is no failure.
  const [current, previous] = await Promise.all([
    read('AWSCURRENT'),
    read('AWSPREVIOUS').catch(() => undefined),
  ]);
  if (!current) throw new Error('the origin secret has no value');
  return previous ? [current, previous] : [current];
}

/**
 * The origin secrets from `GATEWAY_ORIGIN_SECRET` (and `GATEWAY_ORIGIN_SECRET_PREVIOUS`), or read from
 * the Secrets Manager secret `GATEWAY_ORIGIN_SECRET_ARN` names (stages AWSCURRENT and AWSPREVIOUS).
 * Reading starts at once (during Lambda's init phase) and is retried on the next request if it failed;
 * until it succeeds every request is refused, never let through.
 */
export function originSecretFrom(
  {
    originSecret: value,
    originSecretPrevious: previous,
    originSecretArn: arn,
  }: Pick<Settings, 'originSecret' | 'originSecretPrevious' | 'originSecretArn'> = settings(),
): OriginSecret {
  if (value) {
    const values = [value, previous].filter((v): v is string => !!v);
    return async () => values;
  }
  if (!arn) return NO_ORIGIN_SECRET;
  let loading: Promise<string[]> | undefined;
  let loadedAt = 0;
  const get = (refresh = false) => {
    if (refresh && loading && Date.now() - loadedAt >= REFRESH_INTERVAL_MS) loading = undefined;
    if (!loading) {
      loadedAt = Date.now();
      loading = loadSecrets(arn).catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
    }
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

/** Whether the presented value is one of the accepted ones (any value when none is configured). */
async function originAccepted(originSecret: OriginSecret, presented: string | undefined): Promise<boolean> {
  const accepted = await originSecret();
  if (accepted === undefined) return true;
  const matches = (values: string | string[]) =>
    (Array.isArray(values) ? values : [values]).some((v) => sameSecret(presented, v));
  if (matches(accepted)) return true;
  // Perhaps rotated since this container read it: read again before refusing.
  const fresh = await originSecret(true);
  return fresh === undefined || matches(fresh);
}

/**
 * Lower-cases headers, settles the trace id, and stamps the id headers every reply carries. When an
 * origin secret is configured, refuses any request that did not come through CloudFront.
 */
export function requestContext(originSecret: OriginSecret = originSecretFrom()): GatewayMiddleware {
  return {
    before: (request) => {
      const state = request.context.gateway;
      const headers: Record<string, string> = {};
      const given = request.event.headers ?? {};
      for (const k in given) {
        const v = given[k];
        if (v !== undefined) headers[k.toLowerCase()] = v;
      }
      const trace = headers['x-gateway-trace-id'];
      state.traceId = trace && TRACE_ID.test(trace) ? trace : randomUUID();
      state.replyHeaders['x-gateway-request-id'] = state.requestId;
      state.replyHeaders['x-gateway-trace-id'] = state.traceId;
      const presented = headers[ORIGIN_SECRET_HEADER];
      // The secret has done its work here; nothing after this point may see or forward it.
      delete headers[ORIGIN_SECRET_HEADER];
      state.headers = headers;
      if (originSecret !== NO_ORIGIN_SECRET) return checkOrigin(originSecret, presented);
    },
  };
}

async function checkOrigin(originSecret: OriginSecret, presented: string | undefined): Promise<void> {
  if (!(await originAccepted(originSecret, presented))) {
    throw forbidden(
      'Call the gateway through its base URL; direct calls to its function URLs are refused.',
      'origin_not_allowed',
    );
  }
}
