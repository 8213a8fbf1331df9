import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { EMBEDDED_DYNAMO_CLIENT, startDynalite } from '../../local/dynamodb';
import { createTable, deleteTable } from '../support/dynamo-table';

// The embedded DynamoDB of the local server, reached over its thread's message port as the gateway
// reaches it: calls a request waits on are not queued behind background writes, and on disk its reads and
// its batched writes keep every update.

const TableName = 'embedded-test';

async function start(dataDir?: string) {
  const dynamo = await startDynalite(dataDir);
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
});
