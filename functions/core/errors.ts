// Errors are values: a status, an origin, and the OpenAI-shaped body a client sees. Created only here.

export type ErrorOrigin = 'gateway' | 'provider';

export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly origin: ErrorOrigin = 'gateway',
    /** Extra reply headers, such as `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

export const badRequest = (message: string, param: string | null = null, code = 'invalid_request') =>
  new GatewayError(400, 'invalid_request_error', message, code, param);

export const unauthorized = (message = 'Invalid API key provided.') =>
  new GatewayError(401, 'invalid_request_error', message, 'invalid_api_key');

export const forbidden = (message: string, code = 'insufficient_scope') =>
  new GatewayError(403, 'permission_error', message, code);

export const notFound = (message: string) =>
  new GatewayError(404, 'invalid_request_error', message, 'not_found');

export const bodyTooLarge = (limit: number) =>
  new GatewayError(413, 'invalid_request_error', `Request body exceeds ${limit} bytes.`, 'body_too_large');

/**
 * The provider was silent for `ms`. A non-streamed call (`streamed: false`) is told to stream: a stream's
 * timeout counts only the silence between chunks, and CloudFront cuts a non-streamed reply after 60 s anyway.
 */
export const upstreamTimeout = (ms: number, streamed?: boolean) =>
  new GatewayError(
    408,
    'timeout_error',
    streamed === false
      ? `The provider did not answer within ${waited(ms)}. For long calls (reasoning models, long outputs), send \`stream: true\`: a stream only times out when the provider is silent that long, and the gateway keeps it alive in the meantime. The limit is set by \`request_timeout\` (ms) in \`x-gateway-config\` or by GATEWAY_UPSTREAM_TIMEOUT_MS.`
      : `The provider did not answer within ${waited(ms)}.`,
    'upstream_timeout',
  );

const waited = (ms: number) => (ms >= 1000 ? `${ms} ms (${Math.round(ms / 100) / 10} s)` : `${ms} ms`);

export const upstreamUnreachable = (detail: string, status: 502 | 504 = 502) =>
  new GatewayError(
    status,
    'api_connection_error',
    `The provider could not be reached: ${detail}.`,
    'upstream_unreachable',
  );

export const internalError = () =>
  new GatewayError(500, 'server_error', 'The gateway hit an unexpected error.', 'internal_error');

/** A provider's own error: its status and message are kept, the origin says it was not the gateway. */
export function providerError(status: number, body: unknown): GatewayError {
  const err = (body as { error?: unknown } | null)?.error;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    return new GatewayError(
      status,
      typeof e.type === 'string' ? e.type : 'provider_error',
      typeof e.message === 'string' ? e.message : `The provider answered ${status}.`,
      typeof e.code === 'string' ? e.code : null,
      typeof e.param === 'string' ? e.param : null,
      'provider',
    );
  }
  const message = typeof err === 'string' ? err : `The provider answered ${status}.`;
  return new GatewayError(status, 'provider_error', message, null, null, 'provider');
}

/**
 * An error a provider reported inside a stream it had already answered 200: its own status when the
 * event carries one (`status`, or a numeric `code`), 502 otherwise.
 */
export function streamedProviderError(event: unknown): GatewayError {
  const body = event && typeof event === 'object' ? (event as Record<string, unknown>) : {};
  const inner = body.error && typeof body.error === 'object' ? (body.error as Record<string, unknown>) : {};
  const given = [inner.status, inner.code, body.status].find(
    (s) => Number.isInteger(s) && (s as number) >= 400 && (s as number) <= 599,
  ) as number | undefined;
  return providerError(given ?? 502, body.error === undefined ? { error: body } : body);
}

export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : internalError();
}
