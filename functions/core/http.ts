import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { GatewayConfig } from './gateway-config';
import type { LogEntry, SendOutcome, UsageLogDraft } from './log-entry';
import type { Operation } from './operations';
import type { Principal } from './principal';
import type { StopSignal } from './stop-signal';

/** A function URL event (payload format 2.0). */
export type HttpEvent = APIGatewayProxyEventV2;

/** A body is sent whole, or chunk by chunk as an async iterable yields it (never buffered). */
export type HttpBody = string | AsyncIterable<string | Uint8Array>;

export interface HttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: HttpBody;
}

/** Per-request state carried on the Lambda context through the middleware chain. */
export interface RequestState {
  requestId: string;
  traceId: string;
  /** `performance.now()` when the invocation started, for latency. */
  startedAt: number;
  /** Wall clock at start, for the log timestamp. */
  startedAtMs: number;
  /** Lower-cased request headers. */
  headers: Record<string, string>;
  operation?: Operation;
  params: Record<string, string>;
  principal?: Principal;
  /** The request's gateway config, read once (null: none given); routing and guardrails share it. */
  config?: GatewayConfig | null;
  /** Present for logged operations once the caller is authenticated. */
  log?: UsageLogDraft;
  /** The finished log entry, set by the usage log's after-send work for the telemetry that follows it. */
  entry?: LogEntry;
  /** Aborted when the client goes away before the reply is complete. */
  clientSignal: StopSignal;
  /** Work that runs after the client has its last byte (on Lambda, before the invocation returns). */
  afterSend: Array<(outcome: SendOutcome) => Promise<void>>;
  /** Headers added to every reply, errors included. */
  replyHeaders: Record<string, string>;
  /**
   * Milliseconds spent waiting on providers before the reply starts: upstream attempts up to their reply
   * headers (or their whole reply when it is read), and retry waits. The rest is the gateway's own time,
   * sent as `x-gateway-overhead-ms`.
   */
  upstreamWaitMs: number;
}

/** The state of every operation but the public ones, once its caller is authenticated. */
export interface CallerState extends RequestState {
  principal: Principal;
}

/** The state of a logged (model) operation: its caller is known and its log entry is open. */
export interface ModelCallState extends CallerState {
  log: UsageLogDraft;
}

/** Whether the caller is known (the authenticate middleware ran and accepted it). */
export const hasCaller = (state: RequestState): state is CallerState => state.principal !== undefined;

export interface GatewayContext extends Context {
  gateway: RequestState;
}

export function jsonResult(
  statusCode: number,
  value: unknown,
  headers: Record<string, string> = {},
): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(value),
  };
}

export function listResult(data: unknown[], nextCursor: string | null): HttpResult {
  return jsonResult(200, { object: 'list', data, next_cursor: nextCursor });
}
