import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../functions/core/log-entry';
import { loadSettings } from '../../functions/core/settings';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { ALL_TABLES } from '../../functions/store/tables';
import { sampleLogEntry } from '../support/log-entry';

// The local server's batched writes, on a mocked DynamoDB: log entries go out in BatchWriteItem calls of
// at most 25 items with what DynamoDB leaves unprocessed sent again, and settlements of one budget item
// share one update unless a reservation was swept meanwhile. Nothing is dropped either way.

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-batching-'));
// aws-sdk-client-mock stubs `send` on the prototype of the stores' client.
const db = mockClient(DynamoDBHttpClient as unknown as typeof DynamoDBDocumentClient);
let logs: typeof import('../../functions/store/log-store');
let counters: typeof import('../../functions/store/counter-store');

beforeAll(async () => {
  process.env.GATEWAY_DATA_DIR = dataDir;
  process.env.GATEWAY_WRITE_BATCH_MS = '5';
  for (const def of ALL_TABLES) process.env[def.envVar] ??= `test-${def.id}`;
  loadSettings();
  logs = await import('../../functions/store/log-store');
  counters = await import('../../functions/store/counter-store');
});
afterAll(() => {
  db.restore();
  delete process.env.GATEWAY_WRITE_BATCH_MS;
  loadSettings();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => db.reset());

const entry = (n: number): LogEntry =>
  sampleLogEntry({ id: `01JABCDEFGHJKMNPQRSTVW${String(n).padStart(4, '0')}` });

type Put = { PutRequest: { Item: Record<string, unknown> } };
const batches = () =>
  db
    .commandCalls(BatchWriteCommand)
    .map((c) => Object.values(c.args[0].input.RequestItems ?? {})[0] as Put[]);

describe('batched log writes', () => {
  it('writes 20 entries (40 items) in calls of at most 25 items, each entry whole in one call', async () => {
    db.on(BatchWriteCommand).resolves({});
    const store = new logs.LogStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.write(entry(i))));
    const sent = batches();
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const batch of sent) expect(batch.length).toBeLessThanOrEqual(25);
    const ids = sent.flat().map((r) => String(r.PutRequest.Item.id));
    expect(ids).toHaveLength(40);
    for (let i = 0; i < 20; i++) expect(ids.filter((id) => id === entry(i).id)).toHaveLength(2);
    for (const batch of sent) {
      const inBatch = batch.map((r) => String(r.PutRequest.Item.id));
      for (const id of inBatch) expect(inBatch.filter((x) => x === id)).toHaveLength(2);
    }
  });

  it('writes the entries still in the window before a read of the log, so a read sees them', async () => {
    db.on(BatchWriteCommand).resolves({});
    const store = new logs.LogStore();
    const written = store.write(entry(90));
    // Queued once its items are built, a few microtasks after the reply: before any read can arrive.
    await new Promise((resolve) => setImmediate(resolve));
    // Only the order of the calls matters here: the mocked reads find nothing.
    await store.get('org_1', 'default', entry(90).id).catch(() => undefined);
    await store
      .list({ organisationId: 'org_1', workspace: 'default', metadata: {}, limit: 10 })
      .catch(() => undefined);
    const calls = db.calls().map((c) => (c.args[0] as object).constructor.name);
    expect(calls[0]).toBe('BatchWriteCommand');
    expect(calls.filter((c) => c === 'BatchWriteCommand')).toHaveLength(1);
    await written;
  });

  it('sends unprocessed items again, and writes an entry on its own when a batch call fails', async () => {
    db.on(BatchWriteCommand)
      .callsFakeOnce((input: { RequestItems: Record<string, Put[]> }) => {
        const [table, requests] = Object.entries(input.RequestItems)[0] as [string, Put[]];
        return { UnprocessedItems: { [table]: requests.slice(0, 1) } };
      })
      .resolvesOnce({})
      .rejects(new Error('throttled'));
    db.on(PutCommand).resolves({});
    const store = new logs.LogStore();
    await store.write(entry(1));
    const sent = batches();
    expect(sent.map((b) => b.length)).toEqual([2, 1]);

    await store.write(entry(2));
    // The failed call's entry is written by single puts: its index item and its body item.
    const puts = db.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
    expect(puts.map((item) => item.id)).toEqual([entry(2).id, entry(2).id]);
  });

  it('writes what is queued when the server flushes on shutdown', async () => {
    db.on(BatchWriteCommand).resolves({});
    const written = new logs.LogStore().write(entry(3));
    await logs.flushLogWrites();
    await written;
    expect(batches().flat()).toHaveLength(2);
  });
});

const hold = (n: number, usd = 0.5) => ({ pk: 'VK#k1', sk: 'SPEND#all', attribute: `r_req${n}`, usd });
const updates = () => db.commandCalls(UpdateCommand).map((c) => c.args[0].input);

describe('batched settlements', () => {
  it('settles three reservations of one item in one update that removes them and adds their sum', async () => {
    db.on(UpdateCommand).resolves({ Attributes: { spent: 0.6 } });
    const store = new counters.CounterStore();
    const settled = await Promise.all([
      store.settle(hold(1), 0.1),
      store.settle(hold(2), 0.2),
      store.settle(hold(3), 0.3),
    ]);
    expect(updates()).toHaveLength(1);
    const [update] = updates();
    expect(update?.UpdateExpression).toBe('REMOVE #r0, #r1, #r2 ADD held :delta, spent :usd');
    expect(Object.values(update?.ExpressionAttributeNames ?? {})).toEqual(['r_req1', 'r_req2', 'r_req3']);
    expect(update?.ExpressionAttributeValues?.[':usd']).toBeCloseTo(0.6, 12);
    expect(update?.ExpressionAttributeValues?.[':delta']).toBeCloseTo(0.6 - 1.5, 12);
    expect(settled).toEqual([
      { spent: 0.6, charged: 0.6 },
      { spent: 0.6, charged: 0.6 },
      { spent: 0.6, charged: 0.6 },
    ]);
  });

  it('settles each on its own when one reservation was swept, so no cost is lost or given back twice', async () => {
    db.on(UpdateCommand)
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }))
      .resolves({ Attributes: { spent: 1 } });
    const store = new counters.CounterStore();
    await Promise.all([store.settle(hold(1), 0.1), store.settle(hold(2), 0.2)]);
    const written = updates();
    expect(written).toHaveLength(3);
    expect(written.slice(1).map((u) => u.UpdateExpression)).toEqual([
      'REMOVE #r ADD held :delta, spent :usd',
      'REMOVE #r ADD held :delta, spent :usd',
    ]);
    expect(written.slice(1).map((u) => u.ExpressionAttributeValues?.[':usd'])).toEqual([0.1, 0.2]);
  });

  it('sums per-user usage per item and writes it when asked to flush', async () => {
    process.env.GATEWAY_AGGREGATE_FLUSH_MS = '60000';
    loadSettings();
    try {
      db.on(UpdateCommand).resolves({});
      const store = new counters.CounterStore();
      const usage = { cost: 0.25, prompt_tokens: 3, completion_tokens: 4 };
      await store.addUserUsage('org_1', 'default', '2026-11-23', 'alice', usage);
      await store.addUserUsage('org_1', 'default', '2026-11-23', 'alice', usage);
      expect(updates()).toHaveLength(0);
      await counters.flushCounters();
      expect(updates()).toHaveLength(1);
      const values = Object.values(updates()[0]?.ExpressionAttributeValues ?? {});
      expect(values).toEqual(expect.arrayContaining([2, 0.5, 6, 8, 'alice', '2026-11-23']));
    } finally {
      delete process.env.GATEWAY_AGGREGATE_FLUSH_MS;
      loadSettings();
    }
  });
});
