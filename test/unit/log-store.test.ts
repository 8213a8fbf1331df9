import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { ALL_TABLES } from '../../functions/store/tables';
import { sampleLogEntry } from '../support/log-entry';

// The log writer, on a mocked DynamoDB: what it writes for entries of every size, and what it does
// when a write fails. Blobs go to files under a temporary data dir.

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-logstore-'));
// aws-sdk-client-mock stubs `send` on the prototype; the stores' client has no SDK middleware stack, which
// is all the SDK type asks for beyond that.
const db = mockClient(DynamoDBHttpClient as unknown as typeof DynamoDBDocumentClient);
let LogStore: typeof import('../../functions/store/log-store').LogStore;

beforeAll(async () => {
  process.env.GATEWAY_DATA_DIR = dataDir;
  for (const def of ALL_TABLES) process.env[def.envVar] ??= `test-${def.id}`;
  loadSettings();
  ({ LogStore } = await import('../../functions/store/log-store'));
});
afterAll(() => {
  db.restore();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => db.reset());

const entry = sampleLogEntry;

const puts = () => db.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
// Index items: the body items (`pk` ending in `#body`) are written beside them.
const written = () => puts().filter((item) => !String(item.pk).endsWith('#body'));
const bodies = () => puts().filter((item) => String(item.pk).endsWith('#body'));
const bytes = (item: unknown) => Buffer.byteLength(JSON.stringify(item));

describe('the log writer', () => {
  it('keeps a small entry in a small index item and its bodies in a body item apart', async () => {
    db.on(PutCommand).resolves({});
    await new LogStore().put(entry());
    const [item] = written();
    expect(item).toMatchObject({ model: 'gpt-4o', pk: expect.stringMatching(/^org_1#default#\d+$/) });
    expect(item?.request_json).toBeUndefined();
    expect(item?.request).toBeUndefined();
    expect(item?.body_ref).toBeUndefined();
    expect(bodies()).toEqual([
      expect.objectContaining({ pk: `${item?.pk}#body`, request_json: '{"messages":[]}' }),
    ]);
  });

  it('derives the shard from the id and keys every filter index within it', async () => {
    db.on(PutCommand).resolves({});
    const { logShard } = await import('../../functions/store/log-store');
    await new LogStore().put(
      entry({ user: 'alice', virtual_key: 'vk', metadata: { team: 'a', env: 'b' }, status: 404 }),
      { indexedMetadata: ['env', 'team'] },
    );
    const [item] = written();
    const shard = logShard('01JABCDEFGHJKMNPQRSTVWXYZ0');
    const prefix = `org_1#default#${shard}`;
    expect(item).toMatchObject({
      pk: prefix,
      org_shard: `org_1#${shard}`,
      user_key: `${prefix}#alice`,
      virtual_key_key: `${prefix}#vk`,
      api_key_key: `${prefix}#key_1`,
      api_key_id: 'key_1',
      trace_key: `${prefix}#t`,
      model_key: `${prefix}#gpt-4o`,
      status_class_key: `${prefix}#4xx`,
      metadata_key_1: `${prefix}#env=b`,
      metadata_key_2: `${prefix}#team=a`,
    });
    expect(item?.metadata_key_3).toBeUndefined();
  });

  it('measures UTF-8 bytes: 150,000 three-byte characters go to the blob store', async () => {
    db.on(PutCommand).resolves({});
    await new LogStore().put(entry({ response: { text: '€'.repeat(150_000) } }));
    const [item] = written();
    expect(item?.body_ref).toBe('logs/org_1/01JABCDEFGHJKMNPQRSTVWXYZ0.json');
    expect(item?.response_json).toBeUndefined();
    expect(bytes(item)).toBeLessThan(10_000);
  });

  it('decides by the exact JSON bytes at each limit, escapes included', async () => {
    db.on(PutCommand).resolves({});
    // A control character is 6 bytes as JSON (`\u0001`): 341 of them, quoted, are 2,048 bytes, the limit.
    const control = (n: number) => '\u0001'.repeat(n);
    await new LogStore().put(entry({ id: '01JABCDEFGHJKMNPQRSTVWXYZ1', model: control(341) }));
    await new LogStore().put(entry({ id: '01JABCDEFGHJKMNPQRSTVWXYZ2', model: control(342) }));
    // In the body item the response's JSON is a string again: 7 bytes a character, 300,000 the limit.
    await new LogStore().put(entry({ id: '01JABCDEFGHJKMNPQRSTVWXYZ3', response: { t: control(42_500) } }));
    await new LogStore().put(entry({ id: '01JABCDEFGHJKMNPQRSTVWXYZ4', response: { t: control(43_000) } }));
    const [atLimit, overLimit, smallBody, largeBody] = written();
    expect(atLimit?.model).toBe(control(341));
    expect(atLimit?.body_ref).toBeUndefined();
    expect(overLimit?.model).toBe(control(256));
    expect(overLimit?.body_ref).toBeDefined();
    expect(smallBody?.body_ref).toBeUndefined();
    expect(bytes(bodies().find((b) => b.id === smallBody?.id))).toBeLessThan(300_000);
    expect(largeBody?.body_ref).toBeDefined();
  });

  it('moves a huge model, user, metadata and error out too, keeping a prefix in the item', async () => {
    db.on(PutCommand).resolves({});
    const big = 'ü'.repeat(200_000);
    await new LogStore().put(
      entry({
        model: big,
        user: big,
        metadata: { team: big },
        error: { message: big, type: 'x', code: null, origin: 'provider' },
      }),
    );
    const [item] = written();
    expect(bytes(item)).toBeLessThan(10_000);
    expect(String(item?.model)).toHaveLength(256);
    const blob = JSON.parse(readFileSync(join(dataDir, 'blobs', item?.body_ref as string), 'utf8'));
    expect(blob.fields.model).toBe(big);
    expect(blob.fields.metadata.team).toBe(big);
  });

  it('retries a failed write, then writes a minimal entry so the ledger misses nothing', async () => {
    db.on(PutCommand)
      .rejectsOnce(new Error('Item size has exceeded the maximum allowed size'))
      .rejectsOnce(new Error('Item size has exceeded the maximum allowed size'))
      .resolves({});
    await new LogStore().put(
      entry({ cost: Number.NaN, metadata: { a: 'b' }, request: null, response: null }),
    );
    const items = written();
    expect(items).toHaveLength(3);
    expect(items[2]).toMatchObject({
      id: '01JABCDEFGHJKMNPQRSTVWXYZ0',
      status: 200,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      cost: null,
      metadata: {},
    });
    expect(items[2]?.request_json).toBeUndefined();
  });

  it('throws only when even the minimal entry cannot be written', async () => {
    db.on(PutCommand).rejects(new Error('table is gone'));
    await expect(new LogStore().put(entry({ request: null, response: null }))).rejects.toThrow(
      /could not be written/,
    );
    expect(written()).toHaveLength(3);
  });
});
