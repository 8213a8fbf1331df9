import { GetCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import type { LogEntry } from '../gateway/usage-log';
import { blobStore } from './blob-store';
import { decodeCursor, documentClient, encodeCursor, nowEpochSeconds, tableName } from './dynamo';

// Bodies are kept as JSON text, not DynamoDB maps: any JSON a client sends (deep nesting, huge numbers,
// empty keys) must be storable. Past this size they go to the blob store and the item keeps a reference.
const INLINE_BODY_LIMIT = 300_000;
const RETENTION_DAYS = Number(process.env.GATEWAY_LOG_RETENTION_DAYS ?? 30);
const ORG_INDEX = 'by-organisation';

export interface LogQuery {
  organisationId: string;
  /** A workspace slug limits the read to that workspace; undefined reads the whole organisation. */
  workspace?: string;
  user?: string;
  virtualKey?: string;
  traceId?: string;
  model?: string;
  status?: number;
  metadata: Record<string, string>;
  fromMs?: number;
  toMs?: number;
  limit: number;
  cursor?: string;
}

interface StoredLog extends Omit<LogEntry, 'request' | 'response'> {
  pk: string;
  expires_at: number;
  request_json?: string;
  response_json?: string;
  body_ref?: string;
}

export class LogStore {
  private readonly db = documentClient();

  async put(entry: LogEntry): Promise<void> {
    const { request, response, ...rest } = entry;
    const requestJson = request === undefined ? undefined : JSON.stringify(request);
    const responseJson = response === undefined ? undefined : JSON.stringify(response);
    const item: StoredLog = {
      ...rest,
      pk: partitionKey(entry.organisation_id, entry.workspace),
      expires_at: nowEpochSeconds() + RETENTION_DAYS * 86_400,
    };
    if ((requestJson?.length ?? 0) + (responseJson?.length ?? 0) > INLINE_BODY_LIMIT) {
      item.body_ref = `logs/${entry.organisation_id}/${entry.id}.json`;
      await blobStore().put(
        item.body_ref,
        JSON.stringify({ request: request ?? null, response: response ?? null }),
      );
    } else {
      item.request_json = requestJson;
      item.response_json = responseJson;
    }
    await this.db.send(new PutCommand({ TableName: tableName('logs'), Item: item }));
  }

  async get(
    organisationId: string,
    workspace: string | undefined,
    id: string,
  ): Promise<LogEntry | undefined> {
    let item: Record<string, unknown> | undefined;
    if (workspace !== undefined) {
      const out = await this.db.send(
        new GetCommand({
          TableName: tableName('logs'),
          Key: { pk: partitionKey(organisationId, workspace), id },
        }),
      );
      item = out.Item;
    } else {
      const out = await this.db.send(
        new QueryCommand({
          TableName: tableName('logs'),
          IndexName: ORG_INDEX,
          KeyConditionExpression: 'organisation_id = :o AND id = :id',
          ExpressionAttributeValues: { ':o': organisationId, ':id': id },
        }),
      );
      item = out.Items?.[0];
    }
    if (!item || isExpired(item)) return undefined;
    const stored = item as unknown as StoredLog;
    if (stored.body_ref) {
      const blob = await blobStore().get(stored.body_ref);
      const bodies = blob ? (JSON.parse(blob) as { request: unknown; response: unknown }) : undefined;
      return toEntry(stored, bodies);
    }
    return toEntry(stored);
  }

  /** Newest first. Filters run in DynamoDB; pages are filled up to `limit` matches. */
  async list(query: LogQuery): Promise<{ data: LogEntry[]; nextCursor: string | null }> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':now': nowEpochSeconds() };
    const filters = ['(attribute_not_exists(expires_at) OR expires_at > :now)'];
    const equals = (attr: string, value: unknown) => {
      const n = `#f${filters.length}`;
      const v = `:f${filters.length}`;
      names[n] = attr;
      values[v] = value;
      filters.push(`${n} = ${v}`);
    };
    if (query.user !== undefined) equals('user', query.user);
    if (query.virtualKey !== undefined) equals('virtual_key', query.virtualKey);
    if (query.traceId !== undefined) equals('trace_id', query.traceId);
    if (query.model !== undefined) equals('model', query.model);
    if (query.status !== undefined) equals('status', query.status);
    for (const [k, v] of Object.entries(query.metadata)) {
      const n = `#m${filters.length}`;
      const v2 = `:m${filters.length}`;
      names['#meta'] = 'metadata';
      names[n] = k;
      values[v2] = v;
      filters.push(`#meta.${n} = ${v2}`);
    }

    let keyCondition: string;
    let indexName: string | undefined;
    if (query.workspace !== undefined) {
      keyCondition = 'pk = :pk';
      values[':pk'] = partitionKey(query.organisationId, query.workspace);
    } else {
      keyCondition = 'organisation_id = :org';
      values[':org'] = query.organisationId;
      indexName = ORG_INDEX;
    }
    // ULIDs start with their millisecond timestamp, so a time range is a sort key range.
    const low =
      query.fromMs !== undefined ? `${encodeTime(Math.max(0, query.fromMs), 10)}0000000000000000` : undefined;
    const high =
      query.toMs !== undefined ? `${encodeTime(Math.max(0, query.toMs), 10)}ZZZZZZZZZZZZZZZZ` : undefined;
    if (low || high) names['#id'] = 'id';
    if (low && high) {
      keyCondition += ' AND #id BETWEEN :low AND :high';
      values[':low'] = low;
      values[':high'] = high;
    } else if (low) {
      keyCondition += ' AND #id >= :low';
      values[':low'] = low;
    } else if (high) {
      keyCondition += ' AND #id <= :high';
      values[':high'] = high;
    }

    const found: StoredLog[] = [];
    let startKey = decodeCursor(query.cursor);
    // One match past the page tells whether another page exists.
    while (found.length <= query.limit) {
      const input: QueryCommandInput = {
        TableName: tableName('logs'),
        IndexName: indexName,
        KeyConditionExpression: keyCondition,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: Math.max(50, (query.limit + 1 - found.length) * 2),
        ExclusiveStartKey: startKey,
      };
      const out = await this.db.send(new QueryCommand(input));
      for (const item of out.Items ?? []) found.push(item as unknown as StoredLog);
      startKey = out.LastEvaluatedKey;
      if (!startKey) break;
    }
    const page = found.slice(0, query.limit);
    const last = page[page.length - 1];
    const nextCursor =
      found.length > query.limit && last
        ? encodeCursor(
            indexName
              ? { pk: last.pk, id: last.id, organisation_id: last.organisation_id }
              : { pk: last.pk, id: last.id },
          )
        : null;
    return { data: page.map((item) => toEntry(item)), nextCursor };
  }
}

function partitionKey(organisationId: string, workspace: string): string {
  return `${organisationId}#${workspace}`;
}

function isExpired(item: Record<string, unknown>): boolean {
  return typeof item.expires_at === 'number' && item.expires_at <= nowEpochSeconds();
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toEntry(item: StoredLog, bodies?: { request: unknown; response: unknown }): LogEntry {
  const { pk: _pk, expires_at: _exp, request_json, response_json, body_ref, ...rest } = item;
  const entry: LogEntry = {
    ...rest,
    request: bodies ? bodies.request : parseJson(request_json),
    response: bodies ? bodies.response : parseJson(response_json),
  };
  if (body_ref && !bodies) entry.body_ref = body_ref;
  return entry;
}
