// Log entries for SQL: one flat record per entry, without bodies, credentials or error texts (which can
// quote a prompt). On AWS the logs table's stream feeds these records to Amazon Data Firehose, which
// writes Parquet to S3 under the Glue table that lib/analytics.ts builds from LOG_EXPORT_COLUMNS;
// locally `npm run logs:export` writes the same records as NDJSON.
import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { LogEntry } from '../core/log-entry';

/** Glue (Hive) type of each record field, in table order: the schema Firehose writes Parquet with. */
export const LOG_EXPORT_COLUMNS = [
  ['id', 'string'],
  ['trace_id', 'string'],
  ['timestamp', 'string'],
  ['recorded_at', 'bigint'],
  ['organisation_id', 'string'],
  ['workspace', 'string'],
  ['auth_type', 'string'],
  ['api_key_id', 'string'],
  ['jwt_subject', 'string'],
  ['user', 'string'],
  ['metadata', 'map<string,string>'],
  ['operation', 'string'],
  ['provider', 'string'],
  ['model', 'string'],
  ['virtual_key', 'string'],
  ['status', 'int'],
  ['stream', 'boolean'],
  ['latency_ms', 'double'],
  ['upstream_latency_ms', 'double'],
  ['first_chunk_ms', 'double'],
  ['prompt_tokens', 'bigint'],
  ['completion_tokens', 'bigint'],
  ['total_tokens', 'bigint'],
  ['cached_tokens', 'bigint'],
  ['cost', 'double'],
  ['error_type', 'string'],
  ['error_code', 'string'],
  ['error_origin', 'string'],
  ['attempts', 'int'],
  ['prompt_id', 'string'],
  ['prompt_version', 'int'],
] as const;

type ColumnName = (typeof LOG_EXPORT_COLUMNS)[number][0];
export type LogExportRecord = Record<ColumnName, string | number | boolean | Record<string, string> | null>;

/**
 * The exported form of an entry. `recordedAt` orders two versions of one entry (a realtime session is
 * written at connect and again at close): queries keep the latest per `id`.
 */
export function toExportRecord(
  entry: Omit<LogEntry, 'request' | 'response'>,
  recordedAt: number,
): LogExportRecord {
  return {
    id: entry.id,
    trace_id: entry.trace_id,
    timestamp: entry.timestamp,
    recorded_at: recordedAt,
    organisation_id: entry.organisation_id,
    workspace: entry.workspace,
    auth_type: entry.auth?.type ?? null,
    api_key_id: entry.auth?.key_id ?? null,
    jwt_subject: entry.auth?.subject ?? null,
    user: entry.user ?? null,
    metadata: entry.metadata ?? {},
    operation: entry.operation,
    provider: entry.provider ?? null,
    model: entry.model ?? null,
    virtual_key: entry.virtual_key ?? null,
    status: entry.status,
    stream: entry.stream,
    latency_ms: entry.latency_ms,
    upstream_latency_ms: entry.upstream_latency_ms ?? null,
    first_chunk_ms: entry.first_chunk_ms ?? null,
    prompt_tokens: entry.usage?.prompt_tokens ?? null,
    completion_tokens: entry.usage?.completion_tokens ?? null,
    total_tokens: entry.usage?.total_tokens ?? null,
    cached_tokens: entry.usage?.cached_tokens ?? null,
    cost: entry.cost ?? null,
    error_type: entry.error?.type ?? null,
    error_code: entry.error?.code ?? null,
    error_origin: entry.error?.origin ?? null,
    attempts: entry.attempts?.length ?? 0,
    prompt_id: entry.prompt?.id ?? null,
    prompt_version: entry.prompt?.version ?? null,
  };
}

/**
 * The record of a stream event that wrote a log entry; undefined for removals (TTL expiry) and for items
 * that are not entries (anything without an operation and a trace id).
 */
export function recordOfStreamEvent(event: DynamoDBRecord): LogExportRecord | undefined {
  if (event.eventName === 'REMOVE' || !event.dynamodb?.NewImage) return undefined;
  // The Lambda event's AttributeValue type and the SDK's describe the same JSON with different unions.
  const item = unmarshall(event.dynamodb.NewImage as Record<string, NativeAttributeValue>);
  if (typeof item.operation !== 'string' || typeof item.trace_id !== 'string') return undefined;
  const recordedAt = (event.dynamodb.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000;
  return toExportRecord(item as LogEntry, Math.round(recordedAt));
}

/** Where exported records go: Firehose on AWS; tests pass their own. */
export interface LogRecordSink {
  put(records: LogExportRecord[]): Promise<void>;
}

// PutRecordBatch takes at most 500 records and 4 MiB per call.
const BATCH_RECORDS = 500;
const BATCH_BYTES = 4 * 1024 * 1024;
const PUT_ATTEMPTS = 3;

export class FirehoseLogSink implements LogRecordSink {
  constructor(
    private readonly deliveryStreamName: string,
    private readonly client: FirehoseClient = new FirehoseClient({}),
  ) {}

  async put(records: LogExportRecord[]): Promise<void> {
    let batch: Uint8Array[] = [];
    let bytes = 0;
    for (const record of records) {
      // One JSON object per line: Firehose's JSON deserializer and its JQ partitioning read it as is.
      const data = Buffer.from(`${JSON.stringify(record)}\n`);
      if (batch.length === BATCH_RECORDS || bytes + data.length > BATCH_BYTES) {
        await this.send(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(data);
      bytes += data.length;
    }
    if (batch.length) await this.send(batch);
  }

  /** Sends a batch, then again only the records Firehose refused; throws so the stream batch is retried. */
  private async send(batch: Uint8Array[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; pending.length; attempt++) {
      const out = await this.client.send(
        new PutRecordBatchCommand({
          DeliveryStreamName: this.deliveryStreamName,
          Records: pending.map((Data) => ({ Data })),
        }),
      );
      if (!out.FailedPutCount) return;
      pending = pending.filter((_, i) => out.RequestResponses?.[i]?.ErrorCode);
      if (attempt === PUT_ATTEMPTS) {
        throw new Error(`Firehose refused ${pending.length} log records ${PUT_ATTEMPTS} times`);
      }
    }
  }
}

/** Exports the log entries of one stream batch; a failure fails the batch, which Lambda retries. */
export async function exportStreamBatch(events: DynamoDBRecord[], sink: LogRecordSink): Promise<number> {
  const records = events.map(recordOfStreamEvent).filter((r): r is LogExportRecord => r !== undefined);
  if (records.length) await sink.put(records);
  return records.length;
}
