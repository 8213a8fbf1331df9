import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { TABLES } from '../../functions/store/tables';
import { batchPut, plainPuts } from '../../local/dynalite-batch-put.mjs';

// The embedded DynamoDB writes log batches its own way (local/dynalite-batch-put.mjs): for any call, what
// it stores (every item and index entry, byte for byte) and what it answers must be what dynalite's own
// BatchWriteItem stores and answers. Each case runs on two fresh stores, one per path, and compares them.

const require = createRequire(import.meta.url);
type Callback = (error: (Error & { statusCode?: number; body?: unknown }) | null, result?: unknown) => void;
type Action = (store: unknown, data: unknown, cb: Callback) => void;
interface Checks {
  types: unknown;
  custom: unknown;
}
interface Level {
  iterator(options: object): AsyncIterable<[string, string]>;
  close(): Promise<void>;
}
interface Store {
  db: Level;
}
const dynaliteDb = require('dynalite/db') as { create(options: object): Store };
const validations = require('dynalite/validations') as {
  checkTypes(data: unknown, types: unknown): unknown;
  checkValidations(data: unknown, types: unknown, custom: unknown, store: unknown): void;
};
const operation = (name: string) => ({
  checks: require(`dynalite/validations/${name}`) as Checks,
  run: require(`dynalite/actions/${name}`) as Action,
});
const createTable = operation('createTable');
const batchWriteItem = operation('batchWriteItem');

const LOGS = 'gateway-logs-v2';
const def = TABLES.logs;

/** The logs table as the local server creates it (local/dynamodb.ts `ensureTables`), and one with an LSI. */
const TABLE_INPUTS = [
  {
    TableName: LOGS,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      ...new Map(
        [def.partitionKey, def.sortKey, ...def.globalIndexes.flatMap((g) => [g.partitionKey, g.sortKey])].map(
          (a) => [a.name, { AttributeName: a.name, AttributeType: a.type }],
        ),
      ).values(),
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'id', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: def.globalIndexes.map((g) => ({
      IndexName: g.name,
      KeySchema: [
        { AttributeName: g.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: g.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...g.projection.attributes] },
    })),
  },
  {
    TableName: 'other',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'n', AttributeType: 'N' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'when', AttributeType: 'N' },
      { AttributeName: 'kind', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'n', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    LocalSecondaryIndexes: [
      {
        IndexName: 'by-when',
        KeySchema: [
          { AttributeName: 'n', KeyType: 'HASH' },
          { AttributeName: 'when', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: 'by-kind',
        KeySchema: [{ AttributeName: 'kind', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  },
];

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const call = (run: Action, store: unknown, data: unknown) =>
  new Promise<unknown>((resolve) =>
    run(store, data, (error, result) =>
      resolve(error ? { status: error.statusCode, error: error.body ?? error.message } : result),
    ),
  );

/** A call as the worker serves it: the log path when the body has its shape, else dynalite's. */
async function serve(store: Store, body: string, fast: boolean): Promise<unknown> {
  let data = JSON.parse(body) as unknown;
  const puts = fast ? plainPuts(data) : undefined;
  try {
    if (!puts) data = validations.checkTypes(data, batchWriteItem.checks.types);
    validations.checkValidations(data, batchWriteItem.checks.types, batchWriteItem.checks.custom, store);
  } catch (error) {
    const e = error as Error & { statusCode?: number; body?: unknown };
    return { status: e.statusCode, error: e.body };
  }
  if (!puts) return call(batchWriteItem.run, store, data);
  return call((s, d, cb) => batchPut(s, d, puts, cb), store, data);
}

async function newStore(onDisk: boolean): Promise<Store> {
  const options: Record<string, unknown> = { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 };
  if (onDisk) {
    const dir = mkdtempSync(join(tmpdir(), 'batch-put-'));
    dirs.push(dir);
    options.path = dir;
  }
  const store = dynaliteDb.create(options);
  for (const input of TABLE_INPUTS) {
    const data = validations.checkTypes(structuredClone(input), createTable.checks.types);
    validations.checkValidations(data, createTable.checks.types, createTable.checks.custom, store);
    await call(createTable.run, store, data);
  }
  await new Promise((r) => setTimeout(r, 20));
  return store;
}

/** Every item and index entry stored, as raw text (the table descriptions, with their dates, left out). */
async function contents(store: Store): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for await (const entry of store.db.iterator({ keyEncoding: 'utf8', valueEncoding: 'utf8' }))
    if (!entry[0].startsWith('table~')) out.push(entry);
  return out;
}

/** Runs the calls in order on a store per path; both answer and store the same. */
async function expectSame(bodies: string[], onDisk = false) {
  const [ours, theirs] = await Promise.all([newStore(onDisk), newStore(onDisk)]);
  const answers: unknown[] = [];
  for (const body of bodies) {
    const [a, b] = await Promise.all([serve(ours, body, true), serve(theirs, body, false)]);
    expect(a).toEqual(b);
    answers.push(a);
  }
  const stored = await contents(ours);
  expect(stored).toEqual(await contents(theirs));
  await Promise.all([ours.db.close(), theirs.db.close()]);
  return { answers, stored };
}

const wire = (item: Record<string, unknown>) => marshall(item, { removeUndefinedValues: true });
const batch = (items: Array<Record<string, unknown>>, table = LOGS, extra: object = {}) =>
  JSON.stringify({
    RequestItems: { [table]: items.map((i) => ({ PutRequest: { Item: wire(i) } })) },
    ...extra,
  });

/** A log entry's index item and body item as the log store writes them, varied by `n`. */
function logItems(n: number, overrides: Record<string, unknown> = {}): Array<Record<string, unknown>> {
  const shard = n % 8;
  const prefix = `org_${n % 3}#ws${n % 2}#${shard}`;
  const id = `01JABCDEFGHJKMNPQRSTV${String(n).padStart(5, '0')}`;
  const user = n % 4 === 0 ? null : `user-${n % 5}`;
  const index: Record<string, unknown> = {
    id,
    trace_id: `trace-${n}`,
    timestamp: new Date(n * 1000).toISOString(),
    organisation_id: `org_${n % 3}`,
    workspace: `ws${n % 2}`,
    auth: n % 3 ? { type: 'api_key', key_id: `key_${n % 2}` } : { type: 'jwt', subject: 'sub' },
    user,
    metadata: n % 2 ? { team: `t${n % 3}`, 'ü nicode': 'välue ✓' } : {},
    operation: 'chat.completions',
    provider: 'openai',
    model: n % 5 === 0 ? null : `gpt-${n % 3}`,
    virtual_key: n % 3 === 0 ? 'vk' : null,
    status: n % 7 === 0 ? 429 : 200,
    stream: n % 2 === 0,
    latency_ms: 62.3 + n,
    upstream_latency_ms: n % 6 === 0 ? 0 : 23.43,
    first_chunk_ms: null,
    usage: { prompt_tokens: 8, completion_tokens: n, total_tokens: 8 + n, estimated: n % 4 === 1 },
    cost: n % 9 === 0 ? null : 0.0000018 * n,
    error: n % 7 === 0 ? { type: 'rate_limit', message: 'slow down', code: null } : null,
    attempts: [{ target_index: '0', provider: 'openai', virtual_key: null, status: 200, latency_ms: 23.52 }],
    guardrails: n % 5 === 1 ? { input: [{ id: 'g', findings: 0, passed: true }] } : undefined,
    pk: prefix,
    org_shard: `org_${n % 3}#${shard}`,
    expires_at: 1_798_028_161 + n,
    trace_key: `${prefix}#trace-${n}`,
    status_class_key: `${prefix}#${n % 7 === 0 ? '4xx' : '2xx'}`,
    user_key: user === null ? undefined : `${prefix}#${user}`,
    virtual_key_key: n % 3 === 0 ? `${prefix}#vk` : undefined,
    model_key: n % 5 === 0 ? undefined : `${prefix}#gpt-${n % 3}`,
    api_key_id: n % 3 ? `key_${n % 2}` : undefined,
    api_key_key: n % 3 ? `${prefix}#key_${n % 2}` : undefined,
    metadata_key_1: n % 2 ? `${prefix}#team=t${n % 3}` : undefined,
    has_body: n % 6 !== 5 ? true : undefined,
    ...overrides,
  };
  const body = {
    pk: `${prefix}#body`,
    id,
    expires_at: index.expires_at,
    request_json: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: `ping ${n}` }] }),
    response_json: n % 4 === 3 ? undefined : JSON.stringify({ choices: [{ message: { content: 'pong' } }] }),
  };
  return index.has_body ? [index, body] : [index];
}

/** Entries `from`..`to` in batches of at most 25 items, an entry's items in one batch, as the log store sends. */
function logBatches(from: number, to: number, overrides: Record<string, unknown> = {}): string[] {
  const batches: string[] = [];
  let items: Array<Record<string, unknown>> = [];
  for (let n = from; n < to; n++) {
    const entry = logItems(n, overrides);
    if (items.length + entry.length > 25) {
      batches.push(batch(items));
      items = [];
    }
    items.push(...entry);
  }
  if (items.length) batches.push(batch(items));
  return batches;
}

describe('log batch writes in the embedded DynamoDB', () => {
  it('takes its own path for the log store batches', () => {
    for (const body of logBatches(0, 30)) expect(plainPuts(JSON.parse(body))).toBeDefined();
  });

  it('stores every item and index entry of log batches exactly as dynalite does', async () => {
    const { answers, stored } = await expectSame(logBatches(0, 120));
    expect(answers.every((a) => JSON.stringify(a) === '{"UnprocessedItems":{}}')).toBe(true);
    // Items, bodies, and the organisation, trace and status class entries at least, per entry.
    expect(stored.length).toBeGreaterThan(120 * 4);
    expect(stored.some(([k]) => k.startsWith('index-global~gateway-logs-v2~by-metadata-1~'))).toBe(true);
  });

  it('on disk too', async () => {
    await expectSame(logBatches(0, 40), true);
  });

  it('replaces items as dynalite does: stale index entries deleted, new ones written', async () => {
    await expectSame([
      ...logBatches(0, 40),
      // The same entries again with other keys for some indexes, none for others.
      ...logBatches(0, 40, { user_key: 'org_9#x#0#other', model_key: undefined, has_body: undefined }),
      ...logBatches(20, 60, { status_class_key: 'org_9#x#0#5xx' }),
    ]);
  });

  it('writes other tables, with local indexes and whole-item projections, as dynalite does', async () => {
    const items = Array.from({ length: 20 }, (_, i) => ({
      n: i % 4,
      sk: `s${i}`,
      when: i % 3 ? i * 1.5 : undefined,
      kind: i % 2 ? 'odd' : undefined,
      set: i % 5 ? new Set([`a${i}`, 'b']) : undefined,
      nums: i % 3 ? new Set([1, i + 2]) : undefined,
      list: [i, 'x', null, true, { deep: [{ n: -i }] }],
    }));
    await expectSame([
      batch(items, 'other'),
      batch(
        items.slice(0, 10).map((i) => ({ ...i, kind: 'k' })),
        'other',
      ),
    ]);
  });

  it("answers every refused call with dynalite's own error, and stores what it stores", async () => {
    const [first] = logItems(1);
    const entry = first as Record<string, unknown>;
    // Each call its own key: what one stores is not overwritten by the next.
    let n = 0;
    const raw = (item: Record<string, unknown>) =>
      JSON.stringify({
        RequestItems: { [LOGS]: [{ PutRequest: { Item: { ...item, id: { S: `id${n++}` } } } }] },
      });
    const { answers, stored } = await expectSame([
      batch([{ ...entry, pk: undefined }]),
      batch([{ ...entry, id: 7 }]),
      batch([{ ...entry, pk: '' }]),
      batch([{ ...entry, user_key: 12 }]),
      batch([{ ...entry, trace_key: 'x'.repeat(2049) }]),
      batch([{ ...entry, big: 'x'.repeat(410_000) }]),
      batch([entry, { ...entry, latency_ms: 1 }]),
      batch([entry], 'no-such-table'),
      batch([entry], 'x'),
      batch(Array.from({ length: 26 }, (_, i) => ({ ...entry, id: `id${i}` }))),
      raw({ ...wire(entry), cost: { N: 'not a number' } }),
      raw({ ...wire(entry), cost: { N: '1e400' } }),
      raw({ ...wire(entry), status: { N: '0200.50' } }),
      raw({ ...wire(entry), stream: { NULL: false } }),
      raw({ ...wire(entry), tags: { SS: [] } }),
      raw({ ...wire(entry), tags: { SS: ['a', 'a'] } }),
      raw({ ...wire(entry), tags: { SS: ['a', 1] } }),
      raw({ ...wire(entry), tags: { NS: ['1', null] } }),
      raw({ ...wire(entry), list: { L: [null, { S: 'a' }] } }),
      raw({ ...wire(entry), list: { L: { S: 'a' } } }),
      raw({ ...wire(entry), list: { L: [{ S: 5 }] } }),
      raw({ ...wire(entry), map: { M: { a: { N: 5 } } } }),
      raw({ ...wire(entry), map: { M: [{ S: 'a' }] } }),
      raw({ ...wire(entry), two: { S: 'a', N: '1' } }),
      raw({ ...wire(entry), none: {} }),
      raw({ ...wire(entry), nul: { S: null } }),
      raw({ ...wire(entry), num: { S: 5 } }),
      raw({ ...wire(entry), flag: { BOOL: 'true' } }),
      raw({ ...wire(entry), bin: { B: 'AAAA' } }),
      raw({ ...wire(entry), odd: { X: 'y' } }),
      raw({ ...wire(entry), metadata: { M: JSON.parse('{"__proto__": {"S": "p"}, "a": {"S": "b"}}') } }),
      JSON.stringify({
        RequestItems: { [LOGS]: [{ PutRequest: { Item: { ...wire(entry), id: { S: 'x' } } }, Extra: 1 }] },
      }),
      JSON.stringify({
        RequestItems: { [LOGS]: [{ DeleteRequest: { Key: { pk: { S: 'a' }, id: { S: 'b' } } } }] },
      }),
      JSON.stringify({ RequestItems: { [LOGS]: [] } }),
      `{"RequestItems":{"__proto__":[{"PutRequest":{"Item":${JSON.stringify(wire(entry))}}}]}}`,
      JSON.stringify({ RequestItems: { [LOGS]: [{ PutRequest: { Item: wire(entry) } }], other: [] } }),
      JSON.stringify({ RequestItems: { [LOGS]: [{ PutRequest: { Item: wire(entry), Other: {} } }] } }),
      JSON.stringify({ RequestItems: { [LOGS]: [null] } }),
      JSON.stringify({ RequestItems: {} }),
      batch([entry], LOGS, { ReturnConsumedCapacity: 'TOTAL' }),
    ]);
    // Most were refused; the few valid ones (a normalised number, a dropped unknown field) are stored alike.
    expect(answers.filter((a) => (a as { status?: number }).status === 400).length).toBeGreaterThan(20);
    expect(stored.length).toBeGreaterThan(0);
  });
});
