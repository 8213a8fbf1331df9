import { QueryCommand, type QueryCommandInput, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { monotonicFactory } from 'ulid';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LogEntry } from '../../functions/core/log-entry';
import { documentClient } from '../../functions/store/dynamo';
import { LogStore } from '../../functions/store/log-store';
import { startTestGateway, type TestGateway } from '../support/gateway';

// 20,000 entries of 50 users in the local store, written straight through the store: every filter of
// GET /v1/logs must find exactly its entries by a Query of the index built for it, never by reading the
// workspace's partition with a FilterExpression, and cursors must page through the shards in time order.

const ENTRIES = 20_000;
const USERS = 50;
const PER_TRACE = 4;

let gw: TestGateway;
let organisationId: string;
const entries: LogEntry[] = [];

function entry(id: string, i: number, at: number): LogEntry {
  return {
    id,
    trace_id: `trace-${Math.floor(i / PER_TRACE)}`,
    timestamp: new Date(at).toISOString(),
    organisation_id: organisationId,
    workspace: 'default',
    auth: { type: 'api_key', key_id: `key_${i % 3}` },
    user: `user-${i % USERS}`,
    metadata: { region: `r${i % 7}` },
    operation: 'chat.completions',
    provider: 'openai',
    model: i % 10 === 0 ? 'gpt-4o' : 'gpt-4o-mini',
    virtual_key: null,
    status: i % 20 === 0 ? 429 : 200,
    stream: false,
    latency_ms: 10,
    upstream_latency_ms: 9,
    first_chunk_ms: null,
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    cost: 0.00001,
    request: null,
    response: null,
    error: null,
    attempts: [],
  };
}

beforeAll(async () => {
  gw = await startTestGateway();
  organisationId = (await gw.api('GET', '/organisation')).body.id;
  // Ten entries a millisecond, an hour ago: ids are in time order, several share a millisecond.
  const start = Date.now() - 3_600_000;
  const next = monotonicFactory();
  for (let i = 0; i < ENTRIES; i++) {
    const at = start + Math.floor(i / 10);
    entries.push(entry(next(at), i, at));
  }
  const store = new LogStore();
  const batches: LogEntry[][] = [];
  for (let i = 0; i < ENTRIES; i += 1_000) batches.push(entries.slice(i, i + 1_000));
  for (let i = 0; i < batches.length; i += 4) {
    await Promise.all(batches.slice(i, i + 4).map((batch) => store.putMany(batch)));
  }
}, 600_000);
afterAll(async () => {
  await gw?.stop();
});

const newestFirst = (list: LogEntry[]) => list.map((e) => e.id).sort((a, b) => (a < b ? 1 : -1));

/** Every page of a list, following its cursors; the Queries and Scans the store issued meanwhile. */
async function readAll(path: string) {
  const send = vi.spyOn(documentClient(), 'send');
  const ids: string[] = [];
  const pages: Array<Array<Record<string, unknown>>> = [];
  let cursor: string | null = null;
  try {
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res = await gw.api('GET', `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      pages.push(res.body.data);
      ids.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    const commands = send.mock.calls.map(([command]) => command);
    return {
      ids,
      pages,
      scans: commands.filter((c) => c instanceof ScanCommand).length,
      // The log table's Queries: authentication reads the control table meanwhile.
      queries: commands
        .filter((c) => c instanceof QueryCommand)
        .map((c) => (c as QueryCommand).input as QueryCommandInput)
        .filter((q) => q.TableName === process.env.TABLE_LOGS),
    };
  } finally {
    send.mockRestore();
  }
}

/** A Query reads the workspace's own partition (the base table), narrowing it only with a filter. */
const readsWorkspacePartition = (q: QueryCommandInput) => q.IndexName === undefined;

describe('GET /v1/logs over 20,000 entries of 50 users', () => {
  it('?user=X returns exactly that user’s entries, newest first, by Queries of the user index', async () => {
    const read = await readAll('/logs?user=user-7');
    expect(read.ids).toEqual(newestFirst(entries.filter((e) => e.user === 'user-7')));
    expect(read.ids).toHaveLength(ENTRIES / USERS);
    expect(read.scans).toBe(0);
    expect(read.queries.length).toBeGreaterThan(0);
    expect(read.queries.filter(readsWorkspacePartition)).toEqual([]);
    expect(new Set(read.queries.map((q) => q.IndexName))).toEqual(new Set(['by-user']));
    // List pages carry no bodies; GET /v1/logs/{id} has them.
    expect(read.pages[0]?.[0]).toMatchObject({ user: 'user-7', request: null, response: null });
  });

  it('?trace_id=Y returns exactly the entries of that trace, by Queries of the trace index', async () => {
    const read = await readAll('/logs?trace_id=trace-1234');
    expect(read.ids).toEqual(newestFirst(entries.filter((e) => e.trace_id === 'trace-1234')));
    expect(read.ids).toHaveLength(PER_TRACE);
    expect(read.scans).toBe(0);
    expect(read.queries.filter(readsWorkspacePartition)).toEqual([]);
    expect(new Set(read.queries.map((q) => q.IndexName))).toEqual(new Set(['by-trace']));
  });

  it('combined filters use the most selective index and test the others in a FilterExpression', async () => {
    const read = await readAll('/logs?model=gpt-4o&user=user-10&status=429');
    const expected = entries.filter((e) => e.model === 'gpt-4o' && e.user === 'user-10' && e.status === 429);
    expect(expected.length).toBeGreaterThan(0);
    expect(read.ids).toEqual(newestFirst(expected));
    expect(new Set(read.queries.map((q) => q.IndexName))).toEqual(new Set(['by-user']));
    expect(read.queries.every((q) => /#f\d+ = :f\d+/.test(q.FilterExpression ?? ''))).toBe(true);
  });

  it('?api_key and ?status are served by their own indexes', async () => {
    const byKey = await readAll('/logs?api_key=key_2&from=0&to=9999999999999&user=user-2');
    expect(byKey.ids).toEqual(
      newestFirst(entries.filter((e) => e.auth.key_id === 'key_2' && e.user === 'user-2')),
    );
    const byStatus = await readAll('/logs?status=429&model=gpt-4o-mini');
    expect(byStatus.ids).toEqual(
      newestFirst(entries.filter((e) => e.status === 429 && e.model === 'gpt-4o-mini')),
    );
    expect(new Set(byStatus.queries.map((q) => q.IndexName))).toEqual(new Set(['by-model']));
    expect([...byKey.queries, ...byStatus.queries].filter(readsWorkspacePartition)).toEqual([]);
  });

  it('cursors page through every shard in time order, workspace and organisation alike', async () => {
    const newest = newestFirst(entries);
    for (const path of ['/logs?workspace=default', '/logs']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 5; page++) {
        const res = await gw.api(
          'GET',
          `${path}${path.includes('?') ? '&' : '?'}limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((e: { id: string }) => e.id));
        cursor = res.body.next_cursor;
      }
      expect(seen).toEqual(newest.slice(0, 500));
    }
  });

  it('a page stops at its read budget with a cursor, and the pages still hold every match in order', async () => {
    const store = new LogStore(50);
    const readAllOf = async (filters: { user: string; model: string }) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.list({
          organisationId,
          workspace: 'default',
          workspaces: [{ slug: 'default', indexedMetadata: [] }],
          ...filters,
          metadata: {},
          limit: 100,
          cursor,
        });
        ids.push(...page.data.map((e) => e.id));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      return { ids, pages };
    };
    const some = await readAllOf({ user: 'user-3', model: 'gpt-4o-mini' });
    expect(some.pages).toBeGreaterThan(4);
    expect(some.ids).toEqual(newestFirst(entries.filter((e) => e.user === 'user-3')));
    // user-7 never used gpt-4o: every page is empty, yet each hands back a cursor until all is read.
    const none = await readAllOf({ user: 'user-7', model: 'gpt-4o' });
    expect(none.pages).toBeGreaterThan(4);
    expect(none.ids).toEqual([]);
  });

  it('indexed metadata is a Query of its index; an unindexed key alone is a 400', async () => {
    expect((await gw.api('GET', '/logs?metadata.region=r3')).status).toBe(400);
    const patched = await gw.api('PATCH', '/workspaces/default', { indexed_metadata: ['region'] });
    expect(patched.body.indexed_metadata).toEqual(['region']);
    const store = new LogStore();
    const next = monotonicFactory();
    const late = entries.slice(0, 30).map((e) => ({ ...e, id: next(), trace_id: 'late' }));
    await store.putMany(late, { indexedMetadata: ['region'] });
    const read = await readAll('/logs?metadata.region=r3');
    expect(read.ids).toEqual(newestFirst(late.filter((e) => e.metadata.region === 'r3')));
    expect(new Set(read.queries.map((q) => q.IndexName))).toEqual(new Set(['by-metadata-1']));
  });
});
