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
import { settings } from '../functions/core/settings';
import type { DynamoTransport } from '../functions/store/dynamodb-http';
import { ALL_TABLES, revisionSuffix, type TableDefinition } from '../functions/store/tables';

export const localTableName = (def: TableDefinition) =>
  [`gateway-${def.id}`, revisionSuffix(def).toLowerCase()].filter(Boolean).join('-');

interface WorkerReply {
  id: number;
  status: number;
  body: string;
}

interface WorkerCall {
  id: number;
  /** The operation, as in `X-Amz-Target` without its prefix: `UpdateItem`. */
  target: string;
  body: string;
  /** No request waits on it: the thread serves it in its background lane. */
  background: boolean;
}

/**
 * The gateway's transport to the embedded DynamoDB of this process: calls are messages to its thread
 * instead of HTTP exchanges over a loopback socket, whose system calls cost more CPU here than the client
 * and dynalite together (see the bench's profile), and the calls made in one turn (a request's four
 * reservations) travel as one message. Unsigned: nothing checks a signature there. The client builds and
 * parses exactly as it does against DynamoDB. One per process, re-attached at each start.
 */
class EmbeddedDynamo implements DynamoTransport {
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

  send(target: string, body: string, background = false): Promise<{ status: number; body: string }> {
    const port = this.port;
    if (!port) return Promise.reject(new Error('the embedded DynamoDB is not running'));
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (reply) => resolve({ status: reply.status, body: reply.body }));
      if (this.outbox.length === 0) process.nextTick(() => this.flush(port));
      this.outbox.push({
        id,
        target,
        body,
        background,
      });
    });
  }

  private flush(port: MessagePort): void {
    const calls = this.outbox;
    this.outbox = [];
    port.ref();
    port.postMessage(calls);
  }
}

/** How the gateway's DynamoDB client reaches the embedded DynamoDB of this process. */
export const EMBEDDED_DYNAMO_CLIENT = new EmbeddedDynamo();

export interface RunningDynalite {
  endpoint: string;
  /** The OS thread it runs on and that thread's nice value, when its priority was lowered. */
  storeThread?: { threadId: number; nice: number };
  /** The threads made after the store started (LevelDB's compaction thread) and lowered with it. */
  loweredThreads(): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * Starts the embedded DynamoDB: persistent under `dataDir`, or in memory when it is undefined. `nice`
 * (`GATEWAY_STORE_NICE`, 1-19) lowers its thread's priority below the request path's; 0 or none keeps it.
 */
export async function startDynalite(
  dataDir: string | undefined,
  { nice = 0 }: { nice?: number } = {},
): Promise<RunningDynalite> {
  const options: Record<string, unknown> = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 };
  if (dataDir) {
    const path = join(dataDir, 'dynamodb');
    mkdirSync(path, { recursive: true, mode: 0o700 });
    options.path = path;
  }
  const channel = new MessageChannel();
  const worker = new Worker(new URL('./dynalite-worker.mjs', import.meta.url), {
    workerData: { options, port: channel.port2, nice },
    transferList: [channel.port2],
  });
  EMBEDDED_DYNAMO_CLIENT.attach(channel.port1);
  const { port, storeThread } = await new Promise<{
    port: number;
    storeThread?: RunningDynalite['storeThread'];
  }>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', resolve);
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    storeThread,
    loweredThreads: () =>
      reply(worker, 'threads', (m) => (m as { loweredThreads?: number[] }).loweredThreads),
    close: async () => {
      // Let the store close its files before the thread goes: nothing written is lost.
      await reply(worker, 'close', (m) => (m === 'closed' ? true : undefined));
      await worker.terminate();
    },
  };
}

/** Sends `message` to the store's thread and waits for the reply that `pick` recognises. */
function reply<T>(worker: Worker, message: string, pick: (reply: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const listen = (m: unknown) => {
      const value = pick(m);
      if (value === undefined) return;
      worker.off('message', listen);
      resolve(value);
    };
    worker.on('message', listen);
    worker.postMessage(message);
  });
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
