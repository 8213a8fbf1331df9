import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { logger } from '../core/logger';
import { round12 } from '../core/prices';
import { settings } from '../core/settings';
import {
  type BudgetLease,
  chargeItem,
  endLeases,
  flushLeases,
  itemId,
  releaseToLease,
  settleOnLease,
  takeFromLease,
  viewedReservation,
} from './budget-lease';
import { isConditionFailure } from './control-store';
import { documentClient, tableName } from './dynamo';

// Single-item atomic counters (docs/architecture.md, "A new store": no read-modify-write). Keys:
//   VK#<virtual key id> / STATE                     -> what is enforced: budget, period, alert, rate limit;
//                                                      absent once the key is deleted
//   VK#<virtual key id> / SPEND#<period>            -> spent (USD) in a budget period (`all` or `yyyy-mm`)
//   VK#<virtual key id> / RATE#<epoch minute>       -> requests in one minute window; expires
//   VK#<virtual key id> / ALERT#<period>            -> the budget alert of a period, written once
//   USERS#<org>#<workspace> / <yyyy-mm-dd>#<user>   -> one end user's usage on one day (UTC)
//   <holder> / SPEND#<period>                       -> a budget: `spent` (settled USD), `held` (spent plus
//                                                      live reservations), one `r_<request id>` per reservation
//   <holder> / RATE#<epoch minute>, TOK#<epoch minute> -> requests and tokens in one minute window
// A holder is `VK#<virtual key id>`, `WS#<org>#<workspace>`, `AK#<api key id>` or `US#<org>#<workspace>#<user>`.
// Counters are keyed by the virtual key's id, not its slug, so a slug deleted and re-created starts at 0.

/** The enforced settings of a virtual key, read strongly with its spend on every request. */
export interface VirtualKeyState {
  budget_limit: number | null;
  budget_period: 'none' | 'monthly';
  /** Fraction of the limit (0 to 1) whose crossing records an alert; null for none. */
  budget_alert_threshold: number | null;
  requests_per_minute: number | null;
}

/** One reservation on one budget item, as `reserve` took it. */
export interface BudgetHold {
  pk: string;
  sk: string;
  /** The attribute that records the reservation on the item. */
  attribute: string;
  usd: number;
  /** The process's slice of the item it was taken from, when it was (budget-lease.ts). */
  lease?: BudgetLease;
}

/** The live state of one budget item: settled spend and the reservations that have not expired. */
export interface BudgetItemState {
  spent: number;
  reserved: number;
}

const RESERVATION_PREFIX = 'r_';

export interface BudgetAlert {
  period: string;
  threshold_usd: number;
  spent: number;
  created_at: string;
}

export interface UserDayUsage {
  user: string;
  day: string;
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

const TABLE = () => tableName('counters');

/** ADDs (and SETs) waiting for one counter item, written together as one update. */
interface PendingCounter {
  key: { pk: string; sk: string };
  add: Map<string, number>;
  set: Record<string, unknown>;
}

// Counter updates that no reply waits for (per-user usage, the spend of keys without a budget), summed
// per item for `GATEWAY_AGGREGATE_FLUSH_MS` in the local server, as the usage aggregates are: one ADD per
// item and window instead of one per request. Reads of these counters and shutdown write them first.
// 0 (Lambda): each update is written before the invocation ends.
let pendingCounters = new Map<string, PendingCounter>();
let counterTimer: NodeJS.Timeout | undefined;
let counterFlush: Promise<void> = Promise.resolve();
const counterWindowMs = () => settings().aggregateFlushMs;

/** What a settlement did to its budget item: the spend after it, and what its update added. */
export interface Settled {
  spent: number;
  /** The cost this update added: the settlement's own, or that of every settlement written with it. */
  charged: number;
}

/** A settlement waiting for its budget item's write. */
interface PendingSettle {
  hold: BudgetHold;
  usd: number;
  done: (settled: Settled) => void;
  failed: (error: Error) => void;
}

// Settlements of one budget item that end within `GATEWAY_WRITE_BATCH_MS` of each other (the local
// server, under concurrent load) are written as one update; 0 (Lambda): each on its own, at once.
const pendingSettles = new Map<string, PendingSettle[]>();
let settleTimer: NodeJS.Timeout | undefined;
const settleWindowMs = () => settings().writeBatchMs;
// A DynamoDB expression holds at most 4 KB: settlements past this many per item wait for the next write.
const SETTLES_PER_UPDATE = 50;

/**
 * Writes the settlements waiting (all, or those of one budget item); resolves once written. True when
 * there were any: a reservation refused while its item had settlements waiting is tried again.
 */
function flushSettles(only?: string): Promise<boolean> {
  const groups: PendingSettle[][] = [];
  for (const [id, group] of pendingSettles) {
    if (only !== undefined && id !== only) continue;
    pendingSettles.delete(id);
    for (let i = 0; i < group.length; i += SETTLES_PER_UPDATE)
      groups.push(group.slice(i, i + SETTLES_PER_UPDATE));
  }
  if (pendingSettles.size === 0 && settleTimer) {
    clearTimeout(settleTimer);
    settleTimer = undefined;
  }
  return Promise.all([flushLeases(only), ...groups.map(writeSettles)]).then(
    ([leased]) => leased || groups.length > 0,
  );
}

async function writeSettles(group: PendingSettle[]): Promise<void> {
  const one = async (p: PendingSettle) => {
    try {
      p.done({ spent: await settleOne(p.hold, p.usd), charged: p.usd });
    } catch (error) {
      p.failed(error as Error);
    }
  };
  if (group.length === 1) return one(group[0] as PendingSettle);
  const names: Record<string, string> = {};
  group.forEach((p, i) => {
    names[`#r${i}`] = p.hold.attribute;
  });
  const refs = Object.keys(names);
  const usd = round12(group.reduce((sum, p) => sum + p.usd, 0));
  const delta = round12(group.reduce((sum, p) => sum + p.usd - p.hold.usd, 0));
  const { pk, sk } = (group[0] as PendingSettle).hold;
  try {
    const out = await documentClient().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk, sk },
        UpdateExpression: `REMOVE ${refs.join(', ')} ADD held :delta, spent :usd`,
        // Only if every reservation still holds: one swept for its expiry is settled on its own.
        ConditionExpression: refs.map((ref) => `attribute_exists(${ref})`).join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':delta': delta, ':usd': usd },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const spent = Number(out.Attributes?.spent ?? usd);
    for (const p of group) p.done({ spent, charged: usd });
  } catch (error) {
    if (!isConditionFailure(error)) {
      for (const p of group) p.failed(error as Error);
      return;
    }
    await Promise.all(group.map(one));
  }
}

/**
 * Settles a reservation in one update: removes it and adds the actual cost to the spend. A reservation
 * already swept for its expiry no longer holds anything, so the cost is then added on its own.
 * Returns the period's new spend.
 */
async function settleOne(hold: BudgetHold, usd: number): Promise<number> {
  try {
    const out = await documentClient().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: hold.pk, sk: hold.sk },
        UpdateExpression: 'REMOVE #r ADD held :delta, spent :usd',
        ConditionExpression: 'attribute_exists(#r)',
        ExpressionAttributeNames: { '#r': hold.attribute },
        ExpressionAttributeValues: { ':delta': round12(usd - hold.usd), ':usd': usd },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.spent ?? usd);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  return chargeItem(hold.pk, hold.sk, usd);
}

/**
 * Writes every summed counter update and settlement this process holds (reads and the local server's
 * shutdown).
 */
export async function flushCounters(): Promise<void> {
  await Promise.all([flushSettles(), flushCounterUpdates()]);
}

/** Writes what `flushCounters` writes, then gives back every budget slice this process holds (shutdown). */
export async function closeCounters(): Promise<void> {
  await flushCounters();
  await endLeases();
}

function flushCounterUpdates(): Promise<void> {
  if (counterTimer) clearTimeout(counterTimer);
  counterTimer = undefined;
  const batch = [...pendingCounters.values()];
  pendingCounters = new Map();
  // After the flush before it: a reader that flushes must see everything added until then.
  counterFlush = counterFlush
    .catch(() => undefined)
    .then(() => Promise.all(batch.map(writeCounter)).then(() => undefined));
  return counterFlush;
}

function writeCounter({ key, add, set }: PendingCounter): Promise<unknown> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const adds: string[] = [];
  const sets: string[] = [];
  let i = 0;
  for (const [attribute, amount] of add) {
    names[`#a${i}`] = attribute;
    values[`:a${i}`] = amount;
    adds.push(`#a${i} :a${i}`);
    i++;
  }
  for (const [attribute, value] of Object.entries(set)) {
    names[`#s${i}`] = attribute;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
    i++;
  }
  return documentClient().send(
    new UpdateCommand({
      TableName: TABLE(),
      Key: key,
      UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', `ADD ${adds.join(', ')}`]
        .join(' ')
        .trim(),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
    { background: true },
  );
}

/** Adds to a counter item: at once on Lambda, summed with the other updates of the window locally. */
function addToCounter(
  key: { pk: string; sk: string },
  add: Record<string, number>,
  set: Record<string, unknown> = {},
): Promise<void> {
  const id = itemId(key);
  let pending = pendingCounters.get(id);
  if (!pending) {
    pending = { key, add: new Map(), set: {} };
    pendingCounters.set(id, pending);
  }
  for (const [attribute, amount] of Object.entries(add))
    pending.add.set(attribute, (pending.add.get(attribute) ?? 0) + amount);
  Object.assign(pending.set, set);
  const window = counterWindowMs();
  if (window === 0) return flushCounterUpdates();
  counterTimer ??= setTimeout(() => {
    flushCounterUpdates().catch((error: unknown) =>
      logger.error('counter update failed', { error: (error as Error).message }),
    );
  }, window);
  counterTimer.unref();
  return Promise.resolve();
}
const vkKey = (id: string) => `VK#${id}`;
const usersKey = (organisationId: string, workspace: string) => `USERS#${organisationId}#${workspace}`;

export class CounterStore {
  // Read on use: a store may be made at import, before the local runtime sets the DynamoDB endpoint.
  private get db() {
    return documentClient();
  }

  async putState(virtualKeyId: string, state: VirtualKeyState): Promise<void> {
    await this.db.send(
      new PutCommand({ TableName: TABLE(), Item: { pk: vkKey(virtualKeyId), sk: 'STATE', ...state } }),
    );
  }

  async deleteState(virtualKeyId: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: TABLE(), Key: { pk: vkKey(virtualKeyId), sk: 'STATE' } }),
    );
  }

  /**
   * The key's state and its spend in each period asked for, in one strongly consistent round trip: a
   * budget check must see every charge already made, and a raised limit or a deletion at once.
   */
  async readBudget(
    virtualKeyId: string,
    periods: string[],
  ): Promise<{ state: VirtualKeyState | undefined; spent: Record<string, number> }> {
    if (periods.length > 0) await flushCounters();
    const table = TABLE();
    const keys = [
      { pk: vkKey(virtualKeyId), sk: 'STATE' },
      ...periods.map((p) => ({ pk: vkKey(virtualKeyId), sk: `SPEND#${p}` })),
    ];
    let pending: Record<string, unknown>[] = keys;
    const items: Record<string, unknown>[] = [];
    // BatchGetItem may hand back unprocessed keys under load; ask again for those.
    for (let round = 0; pending.length > 0 && round < 5; round++) {
      const out = await this.db.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
      );
      items.push(...(out.Responses?.[table] ?? []));
      pending = out.UnprocessedKeys?.[table]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error('budget read left keys unprocessed');
    const spent: Record<string, number> = Object.fromEntries(periods.map((p) => [p, 0]));
    let state: VirtualKeyState | undefined;
    for (const item of items) {
      const sk = String(item.sk);
      if (sk === 'STATE') {
        state = {
          budget_limit: item.budget_limit == null ? null : Number(item.budget_limit),
          budget_period: item.budget_period === 'monthly' ? 'monthly' : 'none',
          budget_alert_threshold:
            item.budget_alert_threshold == null ? null : Number(item.budget_alert_threshold),
          requests_per_minute: item.requests_per_minute == null ? null : Number(item.requests_per_minute),
        };
      } else if (sk.startsWith('SPEND#')) {
        spent[sk.slice(6)] = Number(item.spent ?? 0);
      }
    }
    return { state, spent };
  }

  /**
   * Adds `usd` to a period's spend in one atomic ADD; returns the new total. `held` grows with it, so a
   * budget set later counts what was already spent.
   */
  async addSpend(virtualKeyId: string, period: string, usd: number): Promise<number> {
    const out = await this.db.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: vkKey(virtualKeyId), sk: `SPEND#${period}` },
        UpdateExpression: 'ADD spent :usd, held :usd',
        ExpressionAttributeValues: { ':usd': usd },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.spent ?? usd);
  }

  /**
   * Adds `usd` to a period's spend of a key without a budget, which nothing reads at once: summed with
   * the other charges of the flush window in the local server, written at once on Lambda.
   */
  addUnbudgetedSpend(virtualKeyId: string, period: string, usd: number): Promise<void> {
    return addToCounter({ pk: vkKey(virtualKeyId), sk: `SPEND#${period}` }, { spent: usd, held: usd });
  }

  /**
   * Counts one request in the current minute window unless the window already holds `limit`: one
   * conditional ADD, so concurrent callers can never push a window past its limit. False when refused.
   */
  async takeRate(virtualKeyId: string, windowStartSeconds: number, limit: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk: vkKey(virtualKeyId), sk: `RATE#${windowStartSeconds}` },
          UpdateExpression: 'ADD #count :one SET expires_at = :expires',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':expires': windowStartSeconds + 120 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Records a period's budget alert once; false when it was already recorded. */
  async putAlertOnce(virtualKeyId: string, alert: BudgetAlert): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: { pk: vkKey(virtualKeyId), sk: `ALERT#${alert.period}`, ...alert },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async listAlerts(virtualKeyId: string): Promise<BudgetAlert[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': vkKey(virtualKeyId), ':prefix': 'ALERT#' },
      }),
    );
    return (out.Items ?? []).map((item) => ({
      period: String(item.period),
      threshold_usd: Number(item.threshold_usd),
      spent: Number(item.spent),
      created_at: String(item.created_at),
    }));
  }

  /**
   * Reserves `usd` on a budget item unless `spent + reserved + usd` would pass `limit`: one conditional
   * update that adds to `held` (spent plus reservations) and records the reservation with its expiry.
   * When refused, reservations past their expiry are swept from the item and it is tried once more.
   */
  async reserve(
    pk: string,
    sk: string,
    requestId: string,
    usd: number,
    limit: number,
    expiresAtSeconds: number,
  ): Promise<BudgetHold | undefined> {
    if (!(usd <= limit)) return undefined;
    const lease = await takeFromLease(pk, sk, usd, limit);
    if (lease) return { pk, sk, attribute: lease.attribute, usd, lease };
    const hold: BudgetHold = { pk, sk, attribute: RESERVATION_PREFIX + requestId, usd };
    for (let round = 0; round < 2; round++) {
      try {
        // In DynamoDB's attribute format: on the request's path, this call skips the document conversion.
        await documentClient().send(
          new UpdateItemCommand({
            TableName: TABLE(),
            Key: { pk: { S: pk }, sk: { S: sk } },
            UpdateExpression: 'ADD held :usd SET #r = :entry',
            // No arithmetic in conditions: `held` already is spent plus reservations. A reservation of
            // nothing (an operation without a price bound) still needs room left.
            ConditionExpression:
              usd > 0
                ? 'attribute_not_exists(held) OR held <= :room'
                : 'attribute_not_exists(held) OR held < :room',
            ExpressionAttributeNames: { '#r': hold.attribute },
            ExpressionAttributeValues: {
              ':usd': { N: String(usd) },
              ':room': { N: String(round12(limit - usd)) },
              ':entry': { M: { usd: { N: String(usd) }, exp: { N: String(expiresAtSeconds) } } },
            },
          }),
        );
        return hold;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if (round > 0) return undefined;
        // Settlements of this item still waiting in this process may free the room: write them first.
        const settled = await flushSettles(itemId({ pk, sk }));
        if (!(await this.sweepExpired(pk, sk)) && !settled) return undefined;
      }
    }
    return undefined;
  }

  /** Gives a reservation back unused. Nothing to do when it already expired and was swept. */
  async release(hold: BudgetHold): Promise<void> {
    if (hold.lease) return releaseToLease(hold.lease, hold.usd);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk: hold.pk, sk: hold.sk },
          UpdateExpression: 'REMOVE #r ADD held :back',
          ConditionExpression: 'attribute_exists(#r)',
          ExpressionAttributeNames: { '#r': hold.attribute },
          ExpressionAttributeValues: { ':back': -hold.usd },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /**
   * Settles a reservation: removes it and adds the actual cost to the spend, in one update (shared with
   * the other settlements of its item that end within `GATEWAY_WRITE_BATCH_MS` in the local server).
   */
  settle(hold: BudgetHold, usd: number): Promise<Settled> {
    const leased = hold.lease && settleOnLease(hold.lease, hold.usd, usd);
    if (leased) return leased;
    const window = settleWindowMs();
    if (window === 0) return settleOne(hold, usd).then((spent) => ({ spent, charged: usd }));
    return new Promise((done, failed) => {
      const id = itemId(hold);
      const group = pendingSettles.get(id) ?? [];
      group.push({ hold, usd, done, failed });
      pendingSettles.set(id, group);
      settleTimer ??= setTimeout(() => {
        settleTimer = undefined;
        void flushSettles();
      }, window);
    });
  }

  /** Adds a cost that had no reservation (a realtime response) to spend and `held`; returns the new spend. */
  charge(pk: string, sk: string, usd: number): Promise<number> {
    return chargeItem(pk, sk, usd);
  }

  /** Removes the reservations past their expiry from `held`; true when it removed any. */
  private async sweepExpired(pk: string, sk: string): Promise<boolean> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk, sk }, ConsistentRead: true }),
    );
    const now = Date.now() / 1000;
    const expired = reservationsOf(out.Item).filter((r) => r.exp <= now);
    if (expired.length === 0) return false;
    const names: Record<string, string> = {};
    expired.forEach((r, i) => {
      names[`#r${i}`] = r.attribute;
    });
    const refs = Object.keys(names);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk, sk },
          UpdateExpression: `REMOVE ${refs.join(', ')} ADD held :back`,
          // Only if none was settled meanwhile: else its amount would be given back twice.
          ConditionExpression: refs.map((ref) => `attribute_exists(${ref})`).join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':back': -round12(expired.reduce((sum, r) => sum + r.usd, 0)) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return true;
      throw error;
    }
  }

  /** Spend and live (unexpired) reservations of budget items, read strongly. */
  async readBudgetItems(keys: Array<{ pk: string; sk: string }>): Promise<BudgetItemState[]> {
    await flushCounters();
    const now = Date.now() / 1000;
    return Promise.all(
      keys.map(async (key) => {
        const out = await this.db.send(
          new GetCommand({ TableName: TABLE(), Key: key, ConsistentRead: true }),
        );
        const live = reservationsOf(out.Item).filter((r) => r.exp > now);
        // This process's slice counts for what its requests in flight hold, as their reservations would.
        return {
          spent: Number(out.Item?.spent ?? 0),
          reserved: round12(live.reduce((sum, r) => sum + viewedReservation(key, r.attribute, r.usd), 0)),
        };
      }),
    );
  }

  /**
   * Adds `amount` to a minute window's counter unless it would pass `limit`; one conditional ADD, so
   * concurrent callers never push a window past its limit. Returns the new count, or undefined when refused.
   */
  async takeWindow(
    pk: string,
    sk: string,
    amount: number,
    limit: number,
    expiresAtSeconds: number,
  ): Promise<number | undefined> {
    if (amount > limit) return undefined;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk, sk },
          UpdateExpression: 'ADD #count :n SET expires_at = :expires',
          ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':n': amount, ':room': limit - amount, ':expires': expiresAtSeconds },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(out.Attributes?.count ?? amount);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /** A minute window's count (0 when nothing was counted). */
  async readWindow(pk: string, sk: string): Promise<number> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: { pk, sk }, ConsistentRead: true }),
    );
    return Number(out.Item?.count ?? 0);
  }

  /** Corrects a minute window by `delta` (a refusal given back, or estimated tokens settled to actual). */
  async adjustWindow(pk: string, sk: string, delta: number): Promise<void> {
    if (delta === 0) return;
    await this.db.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk, sk },
        UpdateExpression: 'ADD #count :n',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':n': delta },
      }),
    );
  }

  /** Records a budget alert of any holder once per threshold and period; false when already recorded. */
  async putHolderAlertOnce(pk: string, key: string, alert: Record<string, unknown>): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: { pk, sk: `ALERT#${key}`, ...alert },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Adds one request's usage to its user's counters for the day (summed per flush window locally). */
  addUserUsage(
    organisationId: string,
    workspace: string,
    day: string,
    user: string,
    usage: { cost: number; prompt_tokens: number; completion_tokens: number },
  ): Promise<void> {
    return addToCounter(
      { pk: usersKey(organisationId, workspace), sk: `${day}#${user}` },
      {
        requests: 1,
        cost: usage.cost,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
      },
      { user, day },
    );
  }

  /** Every user-day counter of a workspace between two days (inclusive, `yyyy-mm-dd`). */
  async listUserUsage(
    organisationId: string,
    workspace: string,
    fromDay: string,
    toDay: string,
  ): Promise<UserDayUsage[]> {
    await flushCounters();
    const rows: UserDayUsage[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: TABLE(),
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: {
            ':pk': usersKey(organisationId, workspace),
            ':low': `${fromDay}#`,
            // The highest code point sorts after any user id, which closes the last day.
            ':high': `${toDay}#\u{10ffff}`,
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) {
        rows.push({
          user: String(item.user),
          day: String(item.day),
          requests: Number(item.requests ?? 0),
          cost: Number(item.cost ?? 0),
          prompt_tokens: Number(item.prompt_tokens ?? 0),
          completion_tokens: Number(item.completion_tokens ?? 0),
        });
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return rows;
  }
}

function reservationsOf(
  item: Record<string, unknown> | undefined,
): Array<{ attribute: string; usd: number; exp: number }> {
  if (!item) return [];
  const out: Array<{ attribute: string; usd: number; exp: number }> = [];
  for (const [attribute, value] of Object.entries(item)) {
    if (!attribute.startsWith(RESERVATION_PREFIX) || !value || typeof value !== 'object') continue;
    const r = value as { usd?: unknown; exp?: unknown };
    out.push({ attribute, usd: Number(r.usd ?? 0), exp: Number(r.exp ?? 0) });
  }
  return out;
}
