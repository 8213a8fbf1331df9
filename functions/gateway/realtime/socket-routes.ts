import type { APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { Authenticator } from '../../control/authenticator';
import { asGatewayError, badRequest, forbidden, GatewayError, unauthorized } from '../../core/errors';
import { newId } from '../../core/ids';
import type { LogEntry } from '../../core/log-entry';
import { logger } from '../../core/logger';
import { hasScope, type Principal } from '../../core/principal';
import { parseMetadata } from '../../core/request-body';
import { settings } from '../../core/settings';
import { guardrailResolver } from '../../guardrails/resolve';
import { type ClientConnections, clientConnections } from '../../store/client-connections';
import { ConnectionStore } from '../../store/connection-store';
import { LogStore } from '../../store/log-store';
import {
  ChannelGoneError,
  type ClientMessage,
  type RealtimeChannel,
  realtimeChannel,
} from '../../store/realtime-channel';
import { type RelayLauncher, relayLauncher } from '../../store/relay-launcher';
import { BudgetReservation } from '../budget';
import { buildPlan, type PlanTarget } from '../plan';
import { enforceModel, enforceTarget, policies, userHolder } from '../policy';
import { virtualKeyHolder } from '../reserve';
import { Router } from '../router';
import {
  checkRouteHosts,
  type ResolvedTarget,
  readConfig,
  resolveTarget,
  routeOverrides,
  splitModel,
} from '../target';
import {
  errorEvent,
  exceedsMessageLimit,
  keyInQuery,
  MAX_MESSAGE_BYTES,
  withSubprotocolHeaders,
} from './protocol';
import type { RelayJob } from './session';
import { realtimeUpstream } from './upstream-endpoint';

/** API Gateway's WebSocket event; `$connect` also carries the upgrade request's headers and query. */
export type SocketEvent = APIGatewayProxyWebsocketEventV2 & {
  headers?: Record<string, string | undefined>;
  queryStringParameters?: Record<string, string | undefined> | null;
};

export interface SocketResult {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
}

const TRACE_ID = /^[\w.:/-]{1,128}$/;
// A relay that has not beaten for this long is gone (its heartbeat comes with every log flush).
const STALE_RELAY_MS = 90_000;
// A client message the channel refuses is tried this often, waiting 50, 100, 200... ms in between.
const SEND_ATTEMPTS = 5;
const SEND_RETRY_MS = 50;
// This soon after `$connect`, a channel that is not there is not there yet, rather than gone.
const OPENING_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SocketDeps {
  authenticator: Authenticator;
  logs: LogStore;
  connections: ConnectionStore;
  channel: () => RealtimeChannel;
  launcher: () => RelayLauncher;
  clients: () => ClientConnections;
}

const lowerCased = (headers: Record<string, string | undefined> | undefined) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) out[k.toLowerCase()] = v;
  return out;
};

function refusal(error: GatewayError, replyHeaders: Record<string, string>): SocketResult {
  return {
    statusCode: error.status,
    headers: {
      'content-type': 'application/json',
      'x-gateway-error-origin': error.origin,
      ...error.headers,
      ...replyHeaders,
    },
    body: JSON.stringify(error.toBody()),
  };
}

/** Where the relay reaches the client: the stack's stage URL on AWS, else the event's own domain. */
function managementEndpoint(event: SocketEvent): string {
  const { realtimeManagementUrl, local } = settings();
  if (realtimeManagementUrl) return realtimeManagementUrl;
  const { domainName, stage } = event.requestContext;
  const scheme = local ? 'http' : 'https';
  return `${scheme}://${domainName}${stage && stage !== '$default' ? `/${stage}` : ''}`;
}

/** `$connect`, `$default` and `$disconnect` of `/v1/realtime`; the session itself is the relay's. */
export class RealtimeSocketRoutes {
  private readonly deps: SocketDeps;

  constructor(deps: Partial<SocketDeps> = {}) {
    this.deps = {
      authenticator: deps.authenticator ?? new Authenticator(),
      logs: deps.logs ?? new LogStore(),
      connections: deps.connections ?? new ConnectionStore(),
      channel: deps.channel ?? realtimeChannel,
      launcher: deps.launcher ?? relayLauncher,
      clients: deps.clients ?? clientConnections,
    };
  }

  async handle(event: SocketEvent): Promise<SocketResult> {
    switch (event.requestContext.routeKey) {
      case '$connect':
        return this.connect(event);
      case '$disconnect':
        return this.disconnect(event);
      default:
        return this.message(event);
    }
  }

  /**
   * Authenticates, authorizes and routes exactly as an HTTP model call does, and refuses with the HTTP
   * status before the upgrade. Once admitted: the channel, the connection record and the log entry exist,
   * and the relay has been started.
   */
  async connect(event: SocketEvent): Promise<SocketResult> {
    const connectionId = event.requestContext.connectionId;
    const startedAt = Date.now();
    const logId = newId();
    const { headers, selected } = withSubprotocolHeaders(lowerCased(event.headers));
    const query = Object.fromEntries(
      Object.entries(event.queryStringParameters ?? {}).filter(
        (e): e is [string, string] => e[1] !== undefined,
      ),
    );
    const given = headers['x-gateway-trace-id'];
    const traceId = given && TRACE_ID.test(given) ? given : crypto.randomUUID();
    const replyHeaders = { 'x-gateway-request-id': logId, 'x-gateway-trace-id': traceId };

    let principal: Principal;
    try {
      if (!Authenticator.presentedKey(headers) && keyInQuery(query)) {
        throw unauthorized(
          'Keys in the URL are not accepted (URLs end up in access logs): send x-gateway-api-key, or the subprotocol gateway-key.<key>.',
        );
      }
      principal = await this.deps.authenticator.authenticate(headers, {
        requestId: logId,
        source: (event.requestContext as { identity?: { sourceIp?: string } }).identity?.sourceIp,
      });
    } catch (error) {
      return refusal(asGatewayError(error), replyHeaders);
    }

    // From here on the caller is known, so a refusal is logged like any refused model call.
    const entry: LogEntry = {
      id: logId,
      trace_id: traceId,
      timestamp: new Date(startedAt).toISOString(),
      organisation_id: principal.organisationId,
      workspace: principal.workspace,
      auth: {
        type: principal.type,
        ...(principal.keyId ? { key_id: principal.keyId } : {}),
        ...(principal.subject ? { subject: principal.subject } : {}),
      },
      user: null,
      metadata: {},
      operation: 'realtime',
      provider: null,
      model: query.model ?? null,
      virtual_key: null,
      status: 101,
      stream: true,
      latency_ms: 0,
      upstream_latency_ms: null,
      first_chunk_ms: null,
      usage: null,
      cost: null,
      request: { model: query.model ?? null, session: null },
      response: null,
      error: null,
      attempts: [],
    };

    let router: Router<ResolvedTarget, { status: number }> | undefined;
    try {
      entry.metadata = parseMetadata(headers['x-gateway-metadata']);
      entry.user = entry.metadata._user ?? null;
      if (!hasScope(principal, 'completions.write')) {
        throw forbidden('This key lacks the scope "completions.write" needed for realtime.');
      }
      if (!query.model?.trim()) {
        throw badRequest(
          'model is required: /v1/realtime?model=<model>.',
          'model',
          'missing_required_parameter',
        );
      }
      const { model, slug } = splitModel(query.model.trim());
      entry.model = model;
      // The workspace's and API key's policies apply to realtime as to every model call.
      const policy = await policies.forPrincipal(principal);
      enforceModel(policy, model);
      const config = (await readConfig(headers, principal)) ?? policy.defaultConfig;
      const wanted = {
        input_guardrails: [...policy.guardrails.input_guardrails, ...(config?.input_guardrails ?? [])],
        output_guardrails: [...policy.guardrails.output_guardrails, ...(config?.output_guardrails ?? [])],
      };
      const guardrails =
        wanted.input_guardrails.length > 0 || wanted.output_guardrails.length > 0
          ? await guardrailResolver.expand(wanted, principal.organisationId, principal.workspace)
          : undefined;
      // A session is refused while a budget of the caller's hierarchy cannot take anything more.
      const user = userHolder(policy, principal, entry.user);
      const holders = user ? [...policy.holders, user] : policy.holders;
      await (await BudgetReservation.take(holders, 0, logId)).release();
      const budgets = holders.filter((h) => h.limits.budget_limit !== null);
      const plan = buildPlan(config, routeOverrides(headers, slug));
      await checkRouteHosts(plan, headers, principal, config);
      // A session has one upstream: targets refused for budget or rate limit make way for the next, as
      // on HTTP, and the first admitted target serves the whole session.
      const prepare = async (planned: PlanTarget) => {
        entry.virtual_key = planned.virtualKey?.value ?? null;
        const target = await resolveTarget(planned, headers, principal);
        entry.provider = target.provider.name;
        entry.virtual_key = target.virtualKeySlug;
        enforceTarget(policy, target.provider.name, !!planned.customHost);
        // Nor is a session opened on a virtual key whose budget cannot take anything more.
        const vkBudget = virtualKeyHolder(target);
        if (vkBudget) await (await BudgetReservation.take([vkBudget], 0, logId)).release();
        return target;
      };
      router = new Router(prepare, async () => ({ status: 101 }), new AbortController().signal);
      const served = await router.run(plan);
      entry.attempts = router.attempts;
      const target = served.prepared;
      const upstream = realtimeUpstream({ ...target, providerName: target.provider.name }, model, headers);
      const vk = target.virtualKey;
      // A virtual key's budget is reserved on per response with the others, as on HTTP.
      const vkHolder = virtualKeyHolder(target);
      if (vkHolder) budgets.push(vkHolder);
      const job: RelayJob = {
        connectionId,
        endpoint: managementEndpoint(event),
        connectedAt: startedAt,
        provider: target.provider.name,
        model,
        upstream,
        charge:
          vk && !vkHolder
            ? {
                key: {
                  id: vk.record.id,
                  slug: vk.record.slug,
                  workspace: vk.record.workspace,
                  organisation_id: vk.record.organisation_id,
                },
                state: vk.state,
                period: vk.period,
              }
            : null,
        log: entry,
        ...(guardrails ? { guardrails } : {}),
        ...(budgets.length > 0 ? { budgets } : {}),
      };
      await this.admit(job);
      return {
        statusCode: 200,
        headers: { ...(selected ? { 'sec-websocket-protocol': selected } : {}), ...replyHeaders },
      };
    } catch (error) {
      const failure = asGatewayError(error);
      if (!(error instanceof GatewayError)) {
        logger.error('realtime connect failed', { connectionId, error: (error as Error).message });
      }
      if (router) entry.attempts = router.attempts;
      entry.status = failure.status;
      entry.latency_ms = Date.now() - startedAt;
      entry.error = {
        message: failure.message,
        type: failure.type,
        code: failure.code,
        origin: failure.origin,
      };
      await this.deps.logs
        .put(entry)
        .catch((e: unknown) =>
          logger.error('usage log write failed', { id: logId, error: (e as Error).message }),
        );
      return refusal(failure, replyHeaders);
    }
  }

  /**
   * Channel (ready to take messages), record and first log entry, then the relay; undone if any of it
   * fails, so the connection is accepted only once its first message has somewhere to go.
   */
  private async admit(job: RelayJob): Promise<void> {
    const channel = this.deps.channel();
    const { connectionId } = job;
    try {
      await channel.create(connectionId);
      await Promise.all([
        this.deps.connections.put({
          connection_id: connectionId,
          log_id: job.log.id,
          organisation_id: job.log.organisation_id,
          workspace: job.log.workspace,
          provider: job.provider,
          model: job.model,
          virtual_key: job.log.virtual_key,
          status: 'connecting',
          created_at: new Date(job.connectedAt).toISOString(),
          heartbeat_at: null,
          closed_at: null,
          close_code: null,
          close_reason: null,
        }),
        this.deps.logs.put(job.log),
      ]);
      await this.deps.launcher().launch(job);
    } catch (error) {
      await channel.remove(connectionId).catch(() => undefined);
      throw error;
    }
  }

  /**
   * `$default`: one client message onto the session's channel, numbered in the connection's order (the
   * relay restores it, as invocations overlap). A refusal is retried briefly, and never dropped silently.
   */
  async message(event: SocketEvent): Promise<SocketResult> {
    const { connectionId, messageId, requestId, connectedAt } = event.requestContext;
    const body = event.body ?? '';
    // API Gateway refuses larger messages itself (close 1009); this guards any other caller.
    if (exceedsMessageLimit(event.isBase64Encoded ? Buffer.from(body, 'base64') : body, MAX_MESSAGE_BYTES)) {
      return { statusCode: 413 };
    }
    const seq = await this.sequence(connectionId);
    const message: ClientMessage = event.isBase64Encoded
      ? { kind: 'binary', data: body, ...seq }
      : { kind: 'text', data: body, ...seq };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.channel().send(connectionId, message, messageId ?? requestId);
        return { statusCode: 200 };
      } catch (error) {
        const gone = error instanceof ChannelGoneError;
        // The session has ended and its channel with it; the client is being disconnected.
        if (gone && !(Date.now() - connectedAt < OPENING_MS)) return { statusCode: 410 };
        if (attempt >= SEND_ATTEMPTS) {
          await this.undelivered(event, seq.seq, error);
          return { statusCode: gone ? 410 : 500 };
        }
        await sleep(SEND_RETRY_MS * 2 ** (attempt - 1));
      }
    }
  }

  /** The message's number; without one (the counter failed) it still goes, in channel order. */
  private async sequence(connectionId: string): Promise<{ seq?: number }> {
    try {
      const seq = await this.deps.connections.nextSequence(connectionId);
      return seq === undefined ? {} : { seq };
    } catch (error) {
      logger.warn('realtime message counter failed', { connectionId, error: (error as Error).message });
      return {};
    }
  }

  /** A message that could not be queued: a log line, and an error event so the client knows. */
  private async undelivered(event: SocketEvent, seq: number | undefined, error: unknown): Promise<void> {
    const { connectionId } = event.requestContext;
    logger.error('realtime client message not delivered', {
      connectionId,
      seq,
      error: (error as Error).message,
    });
    await this.deps
      .clients()
      .post(
        managementEndpoint(event),
        connectionId,
        errorEvent(
          'server_error',
          'message_not_delivered',
          'The gateway could not pass your last message on to the provider; send it again.',
        ),
      )
      .catch((e: unknown) =>
        logger.warn('realtime error event not delivered', { connectionId, error: (e as Error).message }),
      );
  }

  /** `$disconnect`: tells the relay, or cleans up after one that is no longer there. */
  async disconnect(event: SocketEvent): Promise<SocketResult> {
    const { connectionId, requestId } = event.requestContext;
    const channel = this.deps.channel();
    try {
      // Numbered too: the relay ends the session after the client's last message, not before it.
      const seq = await this.sequence(connectionId);
      await channel.send(connectionId, { kind: 'disconnect', ...seq }, `disconnect-${requestId}`);
    } catch (error) {
      if (!(error instanceof ChannelGoneError)) throw error;
      return { statusCode: 200 };
    }
    const record = await this.deps.connections.get(connectionId);
    const beat = record?.heartbeat_at
      ? Date.parse(record.heartbeat_at)
      : Date.parse(record?.created_at ?? '');
    if (!record || record.status === 'closed' || !(Date.now() - beat < STALE_RELAY_MS)) {
      await channel.remove(connectionId);
      await this.deps.connections.close(connectionId, 1000, 'client_closed');
    }
    return { statusCode: 200 };
  }
}
