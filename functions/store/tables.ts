// DynamoDB table definitions. Plain data: lib/ creates these tables in the stack, local/ creates them in
// the embedded DynamoDB, and the repositories read each table's name from `envVar` at container start.

export interface KeyAttribute {
  name: string;
  type: 'S' | 'N';
}

export interface GlobalIndexDefinition {
  name: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
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
}

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
   * Usage logs. `pk` is `<organisation_id>#<workspace>`, `id` a time-ordered ULID, so a workspace's logs
   * read newest first; the `by-organisation` index serves organisation-wide reads.
   */
  logs: {
    id: 'logs',
    envVar: 'TABLE_LOGS',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'id', type: 'S' },
    ttlAttribute: 'expires_at',
    globalIndexes: [
      {
        name: 'by-organisation',
        partitionKey: { name: 'organisation_id', type: 'S' },
        sortKey: { name: 'id', type: 'S' },
      },
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
