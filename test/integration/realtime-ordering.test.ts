import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RelayJob } from '../../functions/gateway/realtime/session';
import type { SocketEvent } from '../../functions/gateway/realtime/socket-routes';
import type { ClientConnections } from '../../functions/store/client-connections';
import type { ClientMessage, RealtimeChannel } from '../../functions/store/realtime-channel';
import { startFakeRealtime } from '../support/fake-realtime';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';

// `$default` invocations overlap on API Gateway: these tests complete them out of order against the real
// socket routes, the connection counter in DynamoDB and a relay talking to the fake provider.

const { gw, fake } = useGateway({ fake: startFakeRealtime });
// Loaded once the gateway has set the local DynamoDB's endpoint: stores take it when first built.
let m: Awaited<ReturnType<typeof load>>;
const load = async () => ({
  ...(await import('../../functions/gateway/budget')),
  ...(await import('../../functions/gateway/realtime/relay')),
  ...(await import('../../functions/gateway/realtime/socket-routes')),
  ...(await import('../../functions/gateway/realtime/upstream-socket')),
  ...(await import('../../functions/gateway/user-usage')),
  ...(await import('../../functions/store/connection-store')),
  ...(await import('../../functions/store/log-store')),
  ...(await import('../../functions/store/realtime-channel')),
});

beforeAll(async () => {
  m = await load();
});

/** The client's side of `@connections`: what the relay and the routes post to it. */
class RecordingClients implements ClientConnections {
  readonly posted: Array<Record<string, unknown>> = [];
  private readonly waiters: Array<{ type: string; resolve: () => void }> = [];
  async post(_endpoint: string, _connectionId: string, data: string | Uint8Array): Promise<void> {
    const event = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
    this.posted.push(event);
    for (const w of this.waiters.filter((w) => w.type === event.type)) w.resolve();
  }
  async close(): Promise<void> {}
  next(type: string): Promise<void> {
    if (this.posted.some((e) => e.type === type)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ type, resolve }));
  }
}

/** Holds the first message's send until released, so the second one completes first. */
class HoldFirst implements RealtimeChannel {
  private held = false;
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => {
    this.release = r;
  });
  reached!: () => void;
  readonly firstReached = new Promise<void>((r) => {
    this.reached = r;
  });
  constructor(private readonly inner: RealtimeChannel) {}
  create = (id: string) => this.inner.create(id);
  receive = (id: string, signal: AbortSignal, waitMs?: number) => this.inner.receive(id, signal, waitMs);
  remove = (id: string) => this.inner.remove(id);
  async send(id: string, message: ClientMessage, messageId: string): Promise<void> {
    if (!this.held) {
      this.held = true;
      this.reached();
      await this.gate;
    }
    await this.inner.send(id, message, messageId);
  }
  open(): void {
    this.release();
  }
}

let seq = 0;
function messageEvent(connectionId: string, body: unknown, routeKey = '$default'): SocketEvent {
  seq++;
  return {
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: {
      routeKey,
      eventType: routeKey === '$default' ? 'MESSAGE' : 'DISCONNECT',
      messageId: `m${seq}`,
      requestId: `r${seq}`,
      connectionId,
      connectedAt: Date.now(),
      domainName: '127.0.0.1',
      stage: '$default',
      apiId: 'local',
      extendedRequestId: `x${seq}`,
      requestTime: new Date().toUTCString(),
      messageDirection: 'IN',
      requestTimeEpoch: Date.now(),
    },
  } as SocketEvent;
}

/** A session as `$connect` leaves it: channel, connection record, and a relay on the fake provider. */
async function startSession(channel: RealtimeChannel, clients: RecordingClients) {
  const connectionId = `conn-${Date.now()}-${Math.random().toString(36).slice(2)}=`;
  const connections = new m.ConnectionStore();
  await channel.create(connectionId);
  const now = new Date().toISOString();
  await connections.put({
    connection_id: connectionId,
    log_id: `log-${connectionId}`,
    organisation_id: 'default',
    workspace: 'default',
    provider: 'openai',
    model: 'gpt-realtime',
    virtual_key: null,
    status: 'connecting',
    created_at: now,
    heartbeat_at: null,
    closed_at: null,
    close_code: null,
    close_reason: null,
  });
  const job: RelayJob = {
    connectionId,
    endpoint: `http://127.0.0.1:${gw.port}`,
    connectedAt: Date.now(),
    provider: 'openai',
    model: 'gpt-realtime',
    upstream: {
      url: `${fake.url.replace(/^http/, 'ws')}/realtime?model=gpt-realtime`,
      headers: { authorization: 'Bearer sk-upstream' },
    },
    charge: null,
    log: {
      id: `log-${connectionId}`,
      trace_id: 'trace-ordering',
      timestamp: now,
      organisation_id: 'default',
      workspace: 'default',
      auth: { type: 'api_key' },
      user: null,
      metadata: {},
      operation: 'realtime',
      provider: 'openai',
      model: 'gpt-realtime',
      virtual_key: null,
      status: 101,
      stream: true,
      latency_ms: 0,
      upstream_latency_ms: null,
      first_chunk_ms: null,
      usage: null,
      cost: null,
      request: { model: 'gpt-realtime', session: null },
      response: null,
      error: null,
      attempts: [],
    },
  };
  const relay = m.relaySession(
    job,
    {
      channel,
      clients,
      connections,
      logs: new m.LogStore(),
      users: new m.UserUsage(),
      ledger: new m.BudgetLedger(),
      openUpstream: m.openUpstreamSocket,
    },
    {
      sessionLimitMs: 120_000,
      logIntervalMs: 60_000,
      connectTimeoutMs: 10_000,
      openingGraceMs: 10_000,
      // Far longer than the test: a gap is always filled here, never skipped.
      reorderWaitMs: 120_000,
    },
  );
  await clients.next('session.created');
  return { connectionId, connections, relay };
}

describe('realtime ordering', () => {
  it('sends client messages upstream in the client order when $default invocations complete out of order', async () => {
    const channel = new m.LocalRealtimeChannel(1_000);
    const clients = new RecordingClients();
    const { connectionId, connections, relay } = await startSession(channel, clients);
    const gated = new HoldFirst(channel);
    const routes = new m.RealtimeSocketRoutes({ connections, channel: () => gated, clients: () => clients });

    // Message 1 takes its number, then stalls before reaching the channel; message 2 overtakes it.
    const first = routes.message(
      messageEvent(connectionId, { type: 'session.update', session: { instructions: 'one' } }),
    );
    await gated.firstReached;
    const second = await routes.message(
      messageEvent(connectionId, { type: 'input_audio_buffer.append', audio: 'AAAA' }),
    );
    expect(second.statusCode).toBe(200);
    gated.open();
    expect((await first).statusCode).toBe(200);
    expect(
      (await routes.message(messageEvent(connectionId, { type: 'input_audio_buffer.commit' }))).statusCode,
    ).toBe(200);
    await clients.next('input_audio_buffer.committed');

    expect(fake.sessions[0]?.received.map((e) => e.type)).toEqual([
      'session.update',
      'input_audio_buffer.append',
      'input_audio_buffer.commit',
    ]);
    expect(clients.posted.map((e) => e.type)).toEqual([
      'session.created',
      'session.updated',
      'input_audio_buffer.committed',
    ]);

    const disconnect = await routes.disconnect(messageEvent(connectionId, '', '$disconnect'));
    expect(disconnect.statusCode).toBe(200);
    await relay;
    expect((await connections.get(connectionId))?.status).toBe('closed');
  });

  it('numbers each message atomically from the connection record', async () => {
    const connections = new m.ConnectionStore();
    const connectionId = `count-${Date.now()}=`;
    expect(await connections.nextSequence(connectionId)).toBeUndefined();
    await connections.put({
      connection_id: connectionId,
      log_id: 'log',
      organisation_id: 'default',
      workspace: 'default',
      provider: 'openai',
      model: 'gpt-realtime',
      virtual_key: null,
      status: 'connecting',
      created_at: new Date().toISOString(),
      heartbeat_at: null,
      closed_at: null,
      close_code: null,
      close_reason: null,
    });
    const numbers = await Promise.all(
      Array.from({ length: 20 }, () => connections.nextSequence(connectionId)),
    );
    expect([...numbers].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect((await connections.get(connectionId))?.status).toBe('connecting');
  });

  it('retries a message the channel refuses just after connect, and delivers it', async () => {
    const inner = new m.LocalRealtimeChannel(1_000);
    await inner.create('retry=');
    let refusals = 2;
    const flaky: RealtimeChannel = {
      create: (id) => inner.create(id),
      receive: (id, signal, waitMs) => inner.receive(id, signal, waitMs),
      remove: (id) => inner.remove(id),
      async send(id, message, messageId) {
        if (refusals-- > 0) throw new m.ChannelGoneError(id);
        await inner.send(id, message, messageId);
      },
    };
    const clients = new RecordingClients();
    const routes = new m.RealtimeSocketRoutes({ channel: () => flaky, clients: () => clients });
    const result = await routes.message(messageEvent('retry=', { type: 'session.update', session: {} }));
    expect(result.statusCode).toBe(200);
    const [delivered] = await inner.receive('retry=', new AbortController().signal);
    expect(delivered).toMatchObject({
      kind: 'text',
      data: JSON.stringify({ type: 'session.update', session: {} }),
    });
    expect(clients.posted).toEqual([]);
  });

  it('tells the client with an error event when a message finally cannot be queued', async () => {
    const inner = new m.LocalRealtimeChannel(1_000);
    const broken: RealtimeChannel = {
      create: (id) => inner.create(id),
      receive: (id, signal, waitMs) => inner.receive(id, signal, waitMs),
      remove: (id) => inner.remove(id),
      async send() {
        throw Object.assign(new Error('throttled'), { name: 'RequestThrottled' });
      },
    };
    const clients = new RecordingClients();
    const routes = new m.RealtimeSocketRoutes({ channel: () => broken, clients: () => clients });
    const result = await routes.message(messageEvent('broken=', { type: 'session.update', session: {} }));
    expect(result.statusCode).toBe(500);
    expect(clients.posted).toHaveLength(1);
    expect(clients.posted[0]).toMatchObject({ type: 'error', error: { code: 'message_not_delivered' } });
  });
});

describe('realtime first message', () => {
  it('never loses the first client message sent the moment the connection opens', async () => {
    for (let i = 0; i < 5; i++) {
      fake.reset();
      const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/v1/realtime?model=gpt-realtime`, {
        headers: {
          'x-gateway-api-key': ADMIN_KEY,
          'x-gateway-provider': 'openai',
          'x-gateway-custom-host': fake.url,
          authorization: 'Bearer sk-upstream',
        },
      });
      const types: string[] = [];
      const updated = new Promise<void>((resolve) =>
        ws.on('message', (data) => {
          const event = JSON.parse(data.toString()) as { type: string };
          types.push(event.type);
          if (event.type === 'session.updated') resolve();
        }),
      );
      ws.once('open', () =>
        ws.send(JSON.stringify({ type: 'session.update', session: { instructions: `first-${i}` } })),
      );
      await updated;
      expect(fake.sessions[0]?.received[0]).toMatchObject({
        type: 'session.update',
        session: { instructions: `first-${i}` },
      });
      expect(types).toContain('session.created');
      const closed = new Promise((r) => ws.once('close', r));
      ws.close();
      await closed;
    }
  });
});
