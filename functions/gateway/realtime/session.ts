import type { GuardrailLog, LogEntry } from '../../core/log-entry';
import type { SessionGuardrails } from '../../guardrails/realtime-guard';
import type { VirtualKeyState } from '../../store/counter-store';
import type { LimitHolder } from '../budget';
import type { RealtimeUpstream } from './upstream-endpoint';
import { asLogUsage, emptyRealtimeUsage, type RealtimeUsage } from './usage';

/** The virtual key a session charges, with what the budget ledger needs. */
export interface SessionCharge {
  key: { id: string; slug: string; workspace: string; organisation_id: string };
  state: VirtualKeyState;
  period: string;
}

/**
 * Everything the relay needs for one session, decided at `$connect`: it travels in the asynchronous
 * invocation's payload (never in DynamoDB, as it holds the provider credential).
 */
export interface RelayJob {
  connectionId: string;
  /** The `@connections` management API of the stage the client is connected to. */
  endpoint: string;
  /** Epoch ms of `$connect`. */
  connectedAt: number;
  provider: string;
  model: string;
  upstream: RealtimeUpstream;
  charge: SessionCharge | null;
  /** The session's log entry as written at `$connect`. */
  log: LogEntry;
  /** The config's guardrails, expanded at `$connect`; the relay compiles them. */
  guardrails?: SessionGuardrails;
  /** The workspace, API key and end-user budgets each response is charged to. */
  budgets?: LimitHolder[];
}

export interface SessionClose {
  code: number;
  reason: string;
  /** Who ended the session: the client, the provider, or the gateway (budget, time limit). */
  initiator: 'client' | 'upstream' | 'gateway';
}

/** The one log entry of a realtime session, rewritten (same id) as the session goes on. */
export class SessionLog {
  clientEvents = 0;
  upstreamEvents = 0;
  responses = 0;
  usage: RealtimeUsage = emptyRealtimeUsage();
  cost: number | null = null;
  /** The `session` of the last `session.update` the client sent. */
  session: unknown = null;
  model: string;
  status = 101;
  error: LogEntry['error'] = null;
  close: SessionClose | null = null;
  upstreamLatencyMs: number | null = null;
  guardrails: GuardrailLog | null = null;

  constructor(
    readonly base: LogEntry,
    private readonly startedAtMs: number,
  ) {
    this.model = base.model ?? '';
  }

  entry(nowMs = Date.now()): LogEntry {
    const duration = Math.max(0, nowMs - this.startedAtMs);
    return {
      ...this.base,
      model: this.model,
      status: this.status,
      stream: true,
      latency_ms: duration,
      upstream_latency_ms: this.upstreamLatencyMs,
      first_chunk_ms: null,
      usage: this.responses > 0 ? asLogUsage(this.usage) : null,
      cost: this.cost,
      request: { model: this.model, session: this.session },
      response: {
        duration_ms: duration,
        events: { client: this.clientEvents, upstream: this.upstreamEvents },
        responses: this.responses,
        usage: this.usage,
        close: this.close,
      },
      error: this.error,
      ...(this.guardrails ? { guardrails: this.guardrails } : {}),
    };
  }
}
