// Errors are values: a status, an origin, and the OpenAI-shaped body a client sees. Every error the
// gateway makes is built by a factory of this file; a provider's own error keeps its status and code.

export type ErrorOrigin = 'gateway' | 'provider';

/** Every `code` the gateway itself puts on an error. A provider's own codes pass through as they are. */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_api_key'
  | 'insufficient_scope'
  | 'not_found'
  | 'body_too_large'
  | 'upstream_timeout'
  | 'upstream_unreachable'
  | 'internal_error'
  | 'client_closed'
  | 'stream_truncated'
  | 'stream_failed'
  | 'invalid_upstream_reply'
  | 'budget_exceeded'
  | 'rate_limit_exceeded'
  | 'model_not_priced'
  | 'model_not_allowed'
  | 'provider_not_allowed'
  | 'custom_host_not_allowed'
  | 'guardrail_denied'
  | 'virtual_key_unavailable'
  | 'unknown_virtual_key'
  | 'host_not_allowed'
  | 'invalid_host'
  | 'conflict'
  | 'dashboard_missing'
  | 'admin_required'
  | 'field_too_long'
  | 'invalid_body'
  | 'invalid_config'
  | 'invalid_credential'
  | 'invalid_cursor'
  | 'unindexed_filter'
  | 'invalid_egress_settings'
  | 'invalid_guardrail'
  | 'invalid_json'
  | 'invalid_path'
  | 'invalid_policy'
  | 'invalid_type'
  | 'invalid_value'
  | 'invalid_virtual_key'
  | 'missing_credential'
  | 'missing_required_parameter'
  | 'missing_variable'
  | 'origin_not_allowed'
  | 'policy_loosens_workspace'
  | 'previous_response_not_found'
  | 'realtime_not_supported'
  | 'sso_discovery_failed'
  | 'unknown_config'
  | 'unknown_field'
  | 'unknown_guardrail'
  | 'unknown_provider'
  | 'unknown_workspace'
  | 'unsupported_content'
  | 'unsupported_image_url'
  | 'unsupported_parameter'
  | 'unsupported_tool'
  | 'wrong_workspace';

export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

interface CommonOptions {
  status: number;
  type: string;
  /** The header, query parameter or body field to change, when one is to blame. */
  param?: string | null;
  /** What went wrong underneath, for logs and debuggers; never sent to the client. */
  cause?: unknown;
  /** Extra reply headers, such as `Retry-After`. */
  headers?: Record<string, string>;
}

/** The gateway's own errors carry a code of the union; a provider's carry whatever code it sent. */
export type GatewayErrorOptions = CommonOptions &
  ({ origin?: 'gateway'; code?: ErrorCode | null } | { origin: 'provider'; code?: string | null });

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly origin: ErrorOrigin;
  readonly headers: Record<string, string>;

  constructor(message: string, options: GatewayErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.status;
    this.type = options.type;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.origin = options.origin ?? 'gateway';
    this.headers = options.headers ?? {};
  }

  /** This error as the provider's, with its message and reply headers (both masked of credentials). */
  asProviders(message: string, headers: Record<string, string>): GatewayError {
    return new GatewayError(message, {
      status: this.status,
      type: this.type,
      code: this.code,
      param: this.param,
      origin: 'provider',
      cause: this.cause,
      headers,
    });
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** Whether an error is the gateway's own with this code (the router's retry and fallback rules read it). */
export const hasCode = (error: unknown, code: ErrorCode): boolean =>
  error instanceof GatewayError && error.code === code;

export const badRequest = (
  message: string,
  param: string | null = null,
  code: ErrorCode = 'invalid_request',
) => new GatewayError(message, { status: 400, type: 'invalid_request_error', code, param });

export const unauthorized = (message = 'Invalid API key provided.') =>
  new GatewayError(message, { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' });

export const forbidden = (
  message: string,
  code: ErrorCode = 'insufficient_scope',
  param: string | null = null,
) => new GatewayError(message, { status: 403, type: 'permission_error', code, param });

export const notFound = (message: string) =>
  new GatewayError(message, { status: 404, type: 'invalid_request_error', code: 'not_found' });

/** 409: the value names something another record holds already. */
export const conflict = (message: string, param: string | null = null) =>
  new GatewayError(message, { status: 409, type: 'invalid_request_error', code: 'conflict', param });

export const bodyTooLarge = (limit: number) =>
  new GatewayError(`Request body exceeds ${limit} bytes.`, {
    status: 413,
    type: 'invalid_request_error',
    code: 'body_too_large',
  });

/**
 * The provider was silent for `ms`. A non-streamed call (`streamed: false`) is told to stream: a stream's
 * timeout counts only the silence between chunks, and CloudFront cuts a non-streamed reply after 60 s anyway.
 */
export const upstreamTimeout = (ms: number, streamed?: boolean) =>
  new GatewayError(
    streamed === false
      ? `The provider did not answer within ${waited(ms)}. For long calls (reasoning models, long outputs), send \`stream: true\`: a stream only times out when the provider is silent that long, and the gateway keeps it alive in the meantime. The limit is set by \`request_timeout\` (ms) in \`x-gateway-config\` or by GATEWAY_UPSTREAM_TIMEOUT_MS.`
      : `The provider did not answer within ${waited(ms)}.`,
    { status: 408, type: 'timeout_error', code: 'upstream_timeout' },
  );

const waited = (ms: number) => (ms >= 1000 ? `${ms} ms (${Math.round(ms / 100) / 10} s)` : `${ms} ms`);

export const upstreamUnreachable = (detail: string, status: 502 | 504 = 502, cause?: unknown) =>
  new GatewayError(`The provider could not be reached: ${detail}.`, {
    status,
    type: 'api_connection_error',
    code: 'upstream_unreachable',
    cause,
  });

export const internalError = (cause?: unknown) =>
  new GatewayError('The gateway hit an unexpected error.', {
    status: 500,
    type: 'server_error',
    code: 'internal_error',
    cause,
  });

/** The gateway's own deployment lacks something it needs (a 500 that names it, without internals). */
export const deploymentError = (message: string, code: ErrorCode) =>
  new GatewayError(message, { status: 500, type: 'server_error', code });

/** The client went away before its reply was complete (logged as 499, never sent). */
export const clientGone = () =>
  new GatewayError('The client disconnected.', { status: 499, type: 'client_closed', code: 'client_closed' });

/** A provider URL that is not http(s). */
export const invalidHost = (message: string, param: string | null = null) =>
  new GatewayError(message, { status: 400, type: 'invalid_request_error', code: 'invalid_host', param });

/** A budget of `kind` cannot cover the request's maximum cost: 412, `param` naming the holder kind. */
export const budgetExceeded = (kind: string, name: string, limit: number) =>
  new GatewayError(
    `The budget of ${kind.replace('_', ' ')} "${name}" cannot cover this request (limit ${limit} USD).`,
    { status: 412, type: 'budget_exceeded', code: 'budget_exceeded', param: kind },
  );

/** A rate limit is used up: 429 with `Retry-After` and the limit's `x-ratelimit-*` headers. */
export const rateLimited = (message: string, param: string | null, headers: Record<string, string>) =>
  new GatewayError(message, {
    status: 429,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    param,
    headers,
  });

/** A virtual key whose credential cannot be read right now (another target may serve). */
export const virtualKeyUnavailable = (slug: string, cause?: unknown) =>
  new GatewayError(`The credential of virtual key "${slug}" is not available; try again shortly.`, {
    status: 503,
    type: 'server_error',
    code: 'virtual_key_unavailable',
    cause,
  });

/** 400 for a model without a price when a budget applies: it would otherwise run free of every limit. */
export const modelNotPriced = (provider: string, model: string) =>
  badRequest(
    `Model "${model.slice(0, 100)}" of provider "${provider}" has no price, and a budget applies to this request. Price it with a pricing file or a "prices" entry on the virtual key or workspace.`,
    'model',
    'model_not_priced',
  );

/** A policy refuses what the request names: a model, a provider or a custom host (403). */
export const notAllowed = (
  code: 'model_not_allowed' | 'provider_not_allowed' | 'custom_host_not_allowed',
  message: string,
  param: string,
) => new GatewayError(message, { status: 403, type: 'permission_error', code, param });

/** A guardrail with action `deny` failed: 446, with the checks that failed in `x-gateway-guardrails`. */
export const guardrailDenied = (message: string, headers: Record<string, string> = {}) =>
  new GatewayError(message, { status: 446, type: 'guardrail_error', code: 'guardrail_denied', headers });

/** A provider's own error: its status and message are kept, the origin says it was not the gateway. */
export function providerError(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): GatewayError {
  const err = (body as { error?: unknown } | null)?.error;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    return new GatewayError(typeof e.message === 'string' ? e.message : `The provider answered ${status}.`, {
      status,
      type: typeof e.type === 'string' ? e.type : 'provider_error',
      code: typeof e.code === 'string' ? e.code : null,
      param: typeof e.param === 'string' ? e.param : null,
      origin: 'provider',
      headers,
    });
  }
  const message = typeof err === 'string' ? err : `The provider answered ${status}.`;
  return new GatewayError(message, { status, type: 'provider_error', origin: 'provider', headers });
}

/** A provider error in a provider's own format, once its parts are read out. */
export const providerFailure = (
  status: number,
  type: string,
  message: string,
  code: string | null = null,
  headers: Record<string, string> = {},
) => new GatewayError(message, { status, type, code, origin: 'provider', headers });

/** The provider answered 2xx with a body that is not JSON. */
export const invalidUpstreamReply = (headers: Record<string, string>) =>
  new GatewayError('The provider answered with a body that is not JSON.', {
    status: 502,
    type: 'api_error',
    code: 'invalid_upstream_reply',
    origin: 'provider',
    headers,
  });

/** A stream the provider ended before its last event. */
export const streamTruncated = () =>
  new GatewayError('The provider ended the stream before it was complete.', {
    status: 502,
    type: 'api_error',
    code: 'stream_truncated',
    origin: 'provider',
  });

/** A stream that failed while it was being read. */
export const streamFailed = (error: unknown) =>
  error instanceof GatewayError
    ? error
    : new GatewayError('The provider stream failed.', {
        status: 502,
        type: 'api_error',
        code: 'stream_failed',
        origin: 'provider',
        cause: error,
      });

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
  return error instanceof GatewayError ? error : internalError(error);
}
