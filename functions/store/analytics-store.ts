import { createHash } from 'node:crypto';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LATENCY_BOUNDS_MS, latencyBucket } from '../core/latency-histogram';
import type { LogEntry } from '../core/log-entry';
import { logger } from '../core/logger';
import { settings } from '../core/settings';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';
import { statusClass } from './log-store';

// Usage aggregates: per hour and per day, per workspace and per value of each dimension, one counter item
// updated with a single ADD per logged request, so analytics read a few items per bucket, never log rows.
// Items are write-sharded like the logs (a random shard per write): no counter takes more than its share
// of a busy workspace's writes. Readers sum the shards.

export const DIMENSIONS = ['user', 'model', 'provider', 'virtual_key', 'api_key', 'status_class'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export type Interval = 'hour' | 'day';

// Hourly counters are kept 90 days, daily ones about 13 months.
const KEEP_SECONDS: Record<Interval, number> = { hour: 90 * 86_400, day: 400 * 86_400 };
const BUCKET_CHARS: Record<Interval, number> = { hour: 13, day: 10 };
// A value past this many bytes is keyed by its hash; the item keeps its first characters to show.
const KEY_VALUE_BYTES = 512;

const histogramAttribute = (i: number) => `h${String(i).padStart(2, '0')}`;

/** The start of the bucket a time falls in, as the key text: `2026-11-23T04` or `2026-11-23`. */
export const bucketOf = (ms: number, interval: Interval) =>
  new Date(ms).toISOString().slice(0, BUCKET_CHARS[interval]);

/** What one entry contributes to each dimension: null where the entry has no value. */
export function dimensionValues(entry: LogEntry): Record<Dimension, string | null> {
  return {
    user: entry.user,
    model: entry.model,
    provider: entry.provider,
    virtual_key: entry.virtual_key,
    api_key: entry.auth.key_id ?? null,
    status_class: statusClass(entry.status),
  };
}

const keyValue = (value: string | null) =>
  value === null
    ? ''
    : Buffer.byteLength(value) <= KEY_VALUE_BYTES
      ? value
      : `sha256:${createHash('sha256').update(value).digest('hex')}`;
/** Pending increments: by workspace, interval and bucket; then by dimension; then by value. */
type PendingIncrements = Map<string, Map<string, Map<string, Increment>>>;

const INTERVALS = ['hour', 'day'] as const;
/** Each aggregate an entry adds to: all requests, then one per dimension. */
const ALL_DIMENSIONS = ['all', ...DIMENSIONS] as const;

function increments(pending: PendingIncrements): Increment[] {
  const all: Increment[] = [];
  for (const group of pending.values()) {
    for (const byValue of group.values()) for (const inc of byValue.values()) all.push(inc);
  }
  return all;
}

/**
 * The bucket of a time (`bucketOf`), kept for the hour of the last one asked: consecutive entries fall in
 * the same hour and day, so their buckets are not formatted again for each.
 */
class BucketNames {
  private hour = Number.NaN;
  private names: Record<Interval, string> = { hour: '', day: '' };

  of(ms: number, interval: Interval): string {
    const hour = Math.floor(ms / 3_600_000);
    if (hour !== this.hour) {
      this.hour = hour;
      this.names = { hour: bucketOf(ms, 'hour'), day: bucketOf(ms, 'day') };
    }
    return this.names[interval];
  }
}

const partition = (
  organisationId: string,
  workspace: string,
  interval: Interval,
  dimension: string,
  shard: number,
) => `AN#${organisationId}#${workspace}#${interval}#${dimension}#${shard}`;

export interface UsageBucket {
  bucket: string;
  /** The dimension's value; null for entries without one, and when not grouped. */
  group: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  errors: number;
  latency_sum_ms: number;
  histogram: number[];
}

/** What a batch of requests adds to one counter item. */
interface Increment {
  organisationId: string;
  workspace: string;
  interval: Interval;
  dimension: string;
  bucket: string;
  value: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  errors: number;
  latency_sum_ms: number;
  histogram: Map<number, number>;
}

export interface UsageQuery {
  organisationId: string;
  workspaces: string[];
  interval: Interval;
  groupBy?: Dimension;
  fromMs: number;
  toMs: number;
}

// Every store of this process, so that a read or a shutdown can first send what any of them holds.
const stores = new Set<AnalyticsStore>();

/** Sends every increment this process still holds (the local server calls it before it stops). */
export async function flushAnalytics(): Promise<void> {
  await Promise.all([...stores].map((s) => s.flush()));
}

export class AnalyticsStore {
  private readonly db = documentClient();
  /**
   * How long increments gather before they are written. 0 (Lambda): each request's counters are written
   * before its invocation ends. The local server sets `GATEWAY_AGGREGATE_FLUSH_MS` (1 s): a busy process
   * then writes one ADD per counter a second instead of about fourteen writes per request, and reads and
   * shutdown flush first, so nothing is lost or missed. Read per store, when it is made.
   */
  private readonly windowMs = settings().aggregateFlushMs;
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    stores.add(this);
  }

  /**
   * Increments not yet sent, one per counter item, by workspace, interval and bucket, then dimension, then
   * value: requests that end together share one write per item.
   */
  private pending: PendingIncrements = new Map();
  private readonly buckets = new BucketNames();
  private nextFlush: Promise<void> | undefined;
  private lastFlush: Promise<void> = Promise.resolve();

  /**
   * Adds one logged request to its hour and day counters, overall and per dimension; resolves once they
   * are written. Requests served at the same time by one process (the local server) share one ADD per
   * counter; a Lambda environment serves one at a time, so there it is one ADD per counter per request.
   */
  record(entry: LogEntry): Promise<void> {
    const at = Date.parse(entry.timestamp);
    const values = dimensionValues(entry);
    const dimensions = ALL_DIMENSIONS.map((dimension) => {
      const value = dimension === 'all' ? null : values[dimension];
      return { dimension, value, keyed: keyValue(value) };
    });
    // What the entry adds, worked out once for its fourteen aggregates.
    const promptTokens = entry.usage?.prompt_tokens ?? 0;
    const completionTokens = entry.usage?.completion_tokens ?? 0;
    const cost = typeof entry.cost === 'number' && Number.isFinite(entry.cost) ? entry.cost : 0;
    const errors = entry.status >= 400 ? 1 : 0;
    const h = latencyBucket(entry.latency_ms);
    for (const interval of INTERVALS) {
      const bucket = this.buckets.of(at, interval);
      const groupKey = `${entry.organisation_id}\u0000${entry.workspace}\u0000${interval}\u0000${bucket}`;
      let group = this.pending.get(groupKey);
      if (!group) {
        group = new Map();
        this.pending.set(groupKey, group);
      }
      for (const { dimension, value, keyed } of dimensions) {
        let byValue = group.get(dimension);
        if (!byValue) {
          byValue = new Map();
          group.set(dimension, byValue);
        }
        let inc = byValue.get(keyed);
        if (!inc) {
          inc = {
            organisationId: entry.organisation_id,
            workspace: entry.workspace,
            interval,
            dimension,
            bucket,
            value,
            requests: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            cost: 0,
            errors: 0,
            latency_sum_ms: 0,
            histogram: new Map(),
          };
          byValue.set(keyed, inc);
        }
        inc.requests += 1;
        inc.prompt_tokens += promptTokens;
        inc.completion_tokens += completionTokens;
        inc.cost += cost;
        inc.errors += errors;
        inc.latency_sum_ms += entry.latency_ms;
        inc.histogram.set(h, (inc.histogram.get(h) ?? 0) + 1);
      }
    }
    if (this.windowMs > 0) {
      // Written within the window; the request does not wait for it.
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flush().catch((error: unknown) =>
          logger.error('usage aggregates update failed', { error: (error as Error).message }),
        );
      }, this.windowMs);
      this.timer.unref();
      return Promise.resolve();
    }
    return this.flush();
  }

  /** Writes what is pending. One flush at a time; increments arriving meanwhile wait for the next one. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // A group is only made with the increments of the entry that made it: no group, nothing pending.
    if (this.pending.size === 0) return this.nextFlush ?? this.lastFlush.catch(() => undefined);
    this.nextFlush ??= this.lastFlush
      .catch(() => undefined)
      .then(async () => {
        const batch = this.pending;
        this.pending = new Map();
        this.nextFlush = undefined;
        this.lastFlush = this.write(increments(batch));
        await this.lastFlush;
      });
    return this.nextFlush;
  }

  private async write(increments: Increment[]): Promise<void> {
    // Any shard will do: readers sum them all. A random one spreads a busy workspace's writes.
    const shard = Math.floor(Math.random() * settings().logShards);
    await Promise.all(
      increments.map((inc) => {
        const names: Record<string, string> = { '#value': 'value' };
        const values: Record<string, unknown> = {
          ':value': inc.value === null ? null : inc.value.slice(0, 256),
          ':exp': nowEpochSeconds() + KEEP_SECONDS[inc.interval],
          ':requests': inc.requests,
          ':in': inc.prompt_tokens,
          ':out': inc.completion_tokens,
          ':cost': inc.cost,
          ':err': inc.errors,
          ':lat': inc.latency_sum_ms,
        };
        const adds = [
          'requests :requests',
          'prompt_tokens :in',
          'completion_tokens :out',
          'cost :cost',
          'errors :err',
          'latency_sum_ms :lat',
        ];
        for (const [bucket, n] of inc.histogram) {
          names[`#h${bucket}`] = histogramAttribute(bucket);
          values[`:h${bucket}`] = n;
          adds.push(`#h${bucket} :h${bucket}`);
        }
        return this.db.send(
          new UpdateCommand({
            TableName: tableName('counters'),
            Key: {
              pk: partition(inc.organisationId, inc.workspace, inc.interval, inc.dimension, shard),
              sk: `${inc.bucket}#${keyValue(inc.value)}`,
            },
            UpdateExpression: `SET #value = :value, expires_at = :exp ADD ${adds.join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
          { background: true },
        );
      }),
    );
  }

  /** The counters of every bucket from `fromMs` to `toMs`, shards and workspaces summed, oldest first. */
  async read(query: UsageQuery): Promise<UsageBucket[]> {
    // What this process served is in the counters before they are read.
    await flushAnalytics();
    const dimension = query.groupBy ?? 'all';
    const low = bucketOf(query.fromMs, query.interval);
    const high = `${bucketOf(query.toMs, query.interval)}#\uffff`;
    const reads: Promise<Record<string, unknown>[]>[] = [];
    for (const workspace of query.workspaces) {
      for (let shard = 0; shard < settings().logShards; shard++) {
        reads.push(
          this.queryAll(
            partition(query.organisationId, workspace, query.interval, dimension, shard),
            low,
            high,
          ),
        );
      }
    }
    const sums = new Map<string, UsageBucket>();
    for (const item of (await Promise.all(reads)).flat()) {
      const sk = String(item.sk);
      const bucket = sk.slice(0, BUCKET_CHARS[query.interval]);
      const key = sk.slice(BUCKET_CHARS[query.interval] + 1);
      const id = `${bucket}#${key}`;
      let sum = sums.get(id);
      if (!sum) {
        sum = {
          bucket,
          group: dimension === 'all' ? null : ((item.value as string | null | undefined) ?? null),
          requests: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          cost: 0,
          errors: 0,
          latency_sum_ms: 0,
          histogram: LATENCY_BOUNDS_MS.map(() => 0).concat(0),
        };
        sums.set(id, sum);
      }
      sum.requests += num(item.requests);
      sum.prompt_tokens += num(item.prompt_tokens);
      sum.completion_tokens += num(item.completion_tokens);
      sum.cost += num(item.cost);
      sum.errors += num(item.errors);
      sum.latency_sum_ms += num(item.latency_sum_ms);
      sum.histogram = sum.histogram.map((n, i) => n + num(item[histogramAttribute(i)]));
    }
    return [...sums.values()].sort((a, b) =>
      a.bucket === b.bucket ? (a.group ?? '').localeCompare(b.group ?? '') : a.bucket < b.bucket ? -1 : 1,
    );
  }

  private async queryAll(pk: string, low: string, high: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: tableName('counters'),
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: { ':pk': pk, ':low': low, ':high': high },
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(out.Items ?? []));
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return items;
  }
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
