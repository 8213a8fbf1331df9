import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../functions/core/log-entry';
import {
  exportStreamBatch,
  FirehoseLogSink,
  LOG_EXPORT_COLUMNS,
  type LogExportRecord,
  recordOfStreamEvent,
  toExportRecord,
} from '../../functions/store/log-export';

const ENTRY: LogEntry = {
  id: '01JDZ0000000000000000000AA',
  trace_id: 'trace-1',
  timestamp: '2026-11-23T01:02:03.456Z',
  organisation_id: 'org_1',
  workspace: 'default',
  auth: { type: 'api_key', key_id: 'key_1' },
  user: 'alice',
  metadata: { team: 'search' },
  operation: 'chat.completions',
  provider: 'openai',
  model: 'gpt-4o-mini',
  virtual_key: 'vk_1',
  status: 502,
  stream: true,
  latency_ms: 812.5,
  upstream_latency_ms: 800,
  first_chunk_ms: 120,
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 2 },
  cost: 0.000123,
  request: { messages: [{ role: 'user', content: 'my secret prompt' }] },
  response: { choices: [{ message: { content: 'a private answer' } }] },
  error: {
    message: 'upstream said: my secret prompt',
    type: 'upstream_error',
    code: 'bad_gateway',
    origin: 'provider',
  },
  attempts: [
    { target_index: '0', provider: 'openai', virtual_key: 'vk_1', status: 502, latency_ms: 800, error: 'x' },
  ],
};

/** A stream event as DynamoDB Streams delivers it for the item LogStore.put writes. */
function streamEvent(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  item: Record<string, unknown>,
): DynamoDBRecord {
  return {
    eventName,
    dynamodb: {
      ApproximateCreationDateTime: 1_795_000_000,
      // The Lambda event type and the SDK's describe the same attribute-value JSON.
      NewImage: marshall(item, { removeUndefinedValues: true }) as never,
    },
  };
}

const storedItem = () => {
  const { request, response, ...rest } = ENTRY;
  return {
    ...rest,
    pk: 'org_1#default',
    expires_at: 1_797_000_000,
    request_json: JSON.stringify(request),
    response_json: JSON.stringify(response),
  };
};

describe('toExportRecord', () => {
  it('has exactly the Glue table columns, in order', () => {
    expect(Object.keys(toExportRecord(ENTRY, 1))).toEqual(LOG_EXPORT_COLUMNS.map(([name]) => name));
  });

  it('keeps ids, usage, cost and error kinds, and drops bodies and error texts', () => {
    const record = toExportRecord(ENTRY, 42);
    expect(record).toMatchObject({
      id: ENTRY.id,
      recorded_at: 42,
      auth_type: 'api_key',
      api_key_id: 'key_1',
      user: 'alice',
      metadata: { team: 'search' },
      prompt_tokens: 10,
      cached_tokens: 2,
      cost: 0.000123,
      error_type: 'upstream_error',
      error_code: 'bad_gateway',
      error_origin: 'provider',
      attempts: 1,
    });
    expect(JSON.stringify(record)).not.toMatch(/secret prompt|private answer/);
  });
});

describe('recordOfStreamEvent', () => {
  it('reads inserts and updates of log entries, without their stored bodies', () => {
    for (const name of ['INSERT', 'MODIFY'] as const) {
      const record = recordOfStreamEvent(streamEvent(name, storedItem()));
      expect(record?.id).toBe(ENTRY.id);
      expect(record?.recorded_at).toBe(1_795_000_000_000);
      expect(JSON.stringify(record)).not.toMatch(/secret prompt|private answer|request_json|org_1#default/);
    }
  });

  it('skips removals (TTL expiry) and items that are not entries', () => {
    expect(recordOfStreamEvent(streamEvent('REMOVE', storedItem()))).toBeUndefined();
    expect(recordOfStreamEvent(streamEvent('INSERT', { pk: 'x', id: 'y', body: 'z' }))).toBeUndefined();
  });
});

describe('FirehoseLogSink', () => {
  const firehose = mockClient(FirehoseClient);
  beforeEach(() => firehose.reset());
  const records = (n: number): LogExportRecord[] =>
    Array.from({ length: n }, (_, i) => toExportRecord({ ...ENTRY, id: `id-${i}` }, i));
  const sent = () =>
    firehose
      .commandCalls(PutRecordBatchCommand)
      .map((c) =>
        (c.args[0].input.Records ?? []).map(
          (r) => JSON.parse(Buffer.from(r.Data as Uint8Array).toString()).id,
        ),
      );

  it('sends newline-delimited JSON in batches of at most 500 records', async () => {
    firehose.on(PutRecordBatchCommand).resolves({ FailedPutCount: 0, RequestResponses: [] });
    await new FirehoseLogSink('stream', new FirehoseClient({})).put(records(1001));
    expect(sent().map((batch) => batch.length)).toEqual([500, 500, 1]);
    const first = firehose.commandCalls(PutRecordBatchCommand)[0]?.args[0].input;
    expect(first?.DeliveryStreamName).toBe('stream');
    expect(Buffer.from(first?.Records?.[0]?.Data as Uint8Array).toString()).toMatch(/^\{.*\}\n$/);
  });

  it('sends again only the records Firehose refused, and fails the batch when they keep failing', async () => {
    firehose
      .on(PutRecordBatchCommand)
      .resolvesOnce({
        FailedPutCount: 1,
        RequestResponses: [{ RecordId: 'a' }, { ErrorCode: 'ServiceUnavailableException' }],
      })
      .resolves({ FailedPutCount: 0, RequestResponses: [] });
    await exportStreamBatch(
      [
        streamEvent('INSERT', { ...storedItem(), id: 'one' }),
        streamEvent('INSERT', { ...storedItem(), id: 'two' }),
      ],
      new FirehoseLogSink('stream', new FirehoseClient({})),
    );
    expect(sent()).toEqual([['one', 'two'], ['two']]);

    firehose.reset();
    firehose
      .on(PutRecordBatchCommand)
      .resolves({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'ServiceUnavailableException' }] });
    await expect(new FirehoseLogSink('stream', new FirehoseClient({})).put(records(1))).rejects.toThrow(
      /refused 1 log records 3 times/,
    );
  });
});
