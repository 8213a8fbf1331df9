import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { buildDashboard } from '../dashboard/build';
import { bootstrap } from '../functions/control/bootstrap';
import { drainAfterInvocationWork } from '../functions/core/after-invocation';
import type { HttpEvent } from '../functions/core/http';
import { logger } from '../functions/core/logger';
import { FUNCTION_GROUPS, type FunctionGroupName, OPERATIONS } from '../functions/core/operations';
import { loadSettings } from '../functions/core/settings';
import { markStage } from '../functions/core/stage-clock';
import { clearContainerCaches } from '../functions/core/ttl-cache';
import { configureAddressGuard, egressFrom } from '../functions/gateway/address-guard';
import { compileRoutes, matchRoute } from '../functions/middleware/route';
import { flushAnalytics } from '../functions/store/analytics-store';
import { closeCounters } from '../functions/store/counter-store';
import { useDynamoTransport } from '../functions/store/dynamo';
import { flushLogWrites } from '../functions/store/log-store';
import { ALL_TABLES } from '../functions/store/tables';
import { installAwsLambdaShim, invoke, LocalResponseStream, replyHeader } from './awslambda-shim';
import { lockDataDir } from './data-dir-lock';
import {
  EMBEDDED_DYNAMO_CLIENT,
  ensureTables,
  localTableName,
  type RunningDynalite,
  startDynalite,
} from './dynamodb';
import { startLocalRealtime } from './realtime';
import { requestUrl } from './request-url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Lambda's own limit for a function URL request; the gateway's smaller limit is enforced by the handlers.
const TRANSPORT_LIMIT = 6 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+json)/i;

type Handler = (event: HttpEvent, stream: LocalResponseStream, context: Context) => Promise<void>;

export interface GatewayOptions {
  port?: number;
  /** Interface to bind: `HOST`, else 127.0.0.1. */
  host?: string;
  /**
   * Receives one line per request (method, path, status, latency, request id, user). Default: stdout
   * at `GATEWAY_LOG_LEVEL=info` (the default level), nothing at `warn` or `error`.
   */
  requestLog?: (line: string) => void;
  /** Where state lives. Undefined with `inMemory` for tests. */
  dataDir?: string;
  /** Keep the embedded DynamoDB in memory (tests); the data dir still holds blobs. */
  inMemory?: boolean;
  adminKey?: string;
  /** An existing DynamoDB instead of the embedded one. */
  dynamodbEndpoint?: string;
}

export interface RunningGateway {
  url: string;
  port: number;
  organisationId: string;
  /** Set only when the admin key was generated on this start. */
  generatedAdminKey?: string;
  /** Stops taking requests, lets those in flight finish (their logs included), stops the store. */
  close(): Promise<void>;
  /**
   * Cuts the requests still in flight (as if their clients left) and names them. Their handlers see the
   * disconnect, end the upstream call and still write their log entries, so a `close()` under way ends.
   */
  cutInFlight(): string[];
}

/** One request the local server is serving. */
interface InFlight {
  method: string;
  path: string;
  res: ServerResponse;
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

/** Starts the local gateway: embedded DynamoDB, tables, bootstrap, every handler on one port. */
export async function startGateway(options: GatewayOptions = {}): Promise<RunningGateway> {
  // The functions read their settings from the process environment, as on Lambda: this start fills in the
  // local runtime's variables and loads the settings again (a bad value fails the start here, before
  // anything runs). The AWS SDK, Powertools and child processes read the same variables.
  const env = process.env;
  // What this start writes into the environment is put back on close, for the next start in this process.
  const found = { ...env };
  const given = loadSettings(env);
  // Before any log line: Powertools looks for the runtime's invoke store once told invocations run side by side.
  installAwsLambdaShim();
  const dataDir = resolve(options.dataDir ?? given.dataDir);
  // Two servers on one persistent dir would fight over the embedded DynamoDB's files.
  const unlock = options.inMemory ? () => undefined : lockDataDir(dataDir);
  env.GATEWAY_DATA_DIR = dataDir;
  // Tells the handlers they run locally: e.g. a JWKS may then be served over plain HTTP on loopback.
  env.GATEWAY_LOCAL = '1';
  env.AWS_REGION ??= 'us-east-1';
  // `GATEWAY_LOG_LEVEL`: the local server's own lines, and the handlers' Powertools level unless set.
  const level = given.logLevel;
  env.POWERTOOLS_LOG_LEVEL ||= level === 'error' ? 'ERROR' : 'WARN';
  // The handlers' logger was built when its module was first imported, maybe before this line.
  logger.setLogLevel(env.POWERTOOLS_LOG_LEVEL as Parameters<typeof logger.setLogLevel>[0]);
  const requestLog =
    options.requestLog ??
    (level === 'debug' || level === 'info' ? (line: string) => console.log(line) : undefined);
  // EMF records are for CloudWatch; on a laptop they would only flood stdout.
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // One process serves every request here: usage aggregates gather for a second and are written together
  // (reads and shutdown flush first), instead of about fourteen writes after every reply.
  env.GATEWAY_AGGREGATE_FLUSH_MS ??= '1000';
  // Log entries of requests that end within a few ms of each other are written in one BatchWriteItem.
  env.GATEWAY_WRITE_BATCH_MS ??= '5';
  // One process holds every budget's reservations: it reserves a slice of each budget at once and hands
  // it out in memory, instead of one call to the table per budget and request.
  env.GATEWAY_BUDGET_LEASE ??= '32';
  for (const def of ALL_TABLES) env[def.envVar] ??= localTableName(def);

  // Built at every start (esbuild takes a fraction of a second), beside the embedded DynamoDB starting,
  // so the dashboard always matches the source. Without it the API still works.
  const dashboardDir = join(dataDir, 'dashboard');
  env.GATEWAY_DASHBOARD_DIR = dashboardDir;
  const dashboard = buildDashboard(dashboardDir).catch((error: unknown) => {
    console.warn(`local server: the dashboard could not be built: ${(error as Error).message}`);
  });

  let dynamo: RunningDynalite | undefined;
  const endpoint = options.dynamodbEndpoint ?? given.dynamodbEndpoint;
  if (endpoint) {
    env.DYNAMODB_ENDPOINT = endpoint;
  } else {
    dynamo = await startDynalite(options.inMemory ? undefined : dataDir, { nice: given.storeNice });
    env.DYNAMODB_ENDPOINT = dynamo.endpoint;
    useDynamoTransport(EMBEDDED_DYNAMO_CLIENT);
    // The embedded DynamoDB checks no signature, but the SDK insists on signing with something.
    env.AWS_ACCESS_KEY_ID ??= 'local';
    env.AWS_SECRET_ACCESS_KEY ??= 'local';
  }
  const loaded = loadSettings(env);
  // A start is a new container: nothing cached from a server this process ran before answers for this one.
  clearContainerCaches();
  configureAddressGuard({ environment: egressFrom(loaded) });
  await ensureTables(loaded.dynamodbEndpoint);
  const boot = await bootstrap(options.adminKey ?? loaded.adminKey, undefined, {
    recover: loaded.recoverAdminKey,
  });
  await dashboard;

  const handlers = {} as Record<FunctionGroupName, Handler>;
  for (const [group, def] of Object.entries(FUNCTION_GROUPS)) {
    const mod = (await import(pathToFileURL(join(ROOT, def.entry)).href)) as { handler: Handler };
    handlers[group as FunctionGroupName] = mod.handler;
  }
  const routes = compileRoutes(OPERATIONS);
  const inFlight = new Map<Promise<void>, InFlight>();
  let closing: Promise<void> | undefined;
  const realtime = await startLocalRealtime(ROOT);

  const server = http.createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    if (realtime.serveManagementApi(req, res)) return;
    markStage('event build');
    const startedAt = performance.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (requestLog) {
      res.once('close', () => requestLog(requestLine(req, res, path, performance.now() - startedAt)));
    }
    if (closing) {
      // A request that reaches a stopping server (on a kept-alive connection) is refused whole, never half
      // served: nothing is reserved or charged for it, and the client may retry elsewhere.
      res.writeHead(503, { 'content-type': 'application/json', connection: 'close', 'retry-after': '1' });
      res.end(
        JSON.stringify({
          error: {
            message: 'The gateway is shutting down; retry the request.',
            type: 'server_error',
            code: 'shutting_down',
            param: null,
          },
        }),
      );
      return;
    }
    if (req.method === 'GET' && path === '/') {
      // The root is where a person lands first: the dashboard.
      res.writeHead(302, { location: '/dashboard' });
      res.end();
      return;
    }
    const job = serve(req, res, routes, handlers).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: 'local server error', type: 'server_error', code: null, param: null },
          }),
        );
      }
      console.error('local server:', (error as Error).message);
    });
    inFlight.set(job, { method: req.method ?? 'GET', path, res });
    void job.finally(() => inFlight.delete(job));
  });
  server.on('upgrade', (req, socket, head) => realtime.upgrade(req, socket, head));
  const host = options.host ?? loaded.host;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? loaded.port, host, () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;
  if (!LOOPBACK_HOST.test(host)) {
    console.warn(
      `local server: listening on ${host}, reachable from other machines over plain HTTP. Gateway and provider keys cross the network in clear: put a TLS proxy in front, or bind HOST=127.0.0.1.`,
    );
  }
  // A wildcard bind is still reached at loopback from this machine.
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  const written = Object.keys(env).filter((name) => env[name] !== found[name]);
  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    organisationId: boot.organisationId,
    generatedAdminKey: boot.generatedAdminKey,
    cutInFlight() {
      const cut: string[] = [];
      for (const request of inFlight.values()) {
        if (request.res.writableFinished) continue;
        const id = replyHeader(request.res, 'x-gateway-request-id');
        cut.push(`${request.method} ${request.path}${id ? ` (${id})` : ''}`);
        request.res.destroy();
      }
      return cut;
    },
    close() {
      closing ??= (async () => {
        // Stop taking requests, let those in flight finish (their logs included), then stop the store.
        const stopped = new Promise<void>((r) => server.close(() => r()));
        server.closeIdleConnections();
        await realtime.close();
        // Until nothing is in flight: a request accepted while the first ones drained is waited for too.
        const deadline = Date.now() + 30_000;
        const pastDeadline = () =>
          new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref());
        while (inFlight.size > 0 && Date.now() < deadline) {
          await Promise.race([Promise.allSettled([...inFlight.keys()]), pastDeadline()]);
        }
        server.closeAllConnections();
        await stopped;
        // The after-send work the invocations left (their log entries, spend and counters), within the
        // same deadline: work that never ends does not hold the stop, as a request that never ends does not.
        await Promise.race([drainAfterInvocationWork(), pastDeadline()]);
        await Promise.all([
          flushAnalytics().catch((error: unknown) =>
            console.error('local server: usage aggregates not written:', (error as Error).message),
          ),
          flushLogWrites(),
          closeCounters().catch((error: unknown) =>
            console.error('local server: usage counters not written:', (error as Error).message),
          ),
        ]);
        await dynamo?.close();
        unlock();
        for (const name of written) {
          if (found[name] === undefined) delete env[name];
          else env[name] = found[name];
        }
        loadSettings(env);
      })();
      return closing;
    },
  };
}

/** `POST /v1/chat/completions 200 12.3ms req=<id> user=<user>`: one line per request. */
function requestLine(req: IncomingMessage, res: ServerResponse, path: string, ms: number): string {
  const id = replyHeader(res, 'x-gateway-request-id');
  // Read after the reply has gone, so the parse never delays it.
  const body = (req as { gatewayBody?: Buffer }).gatewayBody;
  const user = body && userOf(body, req.headers['content-type']);
  // A reply cut before it ended (client gone, server stopping) shows as 499, as its log entry does.
  const status = res.writableFinished ? res.statusCode : 499;
  return `${req.method} ${path} ${status} ${ms.toFixed(1)}ms${id ? ` req=${id}` : ''}${user ? ` user=${user}` : ''}`;
}

/** The end user a JSON body names (`user`, or `metadata.user_id` on Anthropic's format), for the request line. */
function userOf(body: Buffer, contentType: string | undefined): string | undefined {
  if (body.length === 0 || body.length > 1_000_000 || !/json/i.test(contentType ?? 'application/json'))
    return;
  // Most bodies name no user: skip the parse unless the key is there at all.
  if (!body.includes('"user')) return;
  try {
    const value = JSON.parse(body.toString('utf8')) as { user?: unknown; metadata?: { user_id?: unknown } };
    const user = typeof value.user === 'string' ? value.user : value.metadata?.user_id;
    return typeof user === 'string' ? user.slice(0, 128).replace(/[^\x20-\x7e]/g, '?') : undefined;
  } catch {
    return undefined;
  }
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  routes: ReturnType<typeof compileRoutes>,
  handlers: Record<FunctionGroupName, Handler>,
): Promise<void> {
  if (req.method === 'OPTIONS') {
    // Function URL CORS answers preflights before the function runs.
    res.writeHead(204, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': '*',
      'access-control-allow-headers': '*',
      'access-control-max-age': '86400',
    });
    res.end();
    return;
  }
  const url = requestUrl(req.url);
  if (!url) {
    res.writeHead(400, { 'content-type': 'application/json', 'x-gateway-error-origin': 'gateway' });
    res.end(
      JSON.stringify({
        error: {
          message: 'The request target is not a URL path.',
          type: 'invalid_request_error',
          code: 'invalid_path',
          param: null,
        },
      }),
    );
    return;
  }
  const found = matchRoute(routes, req.method ?? 'GET', url.pathname);
  // Unknown paths go to the control function, whose router answers with an OpenAI-shaped 404.
  const group: FunctionGroupName = found?.operation.group ?? 'control';
  const event = await toEvent(req, url);
  const stream = new LocalResponseStream(res);
  const deadline = Date.now() + FUNCTION_GROUPS[group].timeoutSeconds * 1000;
  const context = {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `gateway-${group}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:gateway-${group}`,
    memoryLimitInMB: String(FUNCTION_GROUPS[group].memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/gateway-${group}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } as Context;
  markStage('middleware chain');
  await invoke(context, (c) => handlers[group](event, stream, c));
}

/**
 * The request's body, whole. Read with plain events, not an async iterator: most bodies arrive in one
 * chunk, which is then used as it is.
 */
function readBody(req: IncomingMessage): Promise<{ raw: Buffer; received: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // Past the transport limit, keep counting but stop holding: the handler answers 413 and logs it.
      if (received <= TRANSPORT_LIMIT) chunks.push(chunk);
    });
    req.once('end', () =>
      resolve({ raw: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), received }),
    );
    req.once('error', reject);
    // A client gone before the end of its body: as the iterator would, fail instead of waiting forever.
    req.once('close', () => {
      if (!req.complete) reject(new Error('the client left before the end of its request body'));
    });
  });
}

/** A function URL event (payload format 2.0), as Lambda would build it from this request. */
async function toEvent(req: IncomingMessage, url: URL): Promise<HttpEvent> {
  const { raw, received } = await readBody(req);
  (req as { gatewayBody?: Buffer }).gatewayBody = raw;
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    const value = req.rawHeaders[i + 1] ?? '';
    if (name === 'cookie') cookies.push(...value.split(/;\s*/));
    else headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  if (received > 0 || headers['content-length'] !== undefined) headers['content-length'] = String(received);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  const isText = raw.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? 'application/json');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: cookies.length ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: raw.length ? raw.toString(isText ? 'utf8' : 'base64') : undefined,
    isBase64Encoded: !isText,
  };
}
