import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { ALL_TABLES } from '../../functions/store/tables';
import { sampleLogEntry } from '../support/log-entry';

// What the usage aggregates write for entries gathered in one window (the local server's): one ADD per
// counter item, summed over the entries that fall in it, whatever their order across hours and days.

const db = mockClient(DynamoDBHttpClient as unknown as typeof DynamoDBDocumentClient);
let AnalyticsStore: typeof import('../../functions/store/analytics-store').AnalyticsStore;
const window = process.env.GATEWAY_AGGREGATE_FLUSH_MS;

beforeAll(async () => {
  for (const def of ALL_TABLES) process.env[def.envVar] ??= `test-${def.id}`;
  // Long enough that nothing is written before the test flushes.
  process.env.GATEWAY_AGGREGATE_FLUSH_MS = '600000';
  loadSettings();
  ({ AnalyticsStore } = await import('../../functions/store/analytics-store'));
});
afterAll(() => {
  db.restore();
  if (window === undefined) delete process.env.GATEWAY_AGGREGATE_FLUSH_MS;
  else process.env.GATEWAY_AGGREGATE_FLUSH_MS = window;
  loadSettings();
});

describe('usage aggregates gathered in a window', () => {
  it('add each entry to its own hour and day, overall and per dimension value', async () => {
    db.reset();
    db.on(UpdateCommand).resolves({});
    const store = new AnalyticsStore();
    const at = (timestamp: string, overrides = {}) => sampleLogEntry({ timestamp, ...overrides });
    // Out of order across two hours and two days, and back to the first hour.
    const entries = [
      at('2026-11-23T10:15:00.000Z'),
      at('2026-11-23T10:45:00.000Z', { model: 'gpt-4o-mini', status: 500 }),
      at('2026-11-23T11:05:00.000Z'),
      at('2026-11-24T00:10:00.000Z', { user: 'ana' }),
      at('2026-11-23T10:20:00.000Z', { user: 'ana' }),
    ];
    for (const entry of entries) await store.record(entry);
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
    await store.flush();

    const requests = new Map<string, number>();
    for (const call of db.commandCalls(UpdateCommand)) {
      const input = call.args[0].input;
      const pk = String(input.Key?.pk);
      // AN#<organisation>#<workspace>#<interval>#<dimension>#<shard>
      const [, , , interval, dimension] = pk.split('#');
      const key = `${interval} ${dimension} ${input.Key?.sk}`;
      expect(requests.has(key)).toBe(false);
      requests.set(key, input.ExpressionAttributeValues?.[':requests'] as number);
    }
    expect(Object.fromEntries(requests)).toEqual({
      'hour all 2026-11-23T10#': 3,
      'hour all 2026-11-23T11#': 1,
      'hour all 2026-11-24T00#': 1,
      'day all 2026-11-23#': 4,
      'day all 2026-11-24#': 1,
      'hour model 2026-11-23T10#gpt-4o': 2,
      'hour model 2026-11-23T10#gpt-4o-mini': 1,
      'hour model 2026-11-23T11#gpt-4o': 1,
      'hour model 2026-11-24T00#gpt-4o': 1,
      'day model 2026-11-23#gpt-4o': 3,
      'day model 2026-11-23#gpt-4o-mini': 1,
      'day model 2026-11-24#gpt-4o': 1,
      'hour user 2026-11-23T10#': 2,
      'hour user 2026-11-23T10#ana': 1,
      'hour user 2026-11-23T11#': 1,
      'hour user 2026-11-24T00#ana': 1,
      'day user 2026-11-23#': 3,
      'day user 2026-11-23#ana': 1,
      'day user 2026-11-24#ana': 1,
      'hour provider 2026-11-23T10#openai': 3,
      'hour provider 2026-11-23T11#openai': 1,
      'hour provider 2026-11-24T00#openai': 1,
      'day provider 2026-11-23#openai': 4,
      'day provider 2026-11-24#openai': 1,
      'hour virtual_key 2026-11-23T10#': 3,
      'hour virtual_key 2026-11-23T11#': 1,
      'hour virtual_key 2026-11-24T00#': 1,
      'day virtual_key 2026-11-23#': 4,
      'day virtual_key 2026-11-24#': 1,
      'hour api_key 2026-11-23T10#key_1': 3,
      'hour api_key 2026-11-23T11#key_1': 1,
      'hour api_key 2026-11-24T00#key_1': 1,
      'day api_key 2026-11-23#key_1': 4,
      'day api_key 2026-11-24#key_1': 1,
      'hour status_class 2026-11-23T10#2xx': 2,
      'hour status_class 2026-11-23T10#5xx': 1,
      'hour status_class 2026-11-23T11#2xx': 1,
      'hour status_class 2026-11-24T00#2xx': 1,
      'day status_class 2026-11-23#2xx': 3,
      'day status_class 2026-11-23#5xx': 1,
      'day status_class 2026-11-24#2xx': 1,
    });

    // A second window starts empty.
    db.reset();
    db.on(UpdateCommand).resolves({});
    await store.flush();
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
