import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentity, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';
import { settings } from '../functions/core/settings';
import type { DynamoTransport } from '../functions/store/dynamo';
import { ALL_TABLES, revisionSuffix, type TableDefinition } from '../functions/store/tables';

export const localTableName = (def: TableDefinition) =>
  [`gateway-${def.id}`, revisionSuffix(def).toLowerCase()].filter(Boolean).join('-');

interface WorkerReply {
  id: number;
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface WorkerCall {
  id: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The AWS SDK's transport to the embedded DynamoDB of this process: calls are messages to its thread
 * instead of HTTP exchanges over a loopback socket, whose system calls cost more CPU here than the SDK
 * and dynalite together (see the bench's profile), and the calls made in one turn (a request's four
 * reservations) travel as one message. The SDK builds and parses exactly as it does against DynamoDB.
 * One per process, re-attached at each start.
 */
class EmbeddedDynamoHandler implements RequestHandler<HttpRequest, HttpResponse> {
  private port: MessagePort | undefined;
  private nextId = 0;
  private outbox: WorkerCall[] = [];
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();

  attach(port: MessagePort): void {
    this.port = port;
    port.on('message', (replies: WorkerReply[]) => {
      for (const reply of replies) {
        const resolve = this.waiting.get(reply.id);
        this.waiting.delete(reply.id);
        resolve?.(reply);
      }
      // Nothing waiting: the thread may go once the store closes.
      if (this.waiting.size === 0) port.unref();
    });
    port.unref();
  }

  handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
    const port = this.port;
    if (!port) return Promise.reject(new Error('the embedded DynamoDB is not running'));
    const id = this.nextId++;
    const query = new URLSearchParams(request.query as Record<string, string>).toString();
    return new Promise((resolve) => {
      this.waiting.set(id, (reply) =>
        resolve({
          response: { statusCode: reply.status, headers: reply.headers, body: Buffer.from(reply.body) },
        }),
      );
      if (this.outbox.length === 0) process.nextTick(() => this.send(port));
      this.outbox.push({
        id,
        method: request.method,
        path: query ? `${request.path}?${query}` : request.path,
        headers: request.headers,
        body: bodyText(request.body),
      });
    });
  }

  private send(port: MessagePort): void {
    const calls = this.outbox;
    this.outbox = [];
    port.ref();
    port.postMessage(calls);
  }
}

/** The SDK's JSON body (a string, or bytes that must not be read through their string methods) as text. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return '';
}

const embeddedDynamoHandler = new EmbeddedDynamoHandler();
const LOCAL_IDENTITY: AwsCredentialIdentity = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * How the gateway's DynamoDB client reaches the embedded DynamoDB of this process: through the thread's
 * message port, unsigned (nothing checks a signature there, and signing was about half of the SDK's CPU
 * per call), without the middlewares that only matter to AWS (user agent, recursion detection).
 */
export const EMBEDDED_DYNAMO_CLIENT: DynamoTransport = {
  config: {
    requestHandler: embeddedDynamoHandler,
    httpAuthSchemes: [
      {
        schemeId: 'aws.auth#sigv4',
        identityProvider: () => async () => LOCAL_IDENTITY,
        signer: { sign: async (request) => request },
      },
    ],
  },
  unusedMiddleware: ['getUserAgentMiddleware', 'recursionDetectionMiddleware'],
};

/** Starts the embedded DynamoDB: persistent under `dataDir`, or in memory when it is undefined. */
export async function startDynalite(
  dataDir: string | undefined,
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const options: Record<string, unknown> = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 };
  if (dataDir) {
    const path = join(dataDir, 'dynamodb');
    mkdirSync(path, { recursive: true, mode: 0o700 });
    options.path = path;
  }
  const channel = new MessageChannel();
  const worker = new Worker(new URL('./dynalite-worker.mjs', import.meta.url), {
    workerData: { options, port: channel.port2 },
    transferList: [channel.port2],
  });
  embeddedDynamoHandler.attach(channel.port1);
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { port: number }) => resolve(m.port));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      // Let the store close its files before the thread goes: nothing written is lost.
      await new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage('close');
      });
      await worker.terminate();
    },
  };
}

/** Creates every table of `ALL_TABLES` that does not exist yet, from the same definitions as the stack. */
export async function ensureTables(endpoint: string | undefined): Promise<void> {
  const client = new DynamoDBClient(endpoint ? { endpoint } : {});
  for (const def of ALL_TABLES) {
    const name = settings().tables[def.envVar] ?? localTableName(def);
    try {
      await client.send(new DescribeTableCommand({ TableName: name }));
      continue;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    const attributes = new Map<string, 'S' | 'N'>();
    const add = (a: { name: string; type: 'S' | 'N' }) => attributes.set(a.name, a.type);
    add(def.partitionKey);
    add(def.sortKey);
    for (const gsi of def.globalIndexes) {
      add(gsi.partitionKey);
      add(gsi.sortKey);
    }
    const input: CreateTableCommandInput = {
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
        AttributeName,
        AttributeType,
      })),
      KeySchema: [
        { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: def.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: def.globalIndexes.length
        ? def.globalIndexes.map((gsi) => ({
            IndexName: gsi.name,
            KeySchema: [
              { AttributeName: gsi.partitionKey.name, KeyType: 'HASH' },
              { AttributeName: gsi.sortKey.name, KeyType: 'RANGE' },
            ],
            Projection:
              gsi.projection.type === 'KEYS_ONLY'
                ? { ProjectionType: 'KEYS_ONLY' }
                : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...gsi.projection.attributes] },
          }))
        : undefined,
    };
    await client.send(new CreateTableCommand(input));
    for (let i = 0; i < 100; i++) {
      const out = await client.send(new DescribeTableCommand({ TableName: name }));
      if (out.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  client.destroy();
}
