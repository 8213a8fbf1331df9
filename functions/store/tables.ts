// DynamoDB table definitions. Plain data: lib/ creates these tables in the stack, local/ creates them in
// the embedded DynamoDB, and the repositories read each table's name from `envVar` at container start.

export interface KeyAttribute {
  name: string;
  type: 'S' | 'N';
}

/** What an index copies of each item: never `ALL`, so that no write is doubled whole. */
export type IndexProjection = { type: 'KEYS_ONLY' } | { type: 'INCLUDE'; attributes: readonly string[] };

export interface GlobalIndexDefinition {
  name: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  projection: IndexProjection;
}

export interface TableDefinition {
  /** Logical id: CDK construct id, and the local table name `gateway-<id>`. */
  id: string;
  /** Environment variable through which functions learn the table's real name. */
  envVar: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  /** Attribute holding an epoch-seconds expiry. DynamoDB TTL on AWS; readers filter expired items too. */
  ttlAttribute?: string;
  globalIndexes: GlobalIndexDefinition[];
  /**
   * Raised when the keys or indexes change in a way DynamoDB cannot apply in place (CloudFormation adds or
   * removes one index per update and never changes a key): the next deploy then creates a new table.
   */
  revision?: number;
}

/** The construct id suffix and local name suffix of a table's revision: `` for the first, `V2` after. */
export const revisionSuffix = (def: TableDefinition) => (def.revision ? `V${def.revision}` : '');

/** Each filter index of the logs table: its name and its key attribute. */
export const LOG_FILTER_INDEXES = [
  ['by-trace', 'trace_key'],
  ['by-user', 'user_key'],
  ['by-virtual-key', 'virtual_key_key'],
  ['by-api-key', 'api_key_key'],
  ['by-model', 'model_key'],
  ['by-status-class', 'status_class_key'],
  ['by-metadata-1', 'metadata_key_1'],
  ['by-metadata-2', 'metadata_key_2'],
  ['by-metadata-3', 'metadata_key_3'],
] as const;

/** How many metadata keys a workspace may declare as indexed: one `by-metadata-<n>` index each. */
export const MAX_INDEXED_METADATA = 3;

/** What the filter indexes copy: the attributes a FilterExpression of a combined filter reads. */
export const LOG_FILTER_ATTRIBUTES = [
  'expires_at',
  'trace_id',
  'user',
  'virtual_key',
  'api_key_id',
  'model',
  'status',
  'metadata',
] as const;

export const TABLES = {
  /** Organisations, workspaces, API keys (by hash and by id), virtual keys, saved configs, JWT key sets. */
  control: {
    id: 'control',
    envVar: 'TABLE_CONTROL',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    globalIndexes: [],
  },
  /**
   * Usage logs, write-sharded: an entry's index item has `pk` `<organisation_id>#<workspace>#<shard>` (the
   * shard from its id, functions/store/log-store.ts) and `id` a time-ordered ULID, so each shard reads newest
   * first; its bodies live apart, in a body item (`pk` with `#body`) or the blob store. Each filter of
   * `GET /v1/logs` has a sparse index keyed `<organisation_id>#<workspace>#<shard>#<value>`; the indexes
   * copy only what a combined filter tests, never the bodies.
   */
  logs: {
    id: 'logs',
    envVar: 'TABLE_LOGS',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'id', type: 'S' },
    ttlAttribute: 'expires_at',
    // 2: sharded keys and the filter indexes; entries of the first table (unsharded) are not read.
    revision: 2,
    globalIndexes: [
      {
        name: 'by-organisation',
        partitionKey: { name: 'org_shard', type: 'S' },
        sortKey: { name: 'id', type: 'S' },
        projection: { type: 'INCLUDE', attributes: ['expires_at'] },
      },
      ...LOG_FILTER_INDEXES.map(([name, attribute]) => ({
        name,
        partitionKey: { name: attribute, type: 'S' as const },
        sortKey: { name: 'id', type: 'S' as const },
        projection: { type: 'INCLUDE' as const, attributes: LOG_FILTER_ATTRIBUTES },
      })),
    ],
  },
  /**
   * Atomic counters, each a single item updated with ADD: a virtual key's spend per budget period and its
   * requests per minute (`pk` `VK#<virtual key id>`), budget alerts, and per-user daily usage
   * (`pk` `USERS#<organisation_id>#<workspace>`, `sk` `<yyyy-mm-dd>#<user>`). Rate windows expire.
   */
  counters: {
    id: 'counters',
    envVar: 'TABLE_COUNTERS',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    ttlAttribute: 'expires_at',
    globalIndexes: [],
  },
  /**
   * Audit entries (invalid JWT attempts). `pk` is `ORG#<organisation_id>`, or `UNKNOWN` when no existing
   * organisation could be named; `id` a time-ordered ULID, so entries read newest first. A table of its
   * own so every function may append to it without any right on the control entities.
   */
  audit: {
    id: 'audit',
    envVar: 'TABLE_AUDIT',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'id', type: 'S' },
    ttlAttribute: 'expires_at',
    globalIndexes: [],
  },
  /**
   * Realtime sessions: one item per WebSocket connection (`pk` the API Gateway connection id, `sk`
   * `SESSION`), written at `$connect` and kept up to date by the relay that owns the session. Items expire
   * a while after API Gateway's two-hour connection limit, so nothing is left behind by a lost relay.
   */
  connections: {
    id: 'connections',
    envVar: 'TABLE_CONNECTIONS',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    ttlAttribute: 'expires_at',
    globalIndexes: [],
  },
} as const satisfies Record<string, TableDefinition>;

export type TableName = keyof typeof TABLES;

export const ALL_TABLES: TableDefinition[] = Object.values(TABLES);
