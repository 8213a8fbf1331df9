import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { startDynalite } from '../../local/dynamodb';
import { createTable } from '../support/dynamo-table';

// The stores' DynamoDB client speaks DynamoDB's JSON API itself: here against the embedded DynamoDB for
// every call the stores make, and against a fake endpoint for signing, errors and retries.

const credentials = async () => ({
  accessKeyId: 'AKIDTEST',
  secretAccessKey: 'secret',
  sessionToken: 'token',
});

describe('DynamoDB over its JSON API', () => {
  let dynamo: Awaited<ReturnType<typeof startDynalite>>;
  let db: DynamoDBHttpClient;
  const TableName = 'dynamodb-http-test';

  beforeAll(async () => {
    dynamo = await startDynalite(undefined);
    await createTable(dynamo.endpoint, TableName);
    db = new DynamoDBHttpClient({ endpoint: dynamo.endpoint, credentials });
  });
  afterAll(async () => {
    db.destroy();
    await dynamo.close();
  });

  it('puts, gets, updates and deletes items of every attribute type, with conditions', async () => {
    const item = {
      pk: 'p',
      sk: 'a',
      n: 1.5,
      big: 2 ** 40,
      s: 'text',
      b: true,
      nil: null,
      list: [1, 'two', { three: 3 }],
      map: { nested: { deep: 'x' } },
      tags: new Set(['x', 'y']),
      gone: undefined,
    };
    await db.send(new PutCommand({ TableName, Item: item }));
    const got = await db.send(new GetCommand({ TableName, Key: { pk: 'p', sk: 'a' } }));
    const { gone: _gone, ...stored } = item;
    expect(got.Item).toEqual(stored);
    expect(got.$metadata.httpStatusCode).toBe(200);

    const refused = db.send(
      new PutCommand({
        TableName,
        Item: { pk: 'p', sk: 'a' },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    await expect(refused).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
      $metadata: { httpStatusCode: 400, attempts: 1 },
    });

    const updated = await db.send(
      new UpdateCommand({
        TableName,
        Key: { pk: 'p', sk: 'a' },
        UpdateExpression: 'ADD n :one SET s = :s',
        ConditionExpression: 'n < :max',
        ExpressionAttributeValues: { ':one': 1, ':s': 'new', ':max': 10 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect(updated.Attributes).toMatchObject({ n: 2.5, s: 'new' });

    const deleted = await db.send(
      new DeleteCommand({ TableName, Key: { pk: 'p', sk: 'a' }, ReturnValues: 'ALL_OLD' }),
    );
    expect(deleted.Attributes?.s).toBe('new');
    expect((await db.send(new GetCommand({ TableName, Key: { pk: 'p', sk: 'a' } }))).Item).toBeUndefined();
  });

  it('writes and reads in batches, and queries page by page', async () => {
    const items = Array.from({ length: 5 }, (_, i) => ({ pk: 'q', sk: `item-${i}`, i }));
    const written = await db.send(
      new BatchWriteCommand({
        RequestItems: { [TableName]: items.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    expect(written.UnprocessedItems ?? {}).toEqual({});

    const batch = await db.send(
      new BatchGetCommand({
        RequestItems: {
          [TableName]: {
            Keys: [
              { pk: 'q', sk: 'item-1' },
              { pk: 'q', sk: 'item-3' },
            ],
          },
        },
      }),
    );
    expect((batch.Responses?.[TableName] ?? []).map((r) => r.i).sort()).toEqual([1, 3]);

    const seen: number[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    let pages = 0;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': 'q', ':prefix': 'item-' },
          Limit: 2,
          ExclusiveStartKey,
        }),
      );
      seen.push(...(page.Items ?? []).map((r) => r.i as number));
      ExclusiveStartKey = page.LastEvaluatedKey;
      pages++;
    } while (ExclusiveStartKey);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(pages).toBeGreaterThanOrEqual(3);

    await db.send(
      new BatchWriteCommand({
        RequestItems: { [TableName]: items.map(({ pk, sk }) => ({ DeleteRequest: { Key: { pk, sk } } })) },
      }),
    );
    const empty = await db.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'q' },
      }),
    );
    expect(empty.Items).toEqual([]);
  });
});

describe('DynamoDB requests on the wire', () => {
  let server: http.Server;
  let endpoint: string;
  const seen: { target?: string; authorization?: string; token?: string; body: string }[] = [];
  // What the fake answers next, one reply per request.
  let replies: { status: number; body: object }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d;
      });
      req.on('end', () => {
        seen.push({
          target: req.headers['x-amz-target'] as string | undefined,
          authorization: req.headers.authorization,
          token: req.headers['x-amz-security-token'] as string | undefined,
          body,
        });
        const reply = replies.shift() ?? { status: 200, body: {} };
        res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs each call with SigV4 for dynamodb, and sends the wire shape of the document', async () => {
    seen.length = 0;
    replies = [{ status: 200, body: { Item: { pk: { S: 'p' }, n: { N: '7' } } } }];
    const db = new DynamoDBHttpClient({ endpoint, region: 'eu-west-1', credentials });
    const out = await db.send(new GetCommand({ TableName: 't', Key: { pk: 'p' } }));
    db.destroy();
    expect(out.Item).toEqual({ pk: 'p', n: 7 });
    expect(seen[0]?.target).toBe('DynamoDB_20120810.GetItem');
    expect(seen[0]?.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=[^,]*x-amz-target[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(seen[0]?.token).toBe('token');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ TableName: 't', Key: { pk: { S: 'p' } } });
  });

  it('retries throttling and server faults, not client errors', async () => {
    seen.length = 0;
    replies = [
      {
        status: 400,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow' },
      },
      {
        status: 500,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'oops' },
      },
      { status: 200, body: {} },
      {
        status: 400,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#ValidationException', message: 'bad key' },
      },
    ];
    const db = new DynamoDBHttpClient({ endpoint, credentials, maxAttempts: 3 });
    const ok = await db.send(new PutCommand({ TableName: 't', Item: { pk: 'p' } }));
    expect(ok.$metadata.attempts).toBe(3);
    await expect(db.send(new PutCommand({ TableName: 't', Item: { pk: 'p' } }))).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'bad key',
      $fault: 'client',
    });
    db.destroy();
    expect(seen).toHaveLength(4);
  });
});
