// DynamoDB Streams of the logs table -> Amazon Data Firehose (lib/analytics.ts): every written entry,
// without bodies or credentials, for SQL in Athena. Never on a request's path.
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { settings } from '../core/settings';
import { exportStreamBatch, FirehoseLogSink } from '../store/log-export';

const sink = new FirehoseLogSink(settings().logExportStream);

export const handler = async (event: DynamoDBStreamEvent): Promise<void> => {
  await exportStreamBatch(event.Records, sink);
};
