import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../functions/core/settings';
import {
  type BudgetHold,
  CounterStore,
  closeCounters,
  flushCounters,
} from '../../functions/store/counter-store';
import { documentClient, useDynamoTransport } from '../../functions/store/dynamo';
import { DynamoDBHttpClient } from '../../functions/store/dynamodb-http';
import { EMBEDDED_DYNAMO_CLIENT, startDynalite } from '../../local/dynamodb';
import { createTable } from '../support/dynamo-table';

// Budget leases on the embedded DynamoDB, as the local server runs them: reservations come from one slice
// of the budget item held by the process, the item's `held` counts the whole slice, so nothing passes the
// limit; near the limit, after a lowered limit, or once the slice was swept, reservations and settlements
// go to the item itself again. Budget views show what requests in flight hold, not the slice.

const TableName = 'lease-test';
let dynamo: Awaited<ReturnType<typeof startDynalite>>;
const store = new CounterStore();
const EXP = () => Math.floor(Date.now() / 1000) + 960;
let item = 0;
let key = { pk: '', sk: '' };

beforeAll(async () => {
  dynamo = await startDynalite(undefined);
  await createTable(dynamo.endpoint, TableName);
  process.env.TABLE_COUNTERS = TableName;
  process.env.GATEWAY_BUDGET_LEASE = '32';
  process.env.GATEWAY_WRITE_BATCH_MS = '5';
  loadSettings();
  useDynamoTransport(EMBEDDED_DYNAMO_CLIENT);
});
afterAll(async () => {
  await closeCounters();
  delete process.env.TABLE_COUNTERS;
  delete process.env.GATEWAY_BUDGET_LEASE;
  delete process.env.GATEWAY_WRITE_BATCH_MS;
  loadSettings();
  await dynamo.close();
});
beforeEach(async () => {
  // Each test on its own budget item, with no slice left from the one before.
  await closeCounters();
  key = { pk: `WS#org#lease-${++item}`, sk: 'SPEND#all' };
});

const reserve = (usd: number, limit: number, id = `req${Math.random()}`) =>
  store.reserve(key.pk, key.sk, id, usd, limit, EXP());

async function raw(): Promise<Record<string, unknown>> {
  const out = await documentClient().send(new GetCommand({ TableName, Key: key, ConsistentRead: true }));
  return out.Item ?? {};
}
const slices = (it: Record<string, unknown>) =>
  Object.entries(it).filter(([name]) => name.startsWith('r_lease_')) as Array<[string, { usd: number }]>;
const reservationsOn = (it: Record<string, unknown>) =>
  Object.entries(it)
    .filter(([name]) => name.startsWith('r_'))
    .reduce((sum, [, r]) => sum + (r as { usd: number }).usd, 0);

const num = (value: unknown) => (value === undefined ? 0 : (value as number));

/** Counts the updates this process sends to the table while `run` runs. */
async function updatesDuring(run: () => Promise<unknown>): Promise<number> {
  const send = vi.spyOn(DynamoDBHttpClient.prototype, 'send');
  try {
    await run();
    return send.mock.calls.filter(([command]) => command instanceof UpdateCommand).length;
  } finally {
    send.mockRestore();
  }
}

describe('budget leases', () => {
  it('serves 20 reservations from one slice with one update, and the item holds spend plus the slice', async () => {
    let holds: Array<BudgetHold | undefined> = [];
    const updates = await updatesDuring(async () => {
      for (let i = 0; i < 20; i++) holds.push(await reserve(0.01, 100));
    });
    expect(updates).toBe(1);
    expect(holds.every((h) => h !== undefined)).toBe(true);
    // The slice is 32 reservations' worth; the view counts the 20 in flight only.
    expect(slices(await raw())).toEqual([[expect.any(String), expect.objectContaining({ usd: 0.32 })]]);
    expect(await store.readBudgetItems([key])).toEqual([{ spent: 0, reserved: 0.2 }]);

    const settled = await Promise.all(holds.map((h) => store.settle(h as BudgetHold, 0.001)));
    holds = [];
    expect(Math.max(...settled.map((s) => s.spent))).toBeCloseTo(0.02, 12);
    const item = await raw();
    expect(item.spent).toBeCloseTo(0.02, 12);
    expect(item.held as number).toBeCloseTo((item.spent as number) + reservationsOn(item), 12);
    expect(await store.readBudgetItems([key])).toEqual([{ spent: 0.02, reserved: 0 }]);

    // Shutdown gives the slice back: held is the spend again.
    await closeCounters();
    const after = await raw();
    expect(slices(after)).toEqual([]);
    expect(after.held).toBeCloseTo(0.02, 12);
  });

  it('never holds past the limit: beside another process reserving 0.05, 50 concurrent reservations of 0.01 against 0.1 take 5', async () => {
    await documentClient().send(
      new UpdateCommand({
        TableName,
        Key: key,
        UpdateExpression: 'ADD held :usd SET r_other = :entry',
        ExpressionAttributeValues: { ':usd': 0.05, ':entry': { usd: 0.05, exp: EXP() } },
      }),
    );
    const holds = await Promise.all(Array.from({ length: 50 }, () => reserve(0.01, 0.1)));
    expect(holds.filter((h) => h !== undefined)).toHaveLength(5);
    const item = await raw();
    expect(item.held as number).toBeLessThanOrEqual(0.1 + 1e-12);
    expect(item.held as number).toBeCloseTo(reservationsOn(item), 12);

    await Promise.all(holds.map((h) => h && store.settle(h, 0.01)));
    await closeCounters();
    const after = await raw();
    expect(after.spent).toBeCloseTo(0.05, 12);
    expect(after.held).toBeCloseTo(0.1, 12);
    expect(await reserve(0.01, 0.1)).toBeUndefined();
  });

  it('grows held by what a reply costs past its reservation, so the next reservation sees the spend', async () => {
    const first = (await reserve(0.01, 0.06)) as BudgetHold;
    const inFlight = (await reserve(0.01, 0.06)) as BudgetHold;
    await store.settle(first, 0.05);
    const item = await raw();
    expect(item.spent).toBeCloseTo(0.05, 12);
    // Spent plus the reservation still in flight, whatever the slice held before.
    expect(item.held as number).toBeGreaterThanOrEqual(0.06 - 1e-12);
    expect(await reserve(0.01, 0.06)).toBeUndefined();
    await store.release(inFlight);
    expect(await store.readBudgetItems([key])).toEqual([{ spent: 0.05, reserved: 0 }]);
    expect(await reserve(0.01, 0.06)).toBeDefined();
  });

  it('gives the slice back when the limit is lowered, and refuses what the lower limit has no room for', async () => {
    const hold = (await reserve(0.01, 1)) as BudgetHold;
    expect(slices(await raw())[0]?.[1].usd).toBeCloseTo(0.1, 12);
    expect(await reserve(0.01, 0.015)).toBeUndefined();
    const item = await raw();
    expect(item.held).toBeCloseTo(0.01, 12);
    await store.settle(hold, 0.01);
    await flushCounters();
    expect((await raw()).spent).toBeCloseTo(0.01, 12);
  });

  it('settles a reply that cost nothing, alone in its write window', async () => {
    const hold = (await reserve(0.01, 1)) as BudgetHold;
    await expect(store.settle(hold, 0)).resolves.toEqual({ spent: 0, charged: 0 });
    expect(await store.readBudgetItems([key])).toEqual([{ spent: 0, reserved: 0 }]);
  });

  it('charges the item itself for a request whose slice was swept for its expiry', async () => {
    const hold = (await reserve(0.01, 1)) as BudgetHold;
    const [[name, slice]] = slices(await raw()) as [[string, { usd: number }]];
    // Another process sweeps the slice, as it does a reservation past its expiry.
    await documentClient().send(
      new UpdateCommand({
        TableName,
        Key: key,
        UpdateExpression: 'REMOVE #l ADD held :back',
        ExpressionAttributeNames: { '#l': name },
        ExpressionAttributeValues: { ':back': -slice.usd },
      }),
    );
    await store.settle(hold, 0.004);
    await flushCounters();
    const item = await raw();
    expect(item.spent).toBeCloseTo(0.004, 12);
    expect(item.held).toBeCloseTo(0.004, 12);
    // The next reservation starts a new slice.
    expect(await reserve(0.01, 1)).toBeDefined();
    expect(slices(await raw())).toHaveLength(1);
  });

  it('keeps held equal to spend plus reservations, never past the limit, and every cost charged once (property)', async () => {
    // Waves of concurrent reservations, some settled below their reservation, some released, some left in
    // flight for the next wave; another process reserves on the same item exactly, without a slice.
    const wave = fc.record({
      asks: fc.array(
        fc.record({
          usd: fc.integer({ min: 1, max: 30 }),
          end: fc.constantFrom('settle', 'release', 'keep'),
          share: fc.integer({ min: 0, max: 100 }),
        }),
        { maxLength: 12 },
      ),
      other: fc.integer({ min: 0, max: 20 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 20, max: 400 }),
        fc.array(wave, { minLength: 1, maxLength: 5 }),
        async (limitCents, waves) => {
          await closeCounters();
          key = { pk: `WS#org#lease-${++item}`, sk: 'SPEND#all' };
          const limit = limitCents / 1000;
          let charged = 0;
          let kept: BudgetHold[] = [];
          for (const w of waves) {
            if (w.other > 0) {
              await documentClient()
                .send(
                  new UpdateCommand({
                    TableName,
                    Key: key,
                    UpdateExpression: 'ADD held :usd SET #r = :entry',
                    ConditionExpression: 'attribute_not_exists(held) OR held <= :room',
                    ExpressionAttributeNames: { '#r': `r_other${Math.random()}` },
                    ExpressionAttributeValues: {
                      ':usd': w.other / 1000,
                      ':room': limit - w.other / 1000,
                      ':entry': { usd: w.other / 1000, exp: EXP() },
                    },
                  }),
                )
                .catch(() => undefined);
            }
            const holds = await Promise.all(w.asks.map((a) => reserve(a.usd / 1000, limit)));
            const during = await raw();
            expect(num(during.held)).toBeLessThanOrEqual(limit + 1e-9);
            const settles: Array<Promise<unknown>> = [];
            w.asks.forEach((a, i) => {
              const hold = holds[i];
              if (!hold) return;
              if (a.end === 'keep') kept.push(hold);
              else if (a.end === 'release') settles.push(store.release(hold));
              else {
                const cost = Math.round(hold.usd * a.share * 10) / 1e6;
                charged += cost;
                settles.push(store.settle(hold, cost));
              }
            });
            await Promise.all(settles);
            await flushCounters();
            const now = await raw();
            expect(num(now.held)).toBeCloseTo(num(now.spent) + reservationsOn(now), 9);
          }
          await Promise.all(kept.map((h) => store.release(h)));
          kept = [];
          await closeCounters();
          const end = await raw();
          expect(slices(end)).toEqual([]);
          expect(num(end.spent)).toBeCloseTo(charged, 9);
          expect(num(end.held)).toBeCloseTo(num(end.spent) + reservationsOn(end), 9);
        },
      ),
      { numRuns: 40 },
    );
  });
});
