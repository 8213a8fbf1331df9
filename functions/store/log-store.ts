import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import type { LogEntry } from '../core/log-entry';
import { logger } from '../core/logger';
import { settings } from '../core/settings';
import { blobStore } from './blob-store';
import { CursorError, documentClient, nowEpochSeconds, tableName } from './dynamo';
import { LOG_FILTER_INDEXES, MAX_INDEXED_METADATA } from './tables';

// Bodies are kept as JSON text, not DynamoDB maps: any JSON a client sends (deep nesting, huge numbers,
// empty keys) must be storable. A body item past this many UTF-8 bytes goes to the blob store instead:
// DynamoDB refuses items over 400 KB, and counts bytes, not characters.
const ITEM_BYTE_LIMIT = 300_000;
// A field past this many bytes (a huge model name, user or metadata) is moved out whole; a prefix stays.
const FIELD_BYTE_LIMIT = 2_048;
const KEPT_PREFIX = 256;
// A value past this many bytes is indexed by its hash: an index key holds at most 2,048 bytes.
const KEY_VALUE_BYTES = 512;
const OFFLOADED_FIELDS = ['model', 'user', 'metadata', 'error'] as const;
type OffloadedField = (typeof OFFLOADED_FIELDS)[number];
/**
 * How long finished entries gather before they are written together (BatchWriteItem, 25 items a call).
 * 0 (Lambda): each entry is written on its own after its reply. The local server sets
 * `GATEWAY_WRITE_BATCH_MS` (a few ms): one process serving many requests then writes many entries a call.
 */
const batchWindowMs = () => settings().writeBatchMs;
const BATCH_ITEMS = 25;
const ORG_INDEX = 'by-organisation';
type FilterIndex = (typeof LOG_FILTER_INDEXES)[number][0];
const INDEX_KEY = Object.fromEntries(LOG_FILTER_INDEXES) as Record<FilterIndex, string>;
const METADATA_INDEXES = ['by-metadata-1', 'by-metadata-2', 'by-metadata-3'] as const;

/** A workspace a filtered read covers, with the metadata keys it indexes (in its declared order). */
export interface LogWorkspace {
  slug: string;
  indexedMetadata: readonly string[];
}

export interface LogQuery {
  organisationId: string;
  /** A workspace slug limits the read to that workspace; undefined reads the whole organisation. */
  workspace?: string;
  /**
   * The workspaces a filtered read fans out over, each with its indexed metadata keys: the one named by
   * `workspace`, or every workspace of the organisation. Required when any filter is set.
   */
  workspaces?: LogWorkspace[];
  user?: string;
  virtualKey?: string;
  apiKey?: string;
  traceId?: string;
  model?: string;
  status?: number;
  metadata: Record<string, string>;
  fromMs?: number;
  toMs?: number;
  limit: number;
  cursor?: string;
}

/** A filter `GET /v1/logs` was given that no index can serve. */
export class UnindexedFilterError extends Error {}

interface StoredLog extends Omit<LogEntry, 'request' | 'response'> {
  pk: string;
  expires_at: number;
  org_shard: string;
  api_key_id?: string;
  body_ref?: string;
  /** A body item holds the bodies: it is written just after this item. */
  has_body?: boolean;
  [indexKey: string]: unknown;
}

interface StoredBody {
  pk: string;
  id: string;
  expires_at: number;
  request_json?: string;
  response_json?: string;
}

/** What the blob of a large entry holds: its bodies, and the fields too large to stay in the item. */
interface LogBlob {
  request: unknown;
  response: unknown;
  fields?: Partial<Pick<LogEntry, OffloadedField>>;
}

const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
// JSON text holds at most 6 bytes per UTF-16 unit of a string (`\u001f`): strings that short are known to
// fit without serialising them (a body item's JSON, escaped again, was serialised only to be measured).
const JSON_BYTES_PER_UNIT = 6;
const fits = (value: unknown, limit: number) =>
  value === undefined ||
  value === null ||
  (typeof value === 'string' && value.length * JSON_BYTES_PER_UNIT + 2 <= limit) ||
  bytes(value) <= limit;

/** The write shard of an entry: FNV-1a of its id, so any reader finds it again from the id alone. */
export function logShard(id: string, shards = settings().logShards): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

const shardList = () => Array.from({ length: settings().logShards }, (_, s) => s);
const partitionKey = (organisationId: string, workspace: string, shard: number) =>
  `${organisationId}#${workspace}#${shard}`;
const bodyKey = (indexPk: string) => `${indexPk}#body`;
const orgShardKey = (organisationId: string, shard: number) => `${organisationId}#${shard}`;
const keyValue = (value: string) =>
  Buffer.byteLength(value) <= KEY_VALUE_BYTES
    ? value
    : `sha256:${createHash('sha256').update(value).digest('hex')}`;
const indexKeyOf = (organisationId: string, workspace: string, shard: number, value: string) =>
  `${partitionKey(organisationId, workspace, shard)}#${keyValue(value)}`;
export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

export interface PutOptions {
  /** The workspace's indexed metadata keys, in declared order: each fills the metadata index of its place. */
  indexedMetadata?: readonly string[];
}

/** One entry waiting in the batch: its items, and who waits for them to be written. */
interface QueuedEntry {
  entry: LogEntry;
  options: PutOptions;
  items: Record<string, unknown>[];
  store: LogStore;
  written: () => void;
  failed: (error: Error) => void;
}

// Every entry waiting to be written by this process, whichever store took it.
let queue: QueuedEntry[] = [];
let queuedItems = 0;
let timer: NodeJS.Timeout | undefined;
const inFlight = new Set<Promise<void>>();

/** Writes every entry still waiting (before the log's reads, and when the local server stops). */
export async function flushLogWrites(): Promise<void> {
  sendQueue();
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}

/** Sends what is queued now, in calls of at most 25 items; an entry's items stay in one call. */
function sendQueue(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  let batch: QueuedEntry[] = [];
  let size = 0;
  const send = () => {
    if (batch.length === 0) return;
    const sent = writeBatch(batch);
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
    batch = [];
    size = 0;
  };
  for (const queued of queue) {
    if (size + queued.items.length > BATCH_ITEMS) send();
    batch.push(queued);
    size += queued.items.length;
  }
  send();
  queue = [];
  queuedItems = 0;
}

/**
 * One BatchWriteItem; what DynamoDB leaves unprocessed is sent again with a growing pause. Entries it
 * still could not write (or a call that failed whole) go through `put` one by one, which retries and
 * last writes a minimal item: the ledger loses nothing a single write would have kept.
 */
async function writeBatch(batch: QueuedEntry[]): Promise<void> {
  const table = tableName('logs');
  const db = documentClient();
  let requests = batch.flatMap((q) => q.items.map((Item) => ({ PutRequest: { Item } })));
  try {
    for (let attempt = 0; requests.length > 0 && attempt < 5; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }), {
        background: true,
      });
      requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
    }
  } catch (error) {
    logger.warn('log batch write failed; writing its entries one by one', {
      error: (error as Error).message,
    });
    requests = batch.flatMap((q) => q.items.map((Item) => ({ PutRequest: { Item } })));
  }
  const left = new Set(requests.map((r) => String(r.PutRequest.Item.id)));
  await Promise.all(
    batch.map(async (q) => {
      try {
        if (left.has(q.entry.id)) await q.store.put(q.entry, q.options);
        q.written();
      } catch (error) {
        q.failed(error as Error);
      }
    }),
  );
}

export class LogStore {
  private readonly db = documentClient();
  private readonly windowMs = batchWindowMs();

  constructor(private readonly readBudget = settings().logReadBudget) {}

  /**
   * Writes a finished request's entry: on its own (`put`) on Lambda, or with the entries that finish
   * within `GATEWAY_WRITE_BATCH_MS` in the local server. Resolves once it is written, as `put` does.
   */
  async write(entry: LogEntry, options: PutOptions = {}): Promise<void> {
    if (this.windowMs === 0) return this.put(entry, options);
    const { index, body } = await this.items(entry, options);
    if (body) index.has_body = true;
    const items = body ? [index, { ...body }] : [index];
    await new Promise<void>((written, failed) => {
      queue.push({ entry, options, items, store: this, written, failed });
      queuedItems += items.length;
      if (queuedItems >= BATCH_ITEMS) sendQueue();
      else timer ??= setTimeout(sendQueue, this.windowMs);
    });
  }

  /**
   * Writes the entry whatever its size: its index item (no bodies), then its bodies apart (a body item,
   * or the blob store when large). A failed index write is tried again, and last a minimal item (ids,
   * status, usage, cost, error) keeps the ledger whole. Throws only when even that could not be written.
   * The index item says a body item follows (`has_body`): a read waits for it rather than show an entry
   * without its bodies, and a rewritten entry (a realtime session at its close) is never half old.
   */
  async put(entry: LogEntry, options: PutOptions = {}): Promise<void> {
    const { index, body } = await this.items(entry, options);
    if (body) index.has_body = true;
    const put = (Item: Record<string, unknown>) =>
      this.db.send(new PutCommand({ TableName: tableName('logs'), Item }));
    let written: StoredLog | undefined;
    for (const candidate of [index, index, minimalItem(entry, options)]) {
      try {
        await put(candidate);
        written = candidate;
        break;
      } catch (error) {
        logger.warn('log write failed; trying again', {
          requestId: entry.id,
          error: (error as Error).message,
        });
      }
    }
    if (!written) throw new Error(`log entry ${entry.id} could not be written`);
    if (!body) return;
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        await put({ ...body });
        return;
      } catch (error) {
        if (attempt === 2)
          logger.error('log bodies could not be stored', {
            requestId: entry.id,
            error: (error as Error).message,
          });
      }
    }
    // The index item still records the request; it stops waiting for bodies that will not come.
    if (written.has_body) await put({ ...written, has_body: undefined }).catch(() => undefined);
  }

  /** Writes many entries in 25-item batches (imports, tests); unprocessed items are sent again. */
  async putMany(entries: LogEntry[], options: PutOptions = {}): Promise<void> {
    const items: Record<string, unknown>[] = [];
    for (const entry of entries) {
      const { index, body } = await this.items(entry, options);
      items.push(body ? { ...index, has_body: true } : index);
      if (body) items.push({ ...body });
    }
    for (let i = 0; i < items.length; i += 25) {
      let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; requests.length; attempt++) {
        if (attempt === 5) throw new Error('log batch write left unprocessed items');
        const out = await this.db.send(
          new BatchWriteCommand({ RequestItems: { [tableName('logs')]: requests } }),
        );
        requests = (out.UnprocessedItems?.[tableName('logs')] ?? []) as typeof requests;
      }
    }
  }

  private async items(
    entry: LogEntry,
    options: PutOptions,
  ): Promise<{ index: StoredLog; body: StoredBody | undefined }> {
    const { request, response, ...rest } = entry;
    // Object.assign, not a spread of both: V8 took about 20 µs to spread the second into the first.
    const index: StoredLog = Object.assign({}, rest, indexAttributes(entry, options));
    const body: StoredBody = {
      pk: bodyKey(index.pk),
      id: entry.id,
      expires_at: index.expires_at,
      request_json: request === undefined || request === null ? undefined : JSON.stringify(request),
      response_json: response === undefined || response === null ? undefined : JSON.stringify(response),
    };
    const large = OFFLOADED_FIELDS.filter((field) => !fits(entry[field], FIELD_BYTE_LIMIT));
    // The body item's strings at their longest as JSON, and room for its keys, punctuation and expiry.
    const bodyBound =
      JSON_BYTES_PER_UNIT *
        (body.pk.length +
          body.id.length +
          (body.request_json?.length ?? 0) +
          (body.response_json?.length ?? 0)) +
      200;
    if ((bodyBound <= ITEM_BYTE_LIMIT || bytes(body) <= ITEM_BYTE_LIMIT) && large.length === 0) {
      const empty = body.request_json === undefined && body.response_json === undefined;
      return { index, body: empty ? undefined : body };
    }
    const blob: LogBlob = { request: request ?? null, response: response ?? null, fields: {} };
    for (const field of large) {
      (blob.fields as Record<string, unknown>)[field] = entry[field];
      Object.assign(index, { [field]: keptPart(field, entry) });
    }
    index.body_ref = `logs/${entry.organisation_id}/${entry.id}.json`;
    try {
      await blobStore().put(index.body_ref, JSON.stringify(blob));
    } catch (error) {
      // The blob store failed: the entry is still written, without what only the blob could hold.
      logger.error('log bodies could not be stored', {
        requestId: entry.id,
        error: (error as Error).message,
      });
      return { index: minimalItem(entry, options), body: undefined };
    }
    return { index, body: undefined };
  }

  /** One entry with its bodies; `workspace` undefined looks in every workspace of the organisation. */
  async get(
    organisationId: string,
    workspace: string | undefined,
    id: string,
  ): Promise<LogEntry | undefined> {
    if (!/^[0-9A-Z]{26}$/.test(id)) return undefined;
    await flushLogWrites();
    const stored = await this.findIndexItem(organisationId, workspace, id);
    if (!stored) return undefined;
    if (stored.body_ref) {
      const blob = await blobStore().get(stored.body_ref);
      return toEntry(stored, blob ? (JSON.parse(blob) as LogBlob) : undefined);
    }
    const out = await this.db.send(
      new GetCommand({
        TableName: tableName('logs'),
        Key: { pk: bodyKey(stored.pk), id },
        ConsistentRead: true,
      }),
    );
    const body = out.Item as StoredBody | undefined;
    // Not yet written: the entry shows once it is whole.
    if (!body && stored.has_body) return undefined;
    // Written index first, bodies second: read after the bodies, the index item is at least as new.
    const again = await this.db.send(
      new GetCommand({ TableName: tableName('logs'), Key: { pk: stored.pk, id }, ConsistentRead: true }),
    );
    const latest = (again.Item as StoredLog | undefined) ?? stored;
    return toEntry(latest, {
      request: parseJson(body?.request_json),
      response: parseJson(body?.response_json),
    });
  }

  // The shard comes from the id; every shard is asked, so entries written before a raise of the count are found.
  private async findIndexItem(
    organisationId: string,
    workspace: string | undefined,
    id: string,
  ): Promise<StoredLog | undefined> {
    let keys: Array<{ pk: string; id: string }>;
    if (workspace !== undefined) {
      keys = shardList().map((s) => ({ pk: partitionKey(organisationId, workspace, s), id }));
    } else {
      const found = await Promise.all(
        shardList().map((s) =>
          this.db.send(
            new QueryCommand({
              TableName: tableName('logs'),
              IndexName: ORG_INDEX,
              KeyConditionExpression: 'org_shard = :o AND id = :id',
              ExpressionAttributeValues: { ':o': orgShardKey(organisationId, s), ':id': id },
            }),
          ),
        ),
      );
      keys = found.flatMap((out) => (out.Items ?? []).map((item) => ({ pk: String(item.pk), id })));
    }
    const [item] = await this.batchGet(keys);
    return item && !isExpired(item) ? item : undefined;
  }

  private async batchGet(keys: Array<{ pk: string; id: string }>): Promise<StoredLog[]> {
    const items: StoredLog[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let pending: Array<Record<string, unknown>> = keys.slice(i, i + 100);
      for (let attempt = 0; pending.length; attempt++) {
        if (attempt === 5) throw new Error('log read left unprocessed keys');
        const out = await this.db.send(
          new BatchGetCommand({ RequestItems: { [tableName('logs')]: { Keys: pending } } }),
        );
        for (const item of out.Responses?.[tableName('logs')] ?? []) items.push(item as StoredLog);
        pending = out.UnprocessedKeys?.[tableName('logs')]?.Keys ?? [];
      }
    }
    return items;
  }

  /**
   * Newest first, without bodies. Each read is a Query of a key or index built for its most selective
   * filter, over every shard, merged by id (time); other filters run as a FilterExpression on that index.
   * A page stops after `GATEWAY_LOG_READ_BUDGET` items read and then hands back a cursor, even when short.
   */
  async list(query: LogQuery): Promise<{ data: LogEntry[]; nextCursor: string | null }> {
    // Entries this process still holds in its write window are written first: a caller sees its request's
    // entry as soon as it has the reply, as the counters' reads do.
    await flushLogWrites();
    const plan = planQuery(query);
    const parts: PartitionState[] = plan.partitions.map((spec) => ({ spec, buffer: [], done: false }));
    const { ':now': _now, ...tested } = plan.filter.values;
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([plan.filter.expression, tested, plan.partitions]))
      .digest('base64url')
      .slice(0, 16);
    restoreCursor(parts, query.cursor, fingerprint);

    const low =
      query.fromMs !== undefined ? `${encodeTime(Math.max(0, query.fromMs), 10)}0000000000000000` : undefined;
    const high =
      query.toMs !== undefined ? `${encodeTime(Math.max(0, query.toMs), 10)}ZZZZZZZZZZZZZZZZ` : undefined;
    // A narrowing filter may drop most of what is read: read more per Query then.
    const perQuery = Math.max(
      plan.filter.narrowed ? 100 : 10,
      Math.ceil((2 * (query.limit + 1)) / parts.length),
    );

    const taken: Array<{ item: StoredLog; part: PartitionState }> = [];
    let read = 0;
    while (taken.length <= query.limit) {
      const needy = parts.filter((p) => !p.done && p.buffer.length === 0);
      if (needy.length) {
        if (read >= this.readBudget) break;
        // A round never reads past what is left of the budget.
        const limit = Math.max(1, Math.min(perQuery, Math.ceil((this.readBudget - read) / needy.length)));
        const counts = await Promise.all(needy.map((p) => this.fetch(p, plan.filter, { low, high, limit })));
        read += counts.reduce((a, b) => a + b, 0);
        continue;
      }
      let best: PartitionState | undefined;
      for (const p of parts) {
        const head = p.buffer[0];
        if (head && (!best || head.id > (best.buffer[0] as StoredLog).id)) best = p;
      }
      if (!best) break;
      const item = best.buffer.shift() as StoredLog;
      taken.push({ item, part: best });
      // Only what the page returns moves a shard's position: the one extra match is read again next time.
      if (taken.length <= query.limit) best.resume = item.id;
    }
    const page = taken.slice(0, query.limit);
    const extra = taken[query.limit];
    const finished = (p: PartitionState) => p.done && p.buffer.length === 0 && extra?.part !== p;
    const more = parts.some((p) => !finished(p));
    const nextCursor = more
      ? Buffer.from(
          JSON.stringify({ f: fingerprint, p: parts.map((p) => (finished(p) ? 1 : (p.resume ?? 0))) }),
        ).toString('base64url')
      : null;

    let items = page.map((t) => t.item);
    if (plan.needsBaseItems) {
      const full = new Map(
        (await this.batchGet(items.map(({ pk, id }) => ({ pk, id })))).map((i) => [i.id, i]),
      );
      items = items
        .map((i) => full.get(i.id))
        .filter((i): i is StoredLog => i !== undefined && !isExpired(i));
    }
    return { data: items.map((item) => toEntry(item)), nextCursor };
  }

  /** Reads the next items of one shard below its position; returns how many items DynamoDB read. */
  private async fetch(
    part: PartitionState,
    filter: FilterPlan,
    range: { low?: string; high?: string; limit: number },
  ): Promise<number> {
    // Fetched only once its buffer is all on the page: what lay between it and the last read did not match.
    if (part.floor !== undefined) part.resume = part.floor;
    part.floor = undefined;
    const names: Record<string, string> = { '#k': part.spec.keyAttribute, ...filter.names };
    const values: Record<string, unknown> = { ':k': part.spec.keyValue, ...filter.values };
    // ULIDs start with their millisecond timestamp, so a time range and a position are sort key ranges.
    const exclusive = part.resume !== undefined && (range.high === undefined || part.resume <= range.high);
    const upper = exclusive ? part.resume : range.high;
    let condition = '#k = :k';
    if (range.low !== undefined || upper !== undefined) names['#id'] = 'id';
    if (range.low !== undefined && upper !== undefined) {
      condition += ' AND #id BETWEEN :low AND :up';
      Object.assign(values, { ':low': range.low, ':up': upper });
    } else if (range.low !== undefined) {
      condition += ' AND #id >= :low';
      values[':low'] = range.low;
    } else if (upper !== undefined) {
      condition += exclusive ? ' AND #id < :up' : ' AND #id <= :up';
      values[':up'] = upper;
    }
    const input: QueryCommandInput = {
      TableName: tableName('logs'),
      IndexName: part.spec.index,
      KeyConditionExpression: condition,
      FilterExpression: filter.expression,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: range.limit,
    };
    const out = await this.db.send(new QueryCommand(input));
    for (const item of out.Items ?? []) {
      const stored = item as StoredLog;
      if (stored.id === part.resume) continue;
      // An index without the expiry (the organisation index) is checked after the base items are read.
      if (!isExpired(stored)) part.buffer.push(stored);
    }
    if (!out.LastEvaluatedKey) part.done = true;
    // Nothing matched in what was read: the shard's position moves past it.
    else if (part.buffer.length === 0) part.resume = String(out.LastEvaluatedKey.id);
    else part.floor = String(out.LastEvaluatedKey.id);
    return out.ScannedCount ?? out.Count ?? 0;
  }
}

interface PartitionSpec {
  index?: string;
  keyAttribute: string;
  keyValue: string;
}

interface PartitionState {
  spec: PartitionSpec;
  /** Exclusive upper bound: everything of this shard above it was returned (or filtered out). */
  resume?: string;
  /** The last id read while the buffer holds matches: the next Query continues below it. */
  floor?: string;
  buffer: StoredLog[];
  done: boolean;
}

interface FilterPlan {
  expression: string;
  /** Whether it tests more than the expiry. */
  narrowed: boolean;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/** Which index serves the query, over which keys, and what FilterExpression narrows it further. */
function planQuery(query: LogQuery): {
  partitions: PartitionSpec[];
  filter: FilterPlan;
  needsBaseItems: boolean;
} {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': nowEpochSeconds() };
  const filters = ['(attribute_not_exists(#exp) OR #exp > :now)'];
  names['#exp'] = 'expires_at';
  const equals = (attribute: string, value: unknown, path?: string) => {
    const v = `:f${filters.length}`;
    values[v] = value;
    if (path) {
      names['#meta'] = 'metadata';
      names[`#m${filters.length}`] = attribute;
      filters.push(`#meta.#m${filters.length} = ${v}`);
    } else {
      names[`#f${filters.length}`] = attribute;
      filters.push(`#f${filters.length} = ${v}`);
    }
  };
  // Most selective first: a trace is a handful of entries, a status class can be most of them.
  type Choice = { index: FilterIndex; value: string } | { metadataKey: string; value: string };
  const choices: Choice[] = [];
  if (query.traceId !== undefined) choices.push({ index: 'by-trace', value: query.traceId });
  for (const [k, v] of Object.entries(query.metadata)) choices.push({ metadataKey: k, value: `${k}=${v}` });
  if (query.user !== undefined) choices.push({ index: 'by-user', value: query.user });
  if (query.virtualKey !== undefined) choices.push({ index: 'by-virtual-key', value: query.virtualKey });
  if (query.apiKey !== undefined) choices.push({ index: 'by-api-key', value: query.apiKey });
  if (query.model !== undefined) choices.push({ index: 'by-model', value: query.model });
  if (query.status !== undefined)
    choices.push({ index: 'by-status-class', value: statusClass(query.status) });

  if (choices.length === 0) {
    const partitions =
      query.workspace !== undefined
        ? shardList().map((s) => ({
            keyAttribute: 'pk',
            keyValue: partitionKey(query.organisationId, query.workspace as string, s),
          }))
        : shardList().map((s) => ({
            index: ORG_INDEX,
            keyAttribute: 'org_shard',
            keyValue: orgShardKey(query.organisationId, s),
          }));
    return {
      partitions,
      filter: { expression: filters.join(' AND '), narrowed: false, names, values },
      needsBaseItems: query.workspace === undefined,
    };
  }

  const workspaces = query.workspaces;
  if (!workspaces) throw new Error('a filtered log read needs the workspaces it covers');
  const slotOf = (ws: LogWorkspace, key: string) => ws.indexedMetadata.indexOf(key);
  // Metadata is usable as the key only where every workspace read indexes it.
  const usable = choices.filter(
    (c) =>
      !('metadataKey' in c) ||
      workspaces.every(
        (ws) => slotOf(ws, c.metadataKey) >= 0 && slotOf(ws, c.metadataKey) < MAX_INDEXED_METADATA,
      ),
  );
  const chosen = usable[0];
  if (!chosen) {
    const keys = Object.keys(query.metadata)
      .map((k) => `metadata.${k}`)
      .join(', ');
    throw new UnindexedFilterError(
      `${keys}: not an indexed metadata key of the workspace; declare it in the workspace's indexed_metadata (PATCH /v1/workspaces/{slug}), or add another filter such as user or trace_id.`,
    );
  }
  // Every filter but the key's runs as a FilterExpression over the chosen index.
  if (query.traceId !== undefined && !('index' in chosen && chosen.index === 'by-trace'))
    equals('trace_id', query.traceId);
  if (query.user !== undefined && !('index' in chosen && chosen.index === 'by-user'))
    equals('user', query.user);
  if (query.virtualKey !== undefined && !('index' in chosen && chosen.index === 'by-virtual-key'))
    equals('virtual_key', query.virtualKey);
  if (query.apiKey !== undefined && !('index' in chosen && chosen.index === 'by-api-key'))
    equals('api_key_id', query.apiKey);
  if (query.model !== undefined && !('index' in chosen && chosen.index === 'by-model'))
    equals('model', query.model);
  // The status class is the key; the exact status is always checked.
  if (query.status !== undefined) equals('status', query.status);
  for (const [k, v] of Object.entries(query.metadata)) {
    if ('metadataKey' in chosen && chosen.metadataKey === k) continue;
    equals(k, v, 'metadata');
  }

  const partitions: PartitionSpec[] = [];
  for (const ws of [...workspaces].sort((a, b) => a.slug.localeCompare(b.slug))) {
    const index = 'index' in chosen ? chosen.index : METADATA_INDEXES[slotOf(ws, chosen.metadataKey)];
    if (!index) continue;
    for (const s of shardList()) {
      partitions.push({
        index,
        keyAttribute: INDEX_KEY[index],
        keyValue: indexKeyOf(query.organisationId, ws.slug, s, chosen.value),
      });
    }
  }
  return {
    partitions,
    filter: { expression: filters.join(' AND '), narrowed: filters.length > 1, names, values },
    needsBaseItems: true,
  };
}

/** A cursor holds each shard's position (0 not started, 1 finished, else an exclusive id bound). */
function restoreCursor(parts: PartitionState[], cursor: string | undefined, fingerprint: string): void {
  if (!cursor) return;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new CursorError();
  }
  const { f, p } = (value ?? {}) as { f?: unknown; p?: unknown };
  // A cursor is only ever followed over the partitions of the same query: anything else is not ours.
  if (f !== fingerprint || !Array.isArray(p) || p.length !== parts.length) throw new CursorError();
  p.forEach((position, i) => {
    const part = parts[i] as PartitionState;
    if (position === 1) part.done = true;
    else if (typeof position === 'string' && /^[0-9A-Z]{26}$/.test(position)) part.resume = position;
    else if (position !== 0) throw new CursorError();
  });
}

/** The key attributes of an entry's index item: its shard, and one sparse index key per set filter field. */
function indexAttributes(entry: LogEntry, options: PutOptions) {
  const shard = logShard(entry.id);
  const key = (value: string) => indexKeyOf(entry.organisation_id, entry.workspace, shard, value);
  const attributes: Record<string, unknown> = {
    pk: partitionKey(entry.organisation_id, entry.workspace, shard),
    org_shard: orgShardKey(entry.organisation_id, shard),
    expires_at: nowEpochSeconds() + settings().logRetentionDays * 86_400,
    trace_key: key(entry.trace_id),
    status_class_key: key(statusClass(entry.status)),
  };
  if (entry.user !== null) attributes.user_key = key(entry.user);
  if (entry.virtual_key !== null) attributes.virtual_key_key = key(entry.virtual_key);
  if (entry.model !== null) attributes.model_key = key(entry.model);
  if (entry.auth.key_id) {
    attributes.api_key_id = entry.auth.key_id;
    attributes.api_key_key = key(entry.auth.key_id);
  }
  (options.indexedMetadata ?? []).slice(0, MAX_INDEXED_METADATA).forEach((k, slot) => {
    const v = entry.metadata[k];
    if (v !== undefined) attributes[INDEX_KEY[METADATA_INDEXES[slot] as FilterIndex]] = key(`${k}=${v}`);
  });
  return attributes as Pick<StoredLog, 'pk' | 'org_shard' | 'expires_at'> & Record<string, unknown>;
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
function minimalItem(entry: LogEntry, options: PutOptions): StoredLog {
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
    ...indexAttributes(entry, { ...options, indexedMetadata: [] }),
  };
}

// Index attributes are storage, not part of the public entry.
const STORAGE_ATTRIBUTES = new Set([
  'pk',
  'expires_at',
  'org_shard',
  'api_key_id',
  'body_ref',
  'has_body',
  ...LOG_FILTER_INDEXES.map(([, attribute]) => attribute),
]);

/** The public entry: with its bodies when read by id, with `request`/`response` null on list pages. */
function toEntry(item: StoredLog, bodies?: LogBlob): LogEntry {
  const rest = Object.fromEntries(Object.entries(item).filter(([k]) => !STORAGE_ATTRIBUTES.has(k)));
  const entry = {
    ...rest,
    ...bodies?.fields,
    request: bodies ? bodies.request : null,
    response: bodies ? bodies.response : null,
  } as LogEntry;
  if (item.body_ref && !bodies) entry.body_ref = item.body_ref;
  return entry;
}
