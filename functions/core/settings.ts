// The gateway's configuration: every environment variable the functions read, parsed and checked in one
// place. The process holds one current `Settings`: loaded from `process.env` on first use (on Lambda that
// is during the function's init), and loaded again by the local server at each start. Modules read it
// through `settings()` when they use a value, or take the value as a parameter that defaults to it.

export type Environment = Readonly<Record<string, string | undefined>>;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LocalLogLevel = (typeof LOG_LEVELS)[number];

export interface Settings {
  // Where and how the functions run.
  /** `GATEWAY_LOCAL=1`: the local runtime (plain HTTP on loopback for a JWKS, the local management API). */
  local: boolean;
  /** On Lambda or ECS (and not the local runtime): the outbound guard keeps its strict rules. */
  onAws: boolean;
  /** `AWS_REGION`: the default Bedrock region. */
  awsRegion: string | undefined;
  /** `POWERTOOLS_SERVICE_NAME`: the service of logs and metrics. */
  serviceName: string;
  /**
   * `AWS_LAMBDA_MAX_CONCURRENCY` set: the runtime runs invocations side by side, each in an invoke-store
   * scope of its own (Lambda Managed Instances; the local server sets it).
   */
  concurrentInvocations: boolean;

  // The local server (local/server.ts).
  /** `PORT` */
  port: number;
  /** `HOST` */
  host: string;
  /** `GATEWAY_LOG_LEVEL` */
  logLevel: LocalLogLevel;
  /** `GATEWAY_ADMIN_KEY`: the organisation admin key to create on first start. */
  adminKey: string | undefined;
  /** `GATEWAY_DATA_DIR` */
  dataDir: string;
  /**
   * `GATEWAY_STORE_NICE`: the priority (a nice value, 0 to 19) of the embedded DynamoDB's thread, below
   * the request path's; 0 leaves it equal. Linux only.
   */
  storeNice: number;
  /**
   * `GATEWAY_ASYNC_CONTEXT_FRAME`: `0` keeps `npm start` on Node 22 as started, without its restart with
   * the cheaper AsyncLocalStorage (local/async-context-frame.ts). On otherwise.
   */
  asyncContextFrame: boolean;
  /** `GATEWAY_DASHBOARD_DIR`: the built dashboard, else the `dashboard/` folder beside the bundle. */
  dashboardDir: string | undefined;

  // Stores.
  /** `DYNAMODB_ENDPOINT` */
  dynamodbEndpoint: string | undefined;
  /** Table names by variable (`TABLE_CONTROL`, `TABLE_LOGS`, ...), as the stack or local runtime sets them. */
  tables: Readonly<Record<string, string>>;
  /** `BLOB_BUCKET`: S3 for large bodies; files under the data dir without it. */
  blobBucket: string | undefined;
  /** `GATEWAY_SECRET_PREFIX`: Secrets Manager for credentials; files under the data dir without it. */
  secretPrefix: string | undefined;
  /** `GATEWAY_SECRET_CACHE_TTL_MS` */
  secretCacheTtlMs: number;
  /** `GATEWAY_LOG_RETENTION_DAYS` */
  logRetentionDays: number;
  /**
   * `GATEWAY_LOG_SHARDS`: write shards per partition and index key of the logs and usage aggregates;
   * raising it keeps every entry readable, lowering it does not.
   */
  logShards: number;
  /** `GATEWAY_LOG_READ_BUDGET`: items one list page may read (before filters) before it hands back a cursor. */
  logReadBudget: number;
  /**
   * `GATEWAY_AGGREGATE_FLUSH_MS`: how long usage aggregates, per-user usage and the spend of keys without a
   * budget gather before one write per counter; 0 on Lambda.
   */
  aggregateFlushMs: number;
  /** `GATEWAY_WRITE_BATCH_MS`: how long log entries and budget settlements gather; 0 on Lambda. */
  writeBatchMs: number;
  /** `GATEWAY_STAGE_TIMING`: `1` times each stage of the request path (the bench). */
  stageTiming: boolean;
  /** `GATEWAY_LOG_EXPORT_STREAM`: the Firehose stream of the log export. */
  logExportStream: string;

  // Requests and streams.
  /** `GATEWAY_MAX_BODY_BYTES` */
  maxBodyBytes: number;
  /** `GATEWAY_UPSTREAM_TIMEOUT_MS` */
  upstreamTimeoutMs: number;
  /** `GATEWAY_RETRY_BASE_MS` */
  retryBaseMs: number;
  /** `GATEWAY_RETRY_MAX_DELAY_MS` */
  retryMaxDelayMs: number;
  /** `GATEWAY_STREAM_PADDING_BYTES`, at most 65,536. */
  streamPaddingBytes: number;
  /** `GATEWAY_SSE_KEEPALIVE_MS`; 0 turns it off. */
  sseKeepAliveMs: number;
  /** `GATEWAY_ABANDONED_STREAM_DRAIN_MS`; 0 charges the estimate at once. */
  abandonedStreamDrainMs: number;
  /** `GATEWAY_RESERVATION_TTL_SECONDS` */
  reservationTtlSeconds: number;
  /**
   * `GATEWAY_BUDGET_LEASE`: how many of a request's maximum cost one process reserves on a budget at once
   * and hands out in memory (store/budget-lease.ts); 0 (Lambda) reserves each request on the item.
   */
  budgetLease: number;
  /** `GATEWAY_ALLOW_PRIVATE_HOSTS`: unset keeps the runtime's default. */
  allowPrivateHosts: boolean | undefined;

  // Caches per container.
  /** `GATEWAY_AUTH_CACHE_TTL_MS` */
  authCacheTtlMs: number;
  /** `GATEWAY_CONFIG_CACHE_TTL_MS` */
  configCacheTtlMs: number;
  /** `GATEWAY_POLICY_CACHE_TTL_MS` */
  policyCacheTtlMs: number;
  /** `GATEWAY_VIRTUAL_KEY_CACHE_TTL_MS` */
  virtualKeyCacheTtlMs: number;
  /** `GATEWAY_JWKS_CACHE_TTL_MS` */
  jwksCacheTtlMs: number;
  /** `GATEWAY_JWKS_BACKOFF_MS` */
  jwksBackoffMs: number;

  // Pricing.
  /** `GATEWAY_PRICING_FILE` */
  pricingFile: string | undefined;
  /** `GATEWAY_PRICING_URL` */
  pricingUrl: string | undefined;
  /** `GATEWAY_PRICING_TIMEOUT_MS` */
  pricingTimeoutMs: number;

  // Set by the stack.
  /** `GATEWAY_ADMIN_KEY_SECRET_ARN`: the generated admin key, bootstrapped on first use. */
  adminKeySecretArn: string | undefined;
  /** `GATEWAY_RECOVER_ADMIN_KEY=1`: create the admin key again after every one was deleted. */
  recoverAdminKey: boolean;
  /** `GATEWAY_ORIGIN_SECRET` (and `GATEWAY_ORIGIN_SECRET_PREVIOUS` during a rotation) */
  originSecret: string | undefined;
  originSecretPrevious: string | undefined;
  /** `GATEWAY_ORIGIN_SECRET_ARN`: the origin secret in Secrets Manager. */
  originSecretArn: string | undefined;
  /** `GATEWAY_ALERT_TOPIC_ARN`: the SNS topic of budget alerts. */
  alertTopicArn: string | undefined;

  // Realtime.
  /** `GATEWAY_REALTIME_MANAGEMENT_URL` */
  realtimeManagementUrl: string | undefined;
  /** `GATEWAY_REALTIME_RELAY_FUNCTION` */
  realtimeRelayFunction: string | undefined;
  /** `GATEWAY_REALTIME_QUEUE_URL_BASE` */
  realtimeQueueUrlBase: string | undefined;
  /** `GATEWAY_REALTIME_QUEUE_PREFIX` */
  realtimeQueuePrefix: string;
  /** `GATEWAY_REALTIME_SESSION_LIMIT_MS` */
  realtimeSessionLimitMs: number;
  /** `GATEWAY_REALTIME_LOG_INTERVAL_MS` */
  realtimeLogIntervalMs: number;
}

/** Every variable that is not a valid value, named in one message, thrown at load (a failed cold start). */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'SettingsError';
  }
}

interface NumberRule {
  min?: number;
  max?: number;
}

/** Reads variables, gathering every problem instead of stopping at the first. Empty means unset. */
class EnvironmentReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Environment) {}

  text(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  /** `1` turns it on; anything else leaves it off. */
  flag(name: string): boolean {
    return this.text(name)?.trim() === '1';
  }

  boolean(name: string): boolean | undefined {
    const raw = this.text(name);
    if (raw === undefined) return undefined;
    const value = raw.trim().toLowerCase();
    if (value === 'true' || value === 'false') return value === 'true';
    this.problems.push(`${name} must be true or false, not ${JSON.stringify(raw)}`);
    return undefined;
  }

  integer(name: string, fallback: number, rule: NumberRule = {}): number {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw.trim());
    const { min, max } = rule;
    const wanted =
      min !== undefined && max !== undefined
        ? `an integer from ${min} to ${max}`
        : min !== undefined
          ? `an integer >= ${min}`
          : 'an integer';
    if (
      !Number.isInteger(value) ||
      (min !== undefined && value < min) ||
      (max !== undefined && value > max)
    ) {
      this.problems.push(`${name} must be ${wanted}, not ${JSON.stringify(raw)}`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.text(name);
    if (raw === undefined) return fallback;
    const value = raw.trim().toLowerCase();
    if ((values as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${values.join(', ')}, not ${JSON.stringify(raw)}`);
    return fallback;
  }

  /** Every set variable whose name starts with `prefix`. */
  withPrefix(prefix: string): Record<string, string> {
    const found: Record<string, string> = {};
    for (const name of Object.keys(this.env)) {
      const value = this.text(name);
      if (name.startsWith(prefix) && value !== undefined) found[name] = value;
    }
    return found;
  }
}

const MS = { min: 0 };

/** Parses an environment into settings; throws one `SettingsError` naming every invalid variable. */
export function parseSettings(env: Environment): Settings {
  const read = new EnvironmentReader(env);
  const local = read.flag('GATEWAY_LOCAL');
  const parsed: Settings = {
    local,
    onAws:
      !local &&
      !!(
        read.text('AWS_LAMBDA_FUNCTION_NAME') ||
        read.text('ECS_CONTAINER_METADATA_URI_V4') ||
        read.text('AWS_EXECUTION_ENV')
      ),
    awsRegion: read.text('AWS_REGION'),
    serviceName: read.text('POWERTOOLS_SERVICE_NAME') ?? 'gateway',
    concurrentInvocations: read.text('AWS_LAMBDA_MAX_CONCURRENCY') !== undefined,

    port: read.integer('PORT', 8787, { min: 0, max: 65_535 }),
    host: read.text('HOST')?.trim() ?? '127.0.0.1',
    logLevel: read.oneOf('GATEWAY_LOG_LEVEL', LOG_LEVELS, 'info'),
    adminKey: read.text('GATEWAY_ADMIN_KEY'),
    dataDir: read.text('GATEWAY_DATA_DIR') ?? '.data',
    storeNice: read.integer('GATEWAY_STORE_NICE', 19, { min: 0, max: 19 }),
    asyncContextFrame: read.text('GATEWAY_ASYNC_CONTEXT_FRAME')?.trim() !== '0',
    dashboardDir: read.text('GATEWAY_DASHBOARD_DIR'),

    dynamodbEndpoint: read.text('DYNAMODB_ENDPOINT'),
    tables: read.withPrefix('TABLE_'),
    blobBucket: read.text('BLOB_BUCKET'),
    secretPrefix: read.text('GATEWAY_SECRET_PREFIX'),
    secretCacheTtlMs: read.integer('GATEWAY_SECRET_CACHE_TTL_MS', 60_000, MS),
    logRetentionDays: read.integer('GATEWAY_LOG_RETENTION_DAYS', 30, { min: 1 }),
    logShards: read.integer('GATEWAY_LOG_SHARDS', 8, { min: 1 }),
    logReadBudget: read.integer('GATEWAY_LOG_READ_BUDGET', 4_000, { min: 1 }),
    aggregateFlushMs: read.integer('GATEWAY_AGGREGATE_FLUSH_MS', 0, MS),
    writeBatchMs: read.integer('GATEWAY_WRITE_BATCH_MS', 0, MS),
    stageTiming: read.flag('GATEWAY_STAGE_TIMING'),
    logExportStream: read.text('GATEWAY_LOG_EXPORT_STREAM') ?? '',

    maxBodyBytes: read.integer('GATEWAY_MAX_BODY_BYTES', 5_000_000, { min: 1 }),
    upstreamTimeoutMs: read.integer('GATEWAY_UPSTREAM_TIMEOUT_MS', 600_000, { min: 1 }),
    retryBaseMs: read.integer('GATEWAY_RETRY_BASE_MS', 200, MS),
    retryMaxDelayMs: read.integer('GATEWAY_RETRY_MAX_DELAY_MS', 10_000, MS),
    streamPaddingBytes: read.integer('GATEWAY_STREAM_PADDING_BYTES', 0, { min: 0, max: 65_536 }),
    sseKeepAliveMs: read.integer('GATEWAY_SSE_KEEPALIVE_MS', 15_000, MS),
    abandonedStreamDrainMs: read.integer('GATEWAY_ABANDONED_STREAM_DRAIN_MS', 2_000, MS),
    // Any integer: a negative one makes reservations that have already expired (as if their container died).
    reservationTtlSeconds: read.integer('GATEWAY_RESERVATION_TTL_SECONDS', 960),
    budgetLease: read.integer('GATEWAY_BUDGET_LEASE', 0, { min: 0, max: 10_000 }),
    allowPrivateHosts: read.boolean('GATEWAY_ALLOW_PRIVATE_HOSTS'),

    authCacheTtlMs: read.integer('GATEWAY_AUTH_CACHE_TTL_MS', 10_000, MS),
    configCacheTtlMs: read.integer('GATEWAY_CONFIG_CACHE_TTL_MS', 10_000, MS),
    policyCacheTtlMs: read.integer('GATEWAY_POLICY_CACHE_TTL_MS', 10_000, MS),
    virtualKeyCacheTtlMs: read.integer('GATEWAY_VIRTUAL_KEY_CACHE_TTL_MS', 10_000, MS),
    jwksCacheTtlMs: read.integer('GATEWAY_JWKS_CACHE_TTL_MS', 300_000, MS),
    jwksBackoffMs: read.integer('GATEWAY_JWKS_BACKOFF_MS', 10_000, MS),

    pricingFile: read.text('GATEWAY_PRICING_FILE'),
    pricingUrl: read.text('GATEWAY_PRICING_URL'),
    pricingTimeoutMs: read.integer('GATEWAY_PRICING_TIMEOUT_MS', 3_000, { min: 1 }),

    adminKeySecretArn: read.text('GATEWAY_ADMIN_KEY_SECRET_ARN'),
    recoverAdminKey: read.flag('GATEWAY_RECOVER_ADMIN_KEY'),
    originSecret: read.text('GATEWAY_ORIGIN_SECRET'),
    originSecretPrevious: read.text('GATEWAY_ORIGIN_SECRET_PREVIOUS'),
    originSecretArn: read.text('GATEWAY_ORIGIN_SECRET_ARN'),
    alertTopicArn: read.text('GATEWAY_ALERT_TOPIC_ARN'),

    realtimeManagementUrl: read.text('GATEWAY_REALTIME_MANAGEMENT_URL'),
    realtimeRelayFunction: read.text('GATEWAY_REALTIME_RELAY_FUNCTION'),
    realtimeQueueUrlBase: read.text('GATEWAY_REALTIME_QUEUE_URL_BASE'),
    realtimeQueuePrefix: read.text('GATEWAY_REALTIME_QUEUE_PREFIX') ?? 'gateway-rt-',
    realtimeSessionLimitMs: read.integer('GATEWAY_REALTIME_SESSION_LIMIT_MS', 870_000, { min: 1 }),
    realtimeLogIntervalMs: read.integer('GATEWAY_REALTIME_LOG_INTERVAL_MS', 15_000, { min: 1 }),
  };
  if (read.problems.length) throw new SettingsError(read.problems);
  return Object.freeze(parsed);
}

let current: Settings | undefined;

/**
 * Parses the environment and makes it the current settings: on first use by `settings()`, at each start of
 * the local server, and in tests that change a variable while a server runs.
 */
export function loadSettings(env: Environment = process.env): Settings {
  current = parseSettings(env);
  return current;
}

/** The current settings, loaded from the environment on first use. */
export function settings(): Settings {
  return current ?? loadSettings();
}
