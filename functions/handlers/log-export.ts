// DynamoDB Streams of the logs table -> Amazon Data Firehose (lib/analytics.ts): every written entry,
// without bodies or credentials, for SQL in Athena. Never on a request's path.
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { exportStreamBatch, FirehoseLogSink } from '../store/log-export';

const sink = new FirehoseLogSink(process.env.GATEWAY_LOG_EXPORT_STREAM ?? '');

export const handler = async (event: DynamoDBStreamEvent): Promise<void> => {
  await exportStreamBatch(event.Records, sink);
};
