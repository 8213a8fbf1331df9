import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchWriteItemCommand,
  type BatchWriteItemCommandInput,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  paginateScan,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { useDynamoTransport } from '../../functions/store/dynamo';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { LogStore } from '../../functions/store/log-store';
import { ALL_TABLES, TABLES } from '../../functions/store/tables';
import { EMBEDDED_DYNAMO_CLIENT, ensureTables, localTableName, startDynalite } from '../../local/dynamodb';
import { createTable, deleteTable } from '../support/dynamo-table';
import { sampleLogEntry } from '../support/log-entry';
import { ownThreadId, threadNice, threadNices } from '../support/threads';

// The embedded DynamoDB of the local server, reached over its thread's message port as the gateway
// reaches it: calls a request waits on are not queued behind background writes, and on disk its reads and
// its batched writes keep every update.

const TableName = 'embedded-test';

async function start(dataDir?: string, nice?: number) {
  const dynamo = await startDynalite(dataDir, { nice });
  await createTable(dynamo.endpoint, TableName);
  return { dynamo, db: new DynamoDBHttpClient({ transport: EMBEDDED_DYNAMO_CLIENT }) };
}

/** Adds 1 to the budget item's `held` when that leaves it at most `room + 1`: a reservation's shape. */
const reserveOne = (db: DynamoDBHttpClient, room: number) =>
  db.send(
    new UpdateCommand({
      TableName,
      Key: { pk: 'budget', sk: 'SPEND#all' },
      UpdateExpression: 'ADD held :usd',
      ConditionExpression: 'attribute_not_exists(held) OR held <= :room',
      ExpressionAttributeValues: { ':usd': 1, ':room': room },
    }),
  );

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe('the embedded DynamoDB', () => {
  it('answers a call a request waits on before a burst of background writes sent ahead of it', async () => {
    const { dynamo, db } = await start();
    stop = () => dynamo.close();
    const finished: string[] = [];
    const writes = Array.from({ length: 20 }, (_, i) =>
      db
        .send(
          new BatchWriteCommand({
            RequestItems: {
              [TableName]: Array.from({ length: 25 }, (_, j) => ({
                PutRequest: { Item: { pk: `log${i}`, sk: String(j), text: 'x'.repeat(200) } },
              })),
            },
          }),
          { background: true },
        )
        .then(() => finished.push(`write ${i}`)),
    );
    // Sent in the same turn as the writes, after them: it is one message with them.
    const reservation = reserveOne(db, 9).then(() => finished.push('reservation'));
    await Promise.all([...writes, reservation]);
    // Background writes run one at a time beside it: the reservation is not behind the other 19.
    expect(finished.indexOf('reservation')).toBeLessThan(3);
    expect(finished).toHaveLength(21);
    const last = await db.send(new GetCommand({ TableName, Key: { pk: 'log19', sk: '24' } }));
    expect(last.Item?.text).toHaveLength(200);
  });

  it('on disk, keeps every concurrent update and every write across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-dynamodb-'));
    try {
      let { dynamo, db } = await start(dataDir);
      // Conditional adds on one item, all at once: each reads what the one before it wrote.
      const adds = await Promise.allSettled(Array.from({ length: 50 }, () => reserveOne(db, 29)));
      expect(adds.filter((a) => a.status === 'fulfilled')).toHaveLength(30);
      await dynamo.close();

      ({ dynamo, db } = await start(dataDir));
      stop = () => dynamo.close();
      const item = await db.send(new GetCommand({ TableName, Key: { pk: 'budget', sk: 'SPEND#all' } }));
      expect(item.Item?.held).toBe(30);
    } finally {
      await stop?.();
      stop = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('sees a table deleted, and a table made again with an index, at once (descriptions are not kept stale)', async () => {
    const { dynamo, db } = await start();
    stop = () => dynamo.close();
    const put = (sk: string) => db.send(new PutCommand({ TableName, Item: { pk: 'p', sk, kind: 'k' } }));
    await put('1');
    await deleteTable(dynamo.endpoint, TableName);
    await expect(put('2')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });

    await createTable(dynamo.endpoint, TableName, 'kind');
    await put('3');
    const found = await db.send(
      new QueryCommand({
        TableName,
        IndexName: 'by-kind',
        KeyConditionExpression: 'kind = :k',
        ExpressionAttributeValues: { ':k': 'k' },
      }),
    );
    expect(found.Items?.map((i) => i.sk)).toEqual(['3']);
  });

  it('runs on its own thread at the priority asked, below this one, and serves calls from there', async () => {
    const self = ownThreadId();
    const before = threadNice(process.pid, self);
    const { dynamo, db } = await start(undefined, 19);
    stop = () => dynamo.close();
    expect(dynamo.storeThread?.nice).toBe(19);
    const storeThread = dynamo.storeThread?.threadId as number;
    expect(storeThread).not.toBe(self);
    // What the OS holds, not only what the thread reported; this thread's own priority is untouched.
    expect(threadNice(process.pid, storeThread)).toBe(19);
    expect(threadNice(process.pid, self)).toBe(before);
    await reserveOne(db, 5);
    const out = await db.send(
      new GetCommand({ TableName, Key: { pk: 'budget', sk: 'SPEND#all' }, ConsistentRead: true }),
    );
    expect(out.Item?.held).toBe(1);
    await stop();

    // 0 leaves the thread as it was started: at this thread's priority.
    const plain = await startDynalite(undefined, { nice: 0 });
    stop = () => plain.close();
    expect(plain.storeThread).toBeUndefined();
  });

  it("puts LevelDB's compaction thread, made by the first write that needs it, at the store's priority", async () => {
    const self = ownThreadId();
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-compaction-'));
    const { dynamo, db } = await start(dataDir, 19);
    stop = async () => {
      await dynamo.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
    const before = threadNices(process.pid);
    expect(await dynamo.loweredThreads()).toEqual([]);

    // More than LevelDB's write buffer (16 MB here): the full buffer is written out by its background thread.
    const value = 'x'.repeat(350_000);
    for (let i = 0; i < 60; i++) {
      await db.send(new PutCommand({ TableName, Item: { pk: 'bulk', sk: String(i), value } }));
    }
    let lowered: number[] = [];
    for (let i = 0; i < 100 && lowered.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      lowered = await dynamo.loweredThreads();
    }
    expect(lowered).toHaveLength(1);
    const compaction = lowered[0] as number;
    expect(before.has(compaction)).toBe(false);
    // What the OS holds; every thread that was there before keeps its priority (the pool, V8's, this one).
    expect(threadNice(process.pid, compaction)).toBe(19);
    const after = threadNices(process.pid);
    for (const [thread, nice] of before) {
      if (after.has(thread)) expect(after.get(thread)).toBe(nice);
    }
    expect(threadNice(process.pid, self)).toBe(before.get(self));
    const out = await db.send(new GetCommand({ TableName, Key: { pk: 'bulk', sk: '59' } }));
    expect(out.Item?.value).toBe(value);
  });

  it('stores log batches sent over its message port exactly as its own BatchWriteItem over HTTP does', async () => {
    const dynamo = await startDynalite(undefined);
    stop = () => dynamo.close();
    const logs = localTableName(TABLES.logs);
    for (const def of ALL_TABLES) process.env[def.envVar] ??= localTableName(def);
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    loadSettings();
    await ensureTables(dynamo.endpoint);
    const sdk = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    });
    // The reference: the same table under another name, written through dynalite's HTTP handler.
    const { Table } = await sdk.send(new DescribeTableCommand({ TableName: logs }));
    await sdk.send(
      new CreateTableCommand({
        TableName: 'reference',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: Table?.AttributeDefinitions,
        KeySchema: Table?.KeySchema,
        GlobalSecondaryIndexes: Table?.GlobalSecondaryIndexes?.map((g) => ({
          IndexName: g.IndexName,
          KeySchema: g.KeySchema,
          Projection: g.Projection,
        })),
      }),
    );
    // The log store's own batches, over the message port, each also sent to the reference.
    const sent: string[] = [];
    useDynamoTransport({
      send(target, body, background) {
        if (target === 'BatchWriteItem') sent.push(body);
        return EMBEDDED_DYNAMO_CLIENT.send(target, body, background);
      },
    });
    const entries = Array.from({ length: 60 }, (_, i) =>
      sampleLogEntry({
        id: `01JABCDEFGHJKMNPQRSTVW${String(i).padStart(4, '0')}`,
        trace_id: `trace-${i % 7}`,
        user: i % 3 ? `user-${i % 4}` : null,
        virtual_key: i % 2 ? 'vk' : null,
        model: i % 5 ? `model-${i % 3}` : null,
        status: i % 6 ? 200 : 429,
        metadata: i % 2 ? { team: `t${i % 3}`, env: 'prod' } : {},
        auth: i % 4 ? { type: 'api_key', key_id: `key_${i % 2}` } : { type: 'jwt', subject: 's' },
        // Without bodies every tenth entry: no body item.
        request: i % 10 === 9 ? null : { messages: [{ role: 'user', content: `ping ${i}` }] },
        response: i % 5 === 4 ? null : { choices: [{ message: { content: `reply ${i}` } }] },
        cost: i % 8 ? 0.0000018 * i : null,
      }),
    );
    const store = new LogStore();
    await store.putMany(entries, { indexedMetadata: ['team', 'env'] });
    // Written again, some with other index keys: the stale index entries go on both paths.
    await store.putMany(
      entries.slice(0, 30).map((e, i) => ({ ...e, user: i % 2 ? 'someone-else' : null, model: 'other' })),
      { indexedMetadata: ['env'] },
    );
    expect(sent.length).toBeGreaterThan(4);
    for (const body of sent) {
      const input = JSON.parse(body) as BatchWriteItemCommandInput;
      const out = await sdk.send(
        new BatchWriteItemCommand({ RequestItems: { reference: input.RequestItems?.[logs] ?? [] } }),
      );
      expect(out.UnprocessedItems ?? {}).toEqual({});
    }

    const scan = async (TableName: string, IndexName?: string) => {
      const items: string[] = [];
      for await (const page of paginateScan({ client: sdk }, { TableName, IndexName }))
        for (const item of page.Items ?? []) items.push(JSON.stringify(item));
      return items.sort();
    };
    const base = await scan(logs);
    expect(base.length).toBe(60 + 54);
    expect(base).toEqual(await scan('reference'));
    for (const index of TABLES.logs.globalIndexes) {
      const entriesOfIndex = await scan(logs, index.name);
      expect(entriesOfIndex, index.name).toEqual(await scan('reference', index.name));
    }
    expect((await scan(logs, 'by-metadata-1')).length).toBeGreaterThan(0);
    sdk.destroy();
  });
});
