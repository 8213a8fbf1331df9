import { isUtf8 } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  REALTIME_FUNCTIONS,
  REALTIME_OPERATION,
  type RealtimeFunctionName,
} from '../functions/core/operations';
import { CLOSE_CODES, errorEvent, MAX_MESSAGE_BYTES } from '../functions/gateway/realtime/protocol';
import type { SocketEvent, SocketResult } from '../functions/gateway/realtime/socket-routes';
import { decodePathParam } from '../functions/middleware/route';
import { CLOSE_CODE_HEADER, CLOSE_REASON_HEADER } from '../functions/store/client-connections';
import { useRelayLauncher } from '../functions/store/relay-launcher';
import { invoke } from './awslambda-shim';
import { requestUrl } from './request-url';

// API Gateway WebSocket around the very same handlers: the upgrade of `/v1/realtime` becomes `$connect`,
// each message `$default`, the close `$disconnect`; the relay runs in process, as Lambda would run it, and
// talks back through the `@connections` management API served here on the same port.

type SocketHandler = (event: SocketEvent, context: Context) => Promise<SocketResult>;
type RelayHandler = (job: unknown, context: Context) => Promise<void>;

interface LocalConnection {
  ws: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string;
  /** `$default` invocations run one after another, so the channel gets messages in arrival order. */
  chain: Promise<unknown>;
}

export interface LocalRealtime {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Serves `POST|GET|DELETE /@connections/{id}`; false for any other request. */
  serveManagementApi(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

function lambdaContext(name: RealtimeFunctionName): Context {
  const def = REALTIME_FUNCTIONS[name];
  const deadline = Date.now() + def.timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `gateway-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:gateway-${name}`,
    memoryLimitInMB: String(def.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/gateway-${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** An id shaped like API Gateway's (base64, ending in `=`). */
const newConnectionId = () => `${randomBytes(10).toString('base64url')}=`;

function socketEvent(
  routeKey: '$connect' | '$default' | '$disconnect',
  connectionId: string,
  domainName: string,
  connectedAt: number,
  extra: Partial<SocketEvent> & { disconnectStatusCode?: number; disconnectReason?: string } = {},
): SocketEvent {
  const now = Date.now();
  const eventType =
    routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE';
  const { disconnectStatusCode, disconnectReason, ...rest } = extra;
  return {
    isBase64Encoded: false,
    ...rest,
    requestContext: {
      routeKey,
      eventType,
      messageId: routeKey === '$default' ? randomBytes(8).toString('base64url') : undefined,
      extendedRequestId: randomUUID(),
      requestTime: new Date(now).toUTCString(),
      messageDirection: 'IN',
      stage: '$default',
      connectedAt,
      requestTimeEpoch: now,
      requestId: randomUUID(),
      domainName,
      connectionId,
      apiId: 'local',
      ...(disconnectStatusCode !== undefined ? { disconnectStatusCode, disconnectReason } : {}),
    },
  } as SocketEvent;
}

/** Refuses an upgrade with an HTTP reply, as API Gateway does when `$connect` answers non-2xx. */
function refuse(socket: Duplex, result: SocketResult): void {
  const body = result.body ?? '';
  const headers = {
    'content-type': 'application/json',
    ...result.headers,
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const head = [`HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ''}`]
    .concat(Object.entries(headers).map(([k, v]) => `${k}: ${v}`))
    .join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
}

function awsError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ message }));
}

export async function startLocalRealtime(root: string): Promise<LocalRealtime> {
  const load = async <T>(name: RealtimeFunctionName) =>
    ((await import(pathToFileURL(join(root, REALTIME_FUNCTIONS[name].entry)).href)) as { handler: T })
      .handler;
  const socketHandler = await load<SocketHandler>('realtimeSocket');
  const relayHandler = await load<RelayHandler>('realtimeRelay');

  const connections = new Map<string, LocalConnection>();
  const inFlight = new Set<Promise<unknown>>();
  const track = (work: Promise<unknown>) => {
    const settled = work.catch((error: unknown) =>
      console.error('local realtime:', (error as Error).message),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
    return settled;
  };

  useRelayLauncher({
    launch: async (job) => {
      // Like InvocationType Event: accepted now, run on its own.
      track(invoke(lambdaContext('realtimeRelay'), (c) => relayHandler(job, c)));
    },
  });

  const accepted = new WeakMap<IncomingMessage, { protocol?: string; headers: Record<string, string> }>();
  // Messages up to 16 MB reach the handler, so that the 128 KB limit is enforced with a clear event.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 16 * 1024 * 1024,
    perMessageDeflate: false,
    handleProtocols: (_offered, request) => accepted.get(request)?.protocol ?? false,
  });
  wss.on('headers', (headers, request) => {
    for (const [k, v] of Object.entries(accepted.get(request)?.headers ?? {})) headers.push(`${k}: ${v}`);
  });

  function open(
    connectionId: string,
    ws: WebSocket,
    req: IncomingMessage,
    domainName: string,
    connectedAt: number,
  ) {
    const conn: LocalConnection = {
      ws,
      connectedAt,
      lastActiveAt: connectedAt,
      sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      userAgent: req.headers['user-agent'] ?? '',
      chain: Promise.resolve(),
    };
    connections.set(connectionId, conn);
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      conn.lastActiveAt = Date.now();
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        // API Gateway disconnects a client that sends a binary frame with 1003; so does this server.
        ws.close(CLOSE_CODES.unsupportedData, 'Binary frames are not supported: send JSON text events');
        return;
      }
      if (bytes.byteLength > MAX_MESSAGE_BYTES) {
        ws.send(
          errorEvent(
            'invalid_request_error',
            'message_too_large',
            `A WebSocket message may carry at most ${MAX_MESSAGE_BYTES} bytes (API Gateway's limit); this one had ${bytes.byteLength}. Split input_audio_buffer.append into smaller appends.`,
          ),
        );
        ws.close(CLOSE_CODES.messageTooBig, 'Message too big');
        return;
      }
      const event = socketEvent('$default', connectionId, domainName, connectedAt, {
        body: bytes.toString('utf8'),
      });
      conn.chain = track(
        conn.chain.then(() => invoke(lambdaContext('realtimeSocket'), (c) => socketHandler(event, c))),
      );
    });
    ws.on('close', (code: number, reason: Buffer) => {
      connections.delete(connectionId);
      const event = socketEvent('$disconnect', connectionId, domainName, connectedAt, {
        disconnectStatusCode: code,
        disconnectReason: reason.toString(),
      });
      conn.chain = track(
        conn.chain.then(() => invoke(lambdaContext('realtimeSocket'), (c) => socketHandler(event, c))),
      );
    });
    ws.on('error', () => undefined);
  }

  return {
    upgrade(req, socket, head) {
      socket.on('error', () => undefined);
      const url = requestUrl(req.url);
      if (!url || url.pathname.replace(/\/+$/, '') !== REALTIME_OPERATION.path) {
        refuse(socket, {
          statusCode: 404,
          body: JSON.stringify({
            error: {
              message: `Unknown WebSocket route: ${url?.pathname ?? String(req.url).slice(0, 300)}`,
              type: 'invalid_request_error',
              code: 'not_found',
              param: null,
            },
          }),
        });
        return;
      }
      const connectionId = newConnectionId();
      const connectedAt = Date.now();
      const domainName = req.headers.host ?? 'localhost';
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(',') : v;
      }
      const query: Record<string, string> = {};
      for (const [k, v] of url.searchParams) query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
      const event = socketEvent('$connect', connectionId, domainName, connectedAt, {
        headers,
        queryStringParameters: Object.keys(query).length ? query : undefined,
      });
      track(
        invoke(lambdaContext('realtimeSocket'), (c) => socketHandler(event, c)).then((result) => {
          if (result.statusCode < 200 || result.statusCode > 299) {
            refuse(socket, result);
            return;
          }
          const { 'sec-websocket-protocol': protocol, ...extra } = result.headers ?? {};
          accepted.set(req, { protocol, headers: extra });
          wss.handleUpgrade(req, socket, head, (ws) => open(connectionId, ws, req, domainName, connectedAt));
        }),
      );
    },

    serveManagementApi(req, res) {
      const m = /^(?:\/[^/]+)?\/(?:@|%40)connections\/([^/?]+)/i.exec(req.url ?? '');
      if (!m?.[1]) return false;
      // Only the relay, on this machine, may post to a client's socket or close it.
      if (!isLoopback(req.socket.remoteAddress)) {
        awsError(res, 403, 'ForbiddenException', 'The management API accepts only loopback callers');
        req.resume();
        return true;
      }
      const connectionId = decodePathParam(m[1]);
      if (connectionId === undefined) {
        awsError(res, 400, 'BadRequestException', 'The connection id has a malformed percent-escape.');
        req.resume();
        return true;
      }
      const conn = connections.get(connectionId);
      const gone = () => awsError(res, 410, 'GoneException', 'The connection is gone');
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        let size = 0;
        let refused = false;
        req.on('data', (c: Buffer) => {
          size += c.byteLength;
          // Bounded like every other route: past API Gateway's limit nothing more is held.
          if (size > MAX_MESSAGE_BYTES) refused = true;
          else chunks.push(c);
        });
        req.on('error', () => undefined);
        req.on('end', () => {
          if (refused) return awsError(res, 413, 'PayloadTooLargeException', 'Message too long');
          const body = Buffer.concat(chunks);
          if (!conn || conn.ws.readyState !== conn.ws.OPEN) return gone();
          conn.ws.send(body, { binary: !isUtf8(body) }, () => {
            res.writeHead(200).end();
          });
        });
        return true;
      }
      req.resume();
      if (!conn) {
        gone();
        return true;
      }
      if (req.method === 'DELETE') {
        // API Gateway closes with 1000; the relay's close code comes in a header only this server reads.
        const code = Number(req.headers[CLOSE_CODE_HEADER] ?? CLOSE_CODES.normal);
        const reason = String(req.headers[CLOSE_REASON_HEADER] ?? '');
        try {
          conn.ws.close(
            Number.isInteger(code) && code >= 1000 && code < 5000 ? code : CLOSE_CODES.normal,
            reason,
          );
        } catch {
          // A code ws reserves (1005, 1006...) or a reason over 123 bytes: close plainly rather than crash.
          conn.ws.close(CLOSE_CODES.normal);
        }
        res.writeHead(204).end();
        return true;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ConnectedAt: new Date(conn.connectedAt).toISOString(),
          Identity: { SourceIp: conn.sourceIp, UserAgent: conn.userAgent },
          LastActiveAt: new Date(conn.lastActiveAt).toISOString(),
        }),
      );
      return true;
    },

    async close() {
      // Clients first: their `$disconnect` ends each relay, which then writes its session's log.
      for (const conn of connections.values()) conn.ws.close(1001, 'server shutting down');
      const deadline = Date.now() + 30_000;
      while (inFlight.size > 0 && Date.now() < deadline) {
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 1_000))]);
      }
      wss.close();
    },
  };
}
