import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { settings } from '../core/settings';
import { DynamoDBHttpClient, type DynamoTransport } from './dynamodb-http';
import { TABLES, type TableName } from './tables';

// Built once per container. DYNAMODB_ENDPOINT points at the embedded DynamoDB locally.
let client: DynamoDBHttpClient | undefined;
let transport: DynamoTransport | undefined;

/**
 * Sends this process's DynamoDB calls through another transport (the local server's embedded DynamoDB,
 * reached in memory). Set before the first call; never on Lambda.
 */
export function useDynamoTransport(value: DynamoTransport): void {
  transport = value;
  client = undefined;
}

export function documentClient(): DynamoDBHttpClient {
  if (!client) {
    // Read per request: a local server started again in the same process brings its own DynamoDB.
    client = new DynamoDBHttpClient({
      endpoint: () => settings().dynamodbEndpoint,
      region: () => settings().awsRegion,
      maxAttempts: 3,
      transport,
    });
  }
  return client;
}

/** The real name of a table, from the environment the stack (or the local runtime) sets. */
export function tableName(table: TableName): string {
  const def = TABLES[table];
  const name = settings().tables[def.envVar];
  if (!name) throw new Error(`${def.envVar} is not set`);
  return name;
}

export const nowEpochSeconds = () => Math.floor(Date.now() / 1000);

/** Cursor tokens are opaque to clients: a DynamoDB key, base64url-encoded JSON. */
export function encodeCursor(key: Record<string, unknown> | undefined): string | null {
  return key ? Buffer.from(JSON.stringify(key)).toString('base64url') : null;
}

export function decodeCursor(cursor: string | undefined): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through: a malformed cursor is the caller's error
  }
  throw new CursorError();
}

export class CursorError extends Error {
  constructor() {
    super('cursor is not valid');
  }
}

/** Every item of partition `pk` whose sort key `sk` starts with `prefix`, all pages, keys removed. */
export async function queryByPrefix(
  table: string,
  pk: string,
  prefix: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await documentClient().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const { pk: _pk, sk: _sk, ...item } of out.Items ?? []) items.push(item);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}
