import { GetCommand, PutCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import type { LogEntry } from '../core/log-entry';
import { logger } from '../core/logger';
import { blobStore } from './blob-store';
import {
  CursorError,
  decodeCursor,
  documentClient,
  encodeCursor,
  nowEpochSeconds,
  tableName,
} from './dynamo';

// Bodies are kept as JSON text, not DynamoDB maps: any JSON a client sends (deep nesting, huge numbers,
// empty keys) must be storable. An item past this many UTF-8 bytes moves its large fields to the blob
// store and keeps a reference: DynamoDB refuses items over 400 KB, and counts bytes, not characters.
const ITEM_BYTE_LIMIT = 300_000;
// A field past this many bytes (a huge model name, user or metadata) is moved out whole; a prefix stays.
const FIELD_BYTE_LIMIT = 2_048;
const KEPT_PREFIX = 256;
const OFFLOADED_FIELDS = ['model', 'user', 'metadata', 'error'] as const;
type OffloadedField = (typeof OFFLOADED_FIELDS)[number];
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

/** What the blob of a large entry holds: its bodies, and the fields too large to stay in the item. */
interface LogBlob {
  request: unknown;
  response: unknown;
  fields?: Partial<Pick<LogEntry, OffloadedField>>;
}

const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

export class LogStore {
  private readonly db = documentClient();

  /**
   * Writes the entry whatever its size: large fields go to the blob store; a failed write is tried
   * again, and last a minimal entry (ids, status, usage, cost, error) keeps the ledger whole.
   * Throws only when even that could not be written.
   */
  async put(entry: LogEntry): Promise<void> {
    let item: StoredLog;
    try {
      item = await this.fullItem(entry);
    } catch (error) {
      // The blob store failed: the entry is still written, without what only the blob could hold.
      logger.error('log bodies could not be stored', {
        requestId: entry.id,
        error: (error as Error).message,
      });
      item = minimalItem(entry);
    }
    for (const candidate of [item, item, minimalItem(entry)]) {
      try {
        await this.db.send(new PutCommand({ TableName: tableName('logs'), Item: candidate }));
        return;
      } catch (error) {
        logger.warn('log write failed; trying again', {
          requestId: entry.id,
          error: (error as Error).message,
        });
      }
    }
    throw new Error(`log entry ${entry.id} could not be written`);
  }

  private async fullItem(entry: LogEntry): Promise<StoredLog> {
    const { request, response, ...rest } = entry;
    const item: StoredLog = {
      ...rest,
      pk: partitionKey(entry.organisation_id, entry.workspace),
      expires_at: nowEpochSeconds() + RETENTION_DAYS * 86_400,
      request_json: request === undefined ? undefined : JSON.stringify(request),
      response_json: response === undefined ? undefined : JSON.stringify(response),
    };
    if (bytes(item) <= ITEM_BYTE_LIMIT) return item;
    const blob: LogBlob = { request: request ?? null, response: response ?? null, fields: {} };
    item.request_json = undefined;
    item.response_json = undefined;
    for (const field of OFFLOADED_FIELDS) {
      if (bytes(entry[field]) <= FIELD_BYTE_LIMIT) continue;
      (blob.fields as Record<string, unknown>)[field] = entry[field];
      Object.assign(item, { [field]: keptPart(field, entry) });
    }
    item.body_ref = `logs/${entry.organisation_id}/${entry.id}.json`;
    await blobStore().put(item.body_ref, JSON.stringify(blob));
    return item;
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
      return toEntry(stored, blob ? (JSON.parse(blob) as LogBlob) : undefined);
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
    // A cursor is only ever followed inside the caller's own partition: anything else is not ours.
    if (startKey && !cursorFits(startKey, query, indexName !== undefined)) throw new CursorError();
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

function cursorFits(key: Record<string, unknown>, query: LogQuery, byOrganisation: boolean): boolean {
  const names = Object.keys(key).sort().join(',');
  if (names !== (byOrganisation ? 'id,organisation_id,pk' : 'id,pk')) return false;
  const { pk, id, organisation_id } = key;
  if (typeof pk !== 'string' || typeof id !== 'string' || !/^[0-9A-Z]{26}$/.test(id)) return false;
  if (!byOrganisation) return pk === partitionKey(query.organisationId, query.workspace ?? '');
  return organisation_id === query.organisationId && pk.startsWith(`${query.organisationId}#`);
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

/** What stays in the item of a field moved to the blob: a prefix of a string, a marker for the rest. */
function keptPart(field: OffloadedField, entry: LogEntry): unknown {
  const value = entry[field];
  if (typeof value === 'string') return value.slice(0, KEPT_PREFIX);
  if (field === 'error' && entry.error) {
    return { ...entry.error, message: entry.error.message.slice(0, KEPT_PREFIX) };
  }
  return {};
}

/** The last resort: what the ledger cannot lose, each string cut short so that the item always fits. */
function minimalItem(entry: LogEntry): StoredLog {
  const cut = (s: string | null) => (s === null ? null : s.slice(0, KEPT_PREFIX));
  return {
    id: entry.id,
    trace_id: entry.trace_id.slice(0, KEPT_PREFIX),
    timestamp: entry.timestamp,
    organisation_id: entry.organisation_id,
    workspace: entry.workspace,
    auth: entry.auth,
    user: cut(entry.user),
    metadata: {},
    operation: entry.operation,
    provider: cut(entry.provider),
    model: cut(entry.model),
    virtual_key: cut(entry.virtual_key),
    status: entry.status,
    stream: entry.stream,
    latency_ms: entry.latency_ms,
    upstream_latency_ms: entry.upstream_latency_ms,
    first_chunk_ms: entry.first_chunk_ms,
    usage: entry.usage,
    cost: typeof entry.cost === 'number' && Number.isFinite(entry.cost) ? entry.cost : null,
    error: entry.error ? (keptPart('error', entry) as LogEntry['error']) : null,
    attempts: [],
    pk: partitionKey(entry.organisation_id, entry.workspace),
    expires_at: nowEpochSeconds() + RETENTION_DAYS * 86_400,
  };
}

function toEntry(item: StoredLog, bodies?: LogBlob): LogEntry {
  const { pk: _pk, expires_at: _exp, request_json, response_json, body_ref, ...rest } = item;
  const entry: LogEntry = {
    ...rest,
    ...bodies?.fields,
    request: bodies ? bodies.request : parseJson(request_json),
    response: bodies ? bodies.response : parseJson(response_json),
  };
  if (body_ref && !bodies) entry.body_ref = body_ref;
  return entry;
}
