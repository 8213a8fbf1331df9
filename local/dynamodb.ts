import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { settings } from '../functions/core/settings';
import { ALL_TABLES, revisionSuffix, type TableDefinition } from '../functions/store/tables';

export const localTableName = (def: TableDefinition) =>
  [`gateway-${def.id}`, revisionSuffix(def).toLowerCase()].filter(Boolean).join('-');

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
  const worker = new Worker(new URL('./dynalite-worker.mjs', import.meta.url), { workerData: { options } });
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
