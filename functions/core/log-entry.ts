import type { ModelPrice } from './prices';

export interface SendOutcome {
  statusCode: number;
  /** The client went away before the last byte. */
  clientDisconnected: boolean;
}

/** One upstream attempt (a retry or a fallback target), or a target refused before one. */
export interface AttemptRecord {
  target_index: string;
  provider: string | null;
  virtual_key: string | null;
  status: number | null;
  latency_ms: number;
  /** The retry backoff waited before this attempt (0 for a first try); absent in older entries. */
  wait_ms?: number;
  error: string | null;
}

/** Each check's outcome, for the log: never the matched text. */
export interface GuardrailLog {
  input?: GuardrailOutcomeLog[];
  output?: GuardrailOutcomeLog[];
}

export interface GuardrailOutcomeLog {
  id: string;
  type: string;
  action: 'deny' | 'log' | 'redact';
  passed: boolean;
  message?: string;
  findings: number;
  duration_ms: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from the provider's cache, when it reports them. */
  cached_tokens?: number;
  /** Counted by the gateway (a stream the client left before the provider's usage), not reported. */
  estimated?: boolean;
  /** The provider reported negative, non-finite or absurd counts; they were clamped. */
  clamped?: boolean;
}

/** One log entry per request. Field names are part of the public contract (README, "Logs"). */
export interface LogEntry {
  id: string;
  trace_id: string;
  timestamp: string;
  organisation_id: string;
  workspace: string;
  auth: { type: 'api_key' | 'jwt'; key_id?: string; subject?: string };
  user: string | null;
  metadata: Record<string, string>;
  operation: string;
  provider: string | null;
  model: string | null;
  virtual_key: string | null;
  status: number;
  stream: boolean;
  latency_ms: number;
  upstream_latency_ms: number | null;
  /** Streams only: from sending the upstream request to writing the first chunk to the client. */
  first_chunk_ms: number | null;
  usage: Usage | null;
  cost: number | null;
  request: unknown;
  response: unknown;
  error: { message: string; type: string; code: string | null; origin: string } | null;
  /** Every upstream attempt (retries, fallbacks) and every target refused before one, in order. */
  attempts: AttemptRecord[];
  /** The stored prompt a prompt completion ran, and its version. */
  prompt?: { id: string; version: number };
  /** What the config's guardrails found, on the input and on the output. */
  guardrails?: GuardrailLog;
  /** Set when the bodies live in the blob store and were not loaded for this read. */
  body_ref?: string;
}

/** What a handler fills in while it serves a logged request; finished after the last byte is sent. */
export class UsageLogDraft {
  provider: string | null = null;
  model: string | null = null;
  virtualKey: string | null = null;
  user: string | null = null;
  stream = false;
  request: unknown = null;
  response: unknown = null;
  usage: Usage | null = null;
  cost: number | null = null;
  upstreamLatencyMs: number | null = null;
  firstChunkMs: number | null = null;
  error: LogEntry['error'] = null;
  /** Overrides the HTTP status when a stream failed after its 200 was sent. */
  effectiveStatus: number | null = null;
  attempts: AttemptRecord[] = [];
  prompt: { id: string; version: number } | null = null;
  guardrails: GuardrailLog | null = null;
  /** Prices the operator set on the virtual key and the workspace, which win over the price table. */
  operatorPrices: Array<Record<string, ModelPrice> | undefined> = [];
  /** Work that needs the finished entry (spend), run with the log write after the last byte. */
  settlements: Array<(entry: LogEntry) => Promise<void>> = [];

  constructor(
    readonly base: Pick<
      LogEntry,
      'id' | 'trace_id' | 'timestamp' | 'organisation_id' | 'workspace' | 'auth' | 'metadata' | 'operation'
    >,
    private readonly startedAt: number,
  ) {}

  finish(outcome: SendOutcome, endedAt: number): LogEntry {
    let status = this.effectiveStatus ?? outcome.statusCode;
    let error = this.error;
    if (outcome.clientDisconnected && !error) {
      // 499: the client closed the request (the nginx convention); the reply was not delivered whole.
      status = 499;
      error = {
        message: 'The client disconnected before the reply was complete.',
        type: 'client_closed',
        code: null,
        origin: 'gateway',
      };
    }
    // The base goes last: in V8 an object spread followed by properties costs about 1 µs a property
    // (20 µs here), a spread after them next to nothing. No key of the base is set below.
    return {
      user: this.user,
      provider: this.provider,
      model: this.model,
      virtual_key: this.virtualKey,
      status,
      stream: this.stream,
      latency_ms: round(endedAt - this.startedAt),
      upstream_latency_ms: this.upstreamLatencyMs === null ? null : round(this.upstreamLatencyMs),
      first_chunk_ms: this.firstChunkMs === null ? null : round(this.firstChunkMs),
      usage: this.usage,
      cost: this.cost,
      request: this.request,
      response: this.response,
      error,
      attempts: this.attempts,
      ...(this.prompt ? { prompt: this.prompt } : {}),
      ...(this.guardrails ? { guardrails: this.guardrails } : {}),
      ...this.base,
    };
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;
