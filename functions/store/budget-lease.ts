import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { round12 } from '../core/prices';
import { settings } from '../core/settings';
import { isConditionFailure } from './control-store';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';

// Budget leases (`GATEWAY_BUDGET_LEASE`, on in the local server): a process reserves a slice of a budget
// item once, as one reservation on the item (`r_lease_<process>_<n>`: `usd`, `exp`), and takes its
// requests' reservations from the slice in memory, with no call to the table. Their settlements are written
// together as spend moved out of the slice. The item's `held` still counts the whole slice, so what all
// processes hold never passes the limit. When the slice cannot grow (the budget is nearly spent), it gives
// back what its requests do not hold and reservations go to the item one by one again, as without leases.

/** What one settlement on a lease resolves with: the spend after its write, and what that write added. */
export interface LeaseSettled {
  spent: number;
  charged: number;
}

interface Charge {
  usd: number;
  done: (settled: LeaseSettled) => void;
  failed: (error: Error) => void;
}

/** A slice of one budget item this process holds. */
export class BudgetLease {
  /** USD the item's lease attribute holds (what `held` counts for it), as far as this process has written. */
  size = 0;
  /** Reservations of requests in flight taken from the slice. */
  inFlight = 0;
  /** Settled costs not written yet. */
  unwritten = 0;
  expiresAt = 0;
  /** The limit the slice was granted under: another limit gives the slice back first. */
  limit: number | undefined;
  written = false;
  /** Swept for its expiry by someone else, or given back: its holds settle on the item itself. */
  gone = false;
  /** Until then (ms) the slice does not grow: the last grant was refused. */
  tightUntil = 0;
  lastUsed = Date.now();
  charges: Charge[] = [];
  /** Writes of one lease run one after another, so each computes its amounts from settled state. */
  writing: Promise<unknown> = Promise.resolve();

  constructor(
    readonly pk: string,
    readonly sk: string,
    readonly attribute: string,
  ) {}

  get available(): number {
    return round12(this.size - this.inFlight - this.unwritten);
  }

  /** Whether a reservation of `usd` under `limit` can come from the slice as it is, in memory. */
  serves(usd: number, limit: number): boolean {
    // A slice renewed less than half its expiry ago; an older one grows (and is renewed) first.
    const fresh = this.expiresAt - nowEpochSeconds() > settings().reservationTtlSeconds / 2;
    return this.written && !this.gone && fresh && this.limit === limit && this.available >= usd;
  }
}

const leases = new Map<string, BudgetLease>();
// Unique per process and lease: a slice is never re-created under a name a stale hold still refers to.
const PROCESS_TOKEN = Math.random().toString(36).slice(2, 10);
let leaseCount = 0;
let flushTimer: NodeJS.Timeout | undefined;
let idleTimer: NodeJS.Timeout | undefined;

/** How long a refused grant keeps the slice from growing, and how long an unused slice is kept. */
const TIGHT_MS = 1_000;
const IDLE_MS = 2_000;
/** A slice grows to hold this share of the limit at most (and one request's reservation at least). */
const LIMIT_SHARE = 0.1;

const TABLE = () => tableName('counters');
/** One budget item, as the maps of pending writes and slices key it. */
export const itemId = (key: { pk: string; sk: string }) => `${key.pk}\u0000${key.sk}`;

/** How many of a request's reservations a slice holds; 0 turns leases off. */
function leaseSize(): number {
  const s = settings();
  // A slice must outlive the writes that renew it; tests make reservations that expire at once.
  return s.reservationTtlSeconds >= 60 ? s.budgetLease : 0;
}

/**
 * Takes a reservation of `usd` from this process's slice of the budget item, growing the slice when it
 * is short; undefined when the caller must reserve on the item itself (leases off, a reservation of
 * nothing, or a budget too nearly spent for the slice to grow).
 */
export async function takeFromLease(
  pk: string,
  sk: string,
  usd: number,
  limit: number,
): Promise<BudgetLease | undefined> {
  const perLease = leaseSize();
  if (perLease === 0 || !(usd > 0)) return undefined;
  const id = itemId({ pk, sk });
  for (let round = 0; round < 4; round++) {
    let lease = leases.get(id);
    if (!lease || lease.gone) {
      lease = new BudgetLease(pk, sk, `r_lease_${PROCESS_TOKEN}_${++leaseCount}`);
      leases.set(id, lease);
      idleTimer ??= setInterval(endIdleLeases, IDLE_MS).unref();
    }
    lease.lastUsed = Date.now();
    if (lease.serves(usd, limit)) {
      lease.inFlight = round12(lease.inFlight + usd);
      return lease;
    }
    if (Date.now() < lease.tightUntil) break;
    // A limit changed since the grant: what the slice holds beyond its requests goes back first.
    if (lease.limit !== undefined && lease.limit !== limit) await writeLease(lease, 'shrink');
    if (!(await grow(lease, usd, limit, perLease))) {
      lease.tightUntil = Date.now() + TIGHT_MS;
      break;
    }
  }
  // The caller reserves on the item: the room this slice holds beyond its requests must be free for that.
  const lease = leases.get(id);
  if (lease && !lease.gone) await writeLease(lease, 'shrink');
  return undefined;
}

/** Gives back a reservation taken from a slice, unused. */
export function releaseToLease(lease: BudgetLease, usd: number): void {
  if (!lease.gone) lease.inFlight = round12(lease.inFlight - usd);
}

/**
 * Settles a reservation taken from a slice: the actual cost is written with the slice's other
 * settlements of the next `GATEWAY_WRITE_BATCH_MS`. Undefined when the slice is gone (swept for its
 * expiry): the caller then charges the item itself.
 */
export function settleOnLease(
  lease: BudgetLease,
  reserved: number,
  usd: number,
): Promise<LeaseSettled> | undefined {
  if (lease.gone) return undefined;
  lease.inFlight = round12(lease.inFlight - reserved);
  lease.unwritten = round12(lease.unwritten + usd);
  lease.lastUsed = Date.now();
  return new Promise((done, failed) => {
    lease.charges.push({ usd, done, failed });
    const window = settings().writeBatchMs;
    if (window === 0) void writeLease(lease, 'spend');
    else flushTimer ??= setTimeout(() => void flushLeases(), window);
  });
}

/**
 * What a reservation attribute of a budget item holds for the views: for this process's slice, what its
 * requests in flight hold; for any other, what the item shows.
 */
export function viewedReservation(key: { pk: string; sk: string }, attribute: string, shown: number): number {
  const lease = leases.get(itemId(key));
  return lease?.attribute === attribute ? Math.min(shown, Math.max(0, lease.inFlight)) : shown;
}

/** Writes the settlements waiting on every slice (or on one item's, by `itemId`); true when there were any. */
export async function flushLeases(only?: string): Promise<boolean> {
  if (only === undefined && flushTimer) {
    clearTimeout(flushTimer);
    flushTimer = undefined;
  }
  const waiting = [...leases.entries()]
    .filter(([id, lease]) => (only === undefined || id === only) && lease.charges.length > 0)
    .map(([, lease]) => lease);
  await Promise.all(waiting.map((lease) => writeLease(lease, 'spend')));
  return waiting.length > 0;
}

/** Writes every slice's settlements and gives every slice back (shutdown). */
export async function endLeases(): Promise<void> {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = undefined;
  if (idleTimer) clearInterval(idleTimer);
  idleTimer = undefined;
  await Promise.all([...leases.values()].map((lease) => writeLease(lease, 'end')));
}

function endIdleLeases(): void {
  const before = Date.now() - IDLE_MS;
  for (const lease of leases.values()) {
    if (lease.lastUsed < before && lease.inFlight <= 0) void writeLease(lease, 'end').catch(() => undefined);
  }
  if (leases.size === 0 && idleTimer) {
    clearInterval(idleTimer);
    idleTimer = undefined;
  }
}

/** Grows the slice so it holds at least `usd` beyond its requests; false when the item has no room. */
function grow(lease: BudgetLease, usd: number, limit: number, perLease: number): Promise<boolean> {
  const run = async (): Promise<boolean> => {
    if (lease.gone) return false;
    // Another request's grant may have made room meanwhile.
    if (lease.serves(usd, limit)) return true;
    const want = Math.max(usd, Math.min(usd * perLease, limit * LIMIT_SHARE));
    const grant = round12(Math.max(0, want - lease.available));
    const room = round12(limit - grant);
    if (room < 0) return false;
    const exp = nowEpochSeconds() + settings().reservationTtlSeconds;
    const names = { '#l': lease.attribute };
    try {
      await documentClient().send(
        new UpdateCommand(
          lease.written
            ? {
                TableName: TABLE(),
                Key: { pk: lease.pk, sk: lease.sk },
                UpdateExpression: 'SET #l.usd = #l.usd + :g, #l.exp = :exp ADD held :g',
                ConditionExpression: 'attribute_exists(#l) AND held <= :room',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: { ':g': grant, ':exp': exp, ':room': room },
              }
            : {
                TableName: TABLE(),
                Key: { pk: lease.pk, sk: lease.sk },
                UpdateExpression: 'SET #l = :entry ADD held :g',
                ConditionExpression:
                  'attribute_not_exists(#l) AND (attribute_not_exists(held) OR held <= :room)',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: { ':g': grant, ':room': room, ':entry': { usd: grant, exp } },
              },
        ),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    lease.size = round12(lease.size + grant);
    lease.written = true;
    lease.expiresAt = exp;
    lease.limit = limit;
    return true;
  };
  const next = lease.writing.then(run, run);
  lease.writing = next.catch(() => undefined);
  return next;
}

/**
 * One write of a slice: its waiting settlements as spend moved out of the slice (`spend`); with them,
 * what the slice holds beyond its requests given back (`shrink`), or the whole slice once no request
 * holds any of it (`end`). A slice found swept charges its settlements to the item itself.
 */
function writeLease(lease: BudgetLease, mode: 'spend' | 'shrink' | 'end'): Promise<void> {
  const run = async (): Promise<void> => {
    if (!lease.written && lease.charges.length === 0) {
      if (mode === 'end') forget(lease);
      return;
    }
    const charges = lease.charges.splice(0);
    const spend = round12(charges.reduce((sum, c) => sum + c.usd, 0));
    lease.unwritten = round12(lease.unwritten - spend);
    const ending = mode === 'end' && lease.inFlight <= 0 && lease.unwritten <= 0;
    if (ending) forget(lease);
    // The slice keeps at least what its requests in flight hold: a cost past what the slice held (a
    // reply dearer than its reservation) grows `held` by the difference, as a settlement on the item does.
    const kept = round12(lease.size - spend);
    const inFlight = Math.max(0, lease.inFlight);
    const size = ending ? 0 : mode === 'spend' ? Math.max(kept, inFlight) : inFlight;
    const out = round12(lease.size - size);
    const heldBy = round12(spend - out);
    if (charges.length === 0 && out === 0 && !ending) return;
    lease.size = size;
    const exp = nowEpochSeconds() + settings().reservationTtlSeconds;
    // `spent` is added even when the settlements cost nothing: the write then answers the period's spend.
    const adds = [...(charges.length > 0 ? ['spent :s'] : []), ...(heldBy !== 0 ? ['held :h'] : [])];
    const values: Record<string, number> = {};
    if (charges.length > 0) values[':s'] = spend;
    if (heldBy !== 0) values[':h'] = heldBy;
    if (!ending) Object.assign(values, { ':out': out, ':exp': exp });
    const change = ending ? 'REMOVE #l' : 'SET #l.usd = #l.usd - :out, #l.exp = :exp';
    const db = documentClient();
    try {
      const out = await db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk: lease.pk, sk: lease.sk },
          UpdateExpression: adds.length > 0 ? `${change} ADD ${adds.join(', ')}` : change,
          ConditionExpression: 'attribute_exists(#l)',
          ExpressionAttributeNames: { '#l': lease.attribute },
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      if (!ending) lease.expiresAt = exp;
      for (const c of charges) c.done({ spent: Number(out.Attributes?.spent ?? spend), charged: spend });
    } catch (error) {
      if (!isConditionFailure(error)) {
        for (const c of charges) c.failed(error as Error);
        return;
      }
      // Swept for its expiry: the slice no longer holds anything, so its settlements are charged as such.
      forget(lease);
      if (charges.length === 0) return;
      try {
        const spent = await chargeItem(lease.pk, lease.sk, spend);
        for (const c of charges) c.done({ spent, charged: spend });
      } catch (chargeError) {
        for (const c of charges) c.failed(chargeError as Error);
      }
    }
  };
  const next = lease.writing.then(run, run);
  lease.writing = next.catch(() => undefined);
  return next;
}

/**
 * Adds a cost that no reservation holds to a budget item's spend and `held` (a settlement whose
 * reservation or slice was swept, a realtime response); returns the new spend.
 */
export async function chargeItem(pk: string, sk: string, usd: number): Promise<number> {
  const out = await documentClient().send(
    new UpdateCommand({
      TableName: TABLE(),
      Key: { pk, sk },
      UpdateExpression: 'ADD held :usd, spent :usd',
      ExpressionAttributeValues: { ':usd': usd },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.spent ?? usd);
}

function forget(lease: BudgetLease): void {
  lease.gone = true;
  const id = itemId(lease);
  if (leases.get(id) === lease) leases.delete(id);
}
