import type WebSocket from 'ws';
import { asGatewayError } from '../../core/errors';
import type { LogEntry } from '../../core/log-entry';
import { logger } from '../../core/logger';
import { credentialMasker, type SecretMasker } from '../../core/secret-mask';
import { prepareChecks } from '../../guardrails/engine';
import { RealtimeGuard, type Verdict } from '../../guardrails/realtime-guard';
import type { ModerationResult } from '../../guardrails/types';
import { type ClientConnections, ConnectionGoneError } from '../../store/client-connections';
import type { ConnectionStore } from '../../store/connection-store';
import type { LogStore } from '../../store/log-store';
import { ChannelGoneError, type ClientMessage, type RealtimeChannel } from '../../store/realtime-channel';
import { guardedFetch } from '../address-guard';
import type { BudgetLedger } from '../budget';
import type { UserUsage } from '../user-usage';
import { ClientOrder } from './client-order';
import { CLOSE_CODES, errorEvent, MAX_MESSAGE_BYTES, splitForClient } from './protocol';
import { ResponseBudgets } from './response-budget';
import { type RelayJob, type SessionClose, SessionLog } from './session';
import type { RealtimeUpstream } from './upstream-endpoint';
import type { UpstreamListeners } from './upstream-socket';
import { addRealtimeUsage, readRealtimeUsage, realtimeCost } from './usage';

export interface RelayDeps {
  channel: RealtimeChannel;
  clients: ClientConnections;
  connections: ConnectionStore;
  logs: LogStore;
  users: UserUsage;
  ledger: BudgetLedger;
  /** Opens the provider's socket with the listeners in place from its first event. */
  openUpstream(
    upstream: RealtimeUpstream,
    timeoutMs: number,
    listeners: UpstreamListeners,
  ): Promise<WebSocket>;
}

export interface RelayOptions {
  /** When the gateway ends the session itself (code 4000): before the invocation's own end. */
  sessionLimitMs: number;
  /** How often the session's log entry is rewritten while it runs. */
  logIntervalMs: number;
  connectTimeoutMs: number;
  /** API Gateway answers 410 until `$connect` has returned: that long after it, 410 means "not yet". */
  openingGraceMs: number;
  /** How long a client message missing from the sequence is waited for (2 s unless given). */
  reorderWaitMs?: number;
}

/** Why and how a session ends. */
interface Ending extends SessionClose {
  /** The log entry's status. */
  status: number;
  /** The last event the client gets, saying why. */
  event?: string;
  error?: LogEntry['error'];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const settleWithin = (work: Promise<unknown>, ms: number) =>
  Promise.race([work.catch(() => undefined), sleep(ms)]);

function parseEvent(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** OpenAI's moderation endpoint beside its realtime one, with the session's own credentials. */
function moderationFor(job: RelayJob): ((text: string) => Promise<ModerationResult>) | undefined {
  if (job.provider !== 'openai') return undefined;
  const url = new URL(job.upstream.url);
  url.protocol = url.protocol === 'ws:' ? 'http:' : 'https:';
  url.pathname = url.pathname.replace(/\/realtime$/, '/moderations');
  url.search = '';
  const { 'openai-beta': _beta, ...headers } = job.upstream.headers;
  return async (text) => {
    const res = await guardedFetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'omni-moderation-latest', input: text }),
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    });
    const body = JSON.parse(res.body.toString('utf8')) as {
      results?: Array<{ flagged?: boolean; categories?: Record<string, boolean> }>;
    };
    if (res.status !== 200 || !Array.isArray(body.results))
      throw new Error(`moderation answered ${res.status}`);
    const categories = body.results.flatMap((r) =>
      Object.entries(r.categories ?? {})
        .filter(([, hit]) => hit)
        .map(([name]) => name),
    );
    return { flagged: body.results.some((r) => r.flagged === true), categories: [...new Set(categories)] };
  };
}

/**
 * Owns one realtime session for its whole life: the provider's socket, the client's messages from the
 * channel, the client's events through `@connections`, the log entry, and the budget charged per response.
 */
export class SessionRelay {
  private readonly log: SessionLog;
  private readonly guard?: RealtimeGuard;
  private readonly masker: SecretMasker;
  private readonly budgets?: ResponseBudgets;
  private upstream?: WebSocket;
  private ending?: Ending;
  private readonly stop = new AbortController();
  private clientGone = false;
  private costUnknown = false;
  // Posts go out one at a time, in the order the provider sent them; charges and log writes likewise.
  private outbound: Promise<void> = Promise.resolve();
  private charges: Promise<void> = Promise.resolve();
  private logWrites: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: RelayJob,
    private readonly deps: RelayDeps,
    private readonly options: RelayOptions,
  ) {
    this.log = new SessionLog(job.log, job.connectedAt);
    this.masker = credentialMasker(undefined, job.upstream.headers);
    this.guard = RealtimeGuard.create(job.guardrails, job.model, moderationFor(job));
    if (job.budgets?.length)
      this.budgets = new ResponseBudgets(job.budgets, job.provider, () => this.log.model, job.log.id);
  }

  async run(): Promise<void> {
    const { connectionId } = this.job;
    await this.deps.connections
      .heartbeat(connectionId)
      .catch((error: unknown) => this.warn('heartbeat failed', error));
    const openedAt = performance.now();
    try {
      this.upstream = await this.deps.openUpstream(this.job.upstream, this.options.connectTimeoutMs, {
        message: (data, isBinary) => this.fromUpstream(data, isBinary),
        close: (code, reason) => this.upstreamClosed(code, reason.toString()),
        // A failing socket also emits `close`, which ends the session; this keeps the error from throwing.
        error: (error) => this.warn('upstream socket error', error),
      });
    } catch (error) {
      const failure = asGatewayError(error);
      this.log.upstreamLatencyMs = Math.round(performance.now() - openedAt);
      this.end({
        code: CLOSE_CODES.upstreamError,
        reason: 'upstream_unreachable',
        initiator: 'upstream',
        status: failure.status >= 400 ? failure.status : 502,
        event: errorEvent(failure.type, failure.code ?? 'upstream_unreachable', failure.message),
        error: { message: failure.message, type: failure.type, code: failure.code, origin: failure.origin },
      });
      await this.finish();
      return;
    }
    this.log.upstreamLatencyMs = Math.round(performance.now() - openedAt);

    const limit = setTimeout(
      () => this.end(sessionLimit(this.options.sessionLimitMs)),
      this.options.sessionLimitMs,
    );
    const flush = setInterval(() => this.writeLog(), this.options.logIntervalMs);
    try {
      await this.pumpClient();
    } finally {
      clearTimeout(limit);
      clearInterval(flush);
    }
    await this.finish();
  }

  /** Client messages to the provider, in the client's order, until the session ends. */
  private async pumpClient(): Promise<void> {
    const { connectionId } = this.job;
    const order = new ClientOrder({
      gapWaitMs: this.options.reorderWaitMs ?? 2_000,
      maxHeld: 64,
      onSkip: (from, to) =>
        logger.warn('realtime client messages missing, going on without them', {
          connectionId,
          logId: this.job.log.id,
          from,
          to,
        }),
      onLate: (seq) =>
        logger.warn('realtime client message arrived after its gap was skipped', {
          connectionId,
          logId: this.job.log.id,
          seq,
        }),
    });
    while (!this.ending) {
      let messages: ClientMessage[];
      try {
        messages = order.accept(
          await this.deps.channel.receive(connectionId, this.stop.signal, order.waitMs()),
        );
        messages.push(...order.expire());
      } catch (error) {
        if (error instanceof ChannelGoneError) {
          this.clientGone = true;
          this.end({ code: CLOSE_CODES.normal, reason: 'client_closed', initiator: 'client', status: 200 });
          return;
        }
        this.warn('reading client messages failed', error);
        await sleep(250);
        continue;
      }
      for (const message of messages) {
        if (this.ending) return;
        if (message.kind === 'disconnect') {
          this.clientGone = true;
          this.end({ code: CLOSE_CODES.normal, reason: 'client_closed', initiator: 'client', status: 200 });
          return;
        }
        await this.toUpstream(message);
      }
    }
  }

  private async toUpstream(message: Exclude<ClientMessage, { kind: 'disconnect' }>): Promise<void> {
    this.log.clientEvents++;
    if (message.kind === 'binary') {
      this.upstream?.send(Buffer.from(message.data, 'base64'), { binary: true });
      return;
    }
    const event = parseEvent(message.data);
    // The log keeps the session's configuration: the last one the client asked for.
    if (event?.type === 'session.update' && event.session !== undefined) this.log.session = event.session;
    const verdict = this.guard ? await this.guard.clientEvent(message.data, event) : undefined;
    if (verdict?.kind === 'deny') {
      this.refuse(verdict.message);
      return;
    }
    if (!(await this.budgeted(event, message.data))) return;
    this.upstream?.send(verdict?.kind === 'pass' && verdict.event ? verdict.event : message.data, {
      binary: false,
    });
  }

  /** Reserves a `response.create`'s budget before it is forwarded; false when refused (the client hears why). */
  private async budgeted(event: Record<string, unknown> | undefined, raw: string): Promise<boolean> {
    const budgets = this.budgets;
    if (!budgets) return true;
    if (event?.type !== 'response.create') {
      budgets.observe(event, raw);
      return true;
    }
    try {
      const refusal = await budgets.reserve(event, raw);
      if (refusal) this.deliver([refusal], 0);
      return refusal === undefined;
    } catch (error) {
      this.warn('reserving the response budget failed', error);
      this.deliver(
        [
          errorEvent(
            'server_error',
            'budget_unavailable',
            'The budget could not be checked; the response was not started.',
          ),
        ],
        0,
      );
      return false;
    }
  }

  /** A `deny`: the provider stops the response it is giving, the client hears why. */
  private refuse(message: string): void {
    const upstream = this.upstream;
    if (upstream && upstream.readyState === upstream.OPEN)
      upstream.send(JSON.stringify({ type: 'response.cancel' }));
    this.deliver([errorEvent('invalid_request_error', 'guardrail_denied', message)], 0);
  }

  private fromUpstream(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.ending) return;
    this.log.upstreamEvents++;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      this.deliver(bytes.byteLength <= MAX_MESSAGE_BYTES ? [bytes] : undefined, bytes.byteLength);
      return;
    }
    const raw = bytes.toString('utf8');
    // The provider's error events may echo its credential: the client and the log see it masked.
    const parsed = parseEvent(raw);
    const text = parsed?.type === 'error' ? this.masker.mask(raw) : raw;
    const event = text === raw ? parsed : parseEvent(text);
    const guard = this.guard;
    // With guardrails, each event is checked in delivery order, just before it would be posted.
    this.deliver(
      splitForClient(text),
      bytes.byteLength,
      guard ? () => guard.upstreamEvent(event) : undefined,
    );
    if (!event) return;
    if (event.type === 'session.created' || event.type === 'session.updated') {
      const model = (event.session as { model?: unknown } | undefined)?.model;
      if (typeof model === 'string' && model) this.log.model = model;
    }
    if (event.type === 'response.done') this.account(event);
  }

  /** Queues messages for the client, behind every message before them, unless the guardrails refuse them. */
  private deliver(
    pieces: Array<string | Buffer> | undefined,
    size: number,
    gate?: () => Promise<Verdict>,
  ): void {
    this.outbound = this.outbound.then(async () => {
      const verdict = gate ? await gate() : undefined;
      if (verdict?.kind === 'drop') return;
      if (verdict?.kind === 'deny') {
        if (pieces) for (const piece of pieces) if (verdict.direction === 'input') await this.post(piece);
        this.refuse(verdict.message);
        return;
      }
      if (!pieces) {
        await this.post(
          errorEvent(
            'invalid_request_error',
            'event_too_large',
            `A provider event of ${size} bytes was dropped: API Gateway delivers WebSocket messages of at most ${MAX_MESSAGE_BYTES} bytes.`,
          ),
        );
        return;
      }
      for (const piece of pieces) await this.post(piece);
    });
  }

  private async post(data: string | Buffer): Promise<void> {
    if (this.clientGone) return;
    const { endpoint, connectionId, connectedAt } = this.job;
    for (;;) {
      try {
        await this.deps.clients.post(endpoint, connectionId, data);
        return;
      } catch (error) {
        if (error instanceof ConnectionGoneError) {
          // Until `$connect` has returned, API Gateway does not know the connection yet.
          if (Date.now() - connectedAt < this.options.openingGraceMs) {
            await sleep(25);
            continue;
          }
          this.clientGone = true;
          this.end({ code: CLOSE_CODES.normal, reason: 'client_gone', initiator: 'client', status: 200 });
          return;
        }
        this.warn('posting to the client failed', error);
        this.end({
          code: CLOSE_CODES.upstreamError,
          reason: 'client_delivery_failed',
          initiator: 'gateway',
          status: 502,
          error: {
            message: 'Events could not be delivered to the client.',
            type: 'api_error',
            code: 'client_delivery_failed',
            origin: 'gateway',
          },
        });
        return;
      }
    }
  }

  /**
   * Adds a response's usage and cost, settles its reservation (a cancelled or failed response with what
   * it used), and charges a virtual key without a budget; ends the session once a budget is spent.
   */
  private account(event: Record<string, unknown>): void {
    const usage = readRealtimeUsage((event.response as { usage?: unknown } | undefined)?.usage);
    const cost = usage ? realtimeCost(this.job.provider, this.log.model, usage) : 0;
    if (usage) {
      this.log.responses++;
      this.log.usage = addRealtimeUsage(this.log.usage, usage);
      if (cost === null) this.costUnknown = true;
      this.log.cost = this.costUnknown
        ? null
        : Math.round(((this.log.cost ?? 0) + (cost ?? 0)) * 1e12) / 1e12;
    }
    const budgets = this.budgets;
    if (budgets) {
      this.charges = this.charges.then(async () => {
        try {
          const spent = await budgets.settle(usage, cost);
          if (spent) this.end(budgetExhausted(spent.kind, spent.name, spent.limits.budget_limit ?? 0));
        } catch (error) {
          this.warn('settling the session budgets failed', error);
        }
      });
    }
    const charge = this.job.charge;
    if (!charge || cost === null || cost <= 0) return;
    this.charges = this.charges.then(async () => {
      try {
        const total = await this.deps.ledger.chargeAndTotal(charge.key, charge.state, charge.period, cost);
        const limit = charge.state.budget_limit;
        if (total !== null && limit !== null && total >= limit)
          this.end(budgetExhausted('virtual_key', charge.key.slug, limit));
      } catch (error) {
        this.warn('charging the virtual key failed', error);
      }
    });
  }

  private upstreamClosed(code: number, reason: string): void {
    if (this.ending) return;
    if (code === CLOSE_CODES.normal) {
      this.end({ code: CLOSE_CODES.normal, reason: 'upstream_closed', initiator: 'upstream', status: 200 });
      return;
    }
    const message = `The provider closed the realtime connection (code ${code}${reason ? `: ${reason}` : ''}).`;
    this.end({
      code: CLOSE_CODES.upstreamError,
      reason: 'upstream_closed',
      initiator: 'upstream',
      status: 502,
      event: errorEvent('server_error', 'upstream_closed', message),
      error: { message, type: 'server_error', code: 'upstream_closed', origin: 'provider' },
    });
  }

  /** The first reason to end wins; the pump stops waiting for client messages at once. */
  private end(ending: Ending): void {
    if (this.ending) return;
    this.ending = ending;
    this.stop.abort();
  }

  /** Delivers what is in flight, says why, closes both sides, and writes the final log entry. */
  private async finish(): Promise<void> {
    const ending = this.ending as Ending;
    const { endpoint, connectionId } = this.job;
    // Reservations of responses that never finished are given back.
    await settleWithin(
      this.charges.then(() => this.budgets?.release()),
      5_000,
    );
    await settleWithin(this.outbound, 5_000);
    if (!this.clientGone) {
      if (ending.event) await settleWithin(this.post(ending.event), 5_000);
      await this.deps.clients
        .close(endpoint, connectionId, ending.code, ending.reason)
        .catch((error: unknown) => this.warn('closing the client failed', error));
    }
    const upstream = this.upstream;
    if (upstream && upstream.readyState === upstream.OPEN)
      upstream.close(CLOSE_CODES.normal, 'session ended');

    this.log.close = { code: ending.code, reason: ending.reason, initiator: ending.initiator };
    this.log.status = ending.status;
    this.log.error = ending.error ?? null;
    const entry = this.writeLog(true);
    await Promise.all([
      this.deps.channel
        .remove(connectionId)
        .catch((error: unknown) => this.warn('removing the channel failed', error)),
      this.deps.connections
        .close(connectionId, ending.code, ending.reason)
        .catch((error: unknown) => this.warn('closing the connection record failed', error)),
      this.logWrites,
      this.deps.users.record(entry).catch((error: unknown) => this.warn('user usage update failed', error)),
    ]);
  }

  /** Rewrites the session's log entry (one entry, same id), after any write before it. */
  private writeLog(final = false): LogEntry {
    this.log.guardrails = this.guard?.log() ?? null;
    const entry = this.log.entry();
    this.logWrites = this.logWrites.then(async () => {
      try {
        await this.deps.logs.put(entry);
        if (!final) await this.deps.connections.heartbeat(this.job.connectionId);
      } catch (error) {
        this.warn(final ? 'usage log write failed' : 'usage log update failed', error);
      }
    });
    return entry;
  }

  private warn(message: string, error: unknown): void {
    logger.warn(message, {
      connectionId: this.job.connectionId,
      logId: this.job.log.id,
      error: (error as Error)?.message,
    });
  }
}

function sessionLimit(ms: number): Ending {
  const minutes = Math.round((ms / 60_000) * 10) / 10;
  return {
    code: CLOSE_CODES.sessionLimit,
    reason: 'session_limit_reached',
    initiator: 'gateway',
    status: 200,
    event: errorEvent(
      'invalid_request_error',
      'session_limit_reached',
      `The gateway ends realtime sessions after ${minutes} minutes. Reconnect to go on, and send session.update again.`,
    ),
  };
}

function budgetExhausted(holder: string, name: string, limit: number): Ending {
  const message = `The budget of ${holder.replace('_', ' ')} "${name}" is exhausted (limit ${limit} USD); the session is closed. Raise budget_limit to reopen it.`;
  return {
    code: CLOSE_CODES.budgetExhausted,
    reason: 'budget_exceeded',
    initiator: 'gateway',
    status: 412,
    event: errorEvent('budget_exceeded', 'budget_exceeded', message),
    error: { message, type: 'budget_exceeded', code: 'budget_exceeded', origin: 'gateway' },
  };
}

export async function relaySession(job: RelayJob, deps: RelayDeps, options: RelayOptions): Promise<void> {
  await prepareChecks(job.guardrails);
  return new SessionRelay(job, deps, options).run();
}
