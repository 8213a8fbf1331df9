// SQL over every log entry, off the request path: the logs table's DynamoDB stream invokes a small
// function (functions/handlers/log-export.ts) that drops bodies and credentials and puts one record per
// entry to Amazon Data Firehose; Firehose converts them to Parquet with the Glue table's schema and
// writes them under `logs/dt=<yyyy-mm-dd>/workspace=<slug>/`. Athena reads them through that table
// (partition projection on `dt`, nothing to crawl or repair) in a workgroup with ready named queries.
import { join } from 'node:path';
import {
  Aws,
  aws_athena as athena,
  Duration,
  type aws_dynamodb as dynamodb,
  aws_lambda_event_sources as eventSources,
  aws_kinesisfirehose as firehose,
  aws_glue as glue,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  type RemovalPolicy,
  Stack,
  aws_s3 as s3,
  aws_sqs as sqs,
  Validations,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { LOG_EXPORT_COLUMNS } from '../functions/store/log-export';
import { acknowledgeFunctionDefaults, acknowledgeWildcardResource } from './nag';

export interface LogAnalyticsProps {
  /** The logs table; its stream must carry new images. */
  logsTable: dynamodb.TableV2;
  repoRoot: string;
  bundling: nodejs.BundlingOptions;
  /** Days to keep exported records and query results. */
  retentionDays: number;
  logRetention: logs.RetentionDays;
  removalPolicy: RemovalPolicy;
  accessLogBucket: s3.IBucket;
}

/** The export function's handler; scripts/build.ts bundles it with the others. */
export const LOG_EXPORT_ENTRY = 'functions/handlers/log-export.ts';

/** The S3 prefix of the exported records, the Glue table's location. */
export const EXPORT_PREFIX = 'logs/';
export const TABLE_NAME = 'log_entries';

// Firehose's minimum buffer for Parquet conversion is 64 MiB; 128 MiB makes fewer, larger files.
const BUFFER_MB = 128;
const BUFFER_SECONDS = 300;

/**
 * Each question keeps the latest version of an entry (`recorded_at`), since a realtime session's entry
 * is written at connect and again at close. `dt` bounds the scan: edit the dates before running.
 */
const latest = (where: string) => `WITH entries AS (
  SELECT * FROM (
    SELECT *, row_number() OVER (PARTITION BY id ORDER BY recorded_at DESC) AS version
    FROM ${TABLE_NAME}
    WHERE dt BETWEEN date_format(current_date - interval '7' day, '%Y-%m-%d') AND date_format(current_date, '%Y-%m-%d')${where}
  ) WHERE version = 1
)`;

export const NAMED_QUERIES: Record<string, { description: string; sql: string }> = {
  'spend-by-user-model-day': {
    description: 'Cost, requests and tokens per day, user and model over the last 7 days',
    sql: `${latest('')}
SELECT substr(timestamp, 1, 10) AS day, organisation_id, workspace, "user", model,
  count(*) AS requests, sum(total_tokens) AS tokens, round(sum(cost), 6) AS cost_usd
FROM entries
GROUP BY 1, 2, 3, 4, 5
ORDER BY day DESC, cost_usd DESC`,
  },
  'slowest-requests': {
    description: 'The 100 slowest requests of the last 7 days, with their upstream share',
    sql: `${latest('')}
SELECT timestamp, id, trace_id, workspace, operation, provider, model, status, stream,
  latency_ms, upstream_latency_ms, first_chunk_ms, attempts
FROM entries
ORDER BY latency_ms DESC
LIMIT 100`,
  },
  'errors-by-provider': {
    description: 'Failed requests per day, provider, status and error type over the last 7 days',
    sql: `${latest(' AND status >= 400')}
SELECT substr(timestamp, 1, 10) AS day, coalesce(provider, '(none)') AS provider, status,
  error_origin, error_type, error_code, count(*) AS requests
FROM entries
GROUP BY 1, 2, 3, 4, 5, 6
ORDER BY day DESC, requests DESC`,
  },
};

export class LogAnalytics extends Construct {
  readonly bucket: s3.Bucket;
  readonly database: glue.CfnDatabase;
  readonly table: glue.CfnTable;
  readonly deliveryStream: firehose.CfnDeliveryStream;
  readonly workGroup: athena.CfnWorkGroup;
  readonly exportFunction: nodejs.NodejsFunction;
  /** Stream batches that failed every retry (their position, not their data). */
  readonly exportFailures: sqs.Queue;

  constructor(scope: Construct, id: string, props: LogAnalyticsProps) {
    super(scope, id);
    const stack = Stack.of(this);

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: props.accessLogBucket,
      serverAccessLogsPrefix: 'analytics-bucket/',
      lifecycleRules: [
        // Records expire with the entries they copy; query results are scratch.
        {
          expiration: Duration.days(props.retentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        { prefix: 'athena-results/', expiration: Duration.days(7) },
      ],
      removalPolicy: props.removalPolicy,
    });

    // Glue names: lower case, underscores; one database per stack.
    const databaseName = `${stack.stackName.toLowerCase().replace(/[^a-z0-9]/g, '_')}_gateway`;
    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: Aws.ACCOUNT_ID,
      databaseInput: { name: databaseName, description: 'LLM gateway log entries (Parquet from Firehose)' },
    });
    const location = `s3://${this.bucket.bucketName}/${EXPORT_PREFIX}`;
    this.table = new glue.CfnTable(this, 'Table', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName,
      tableInput: {
        name: TABLE_NAME,
        description: 'One row per log entry version, without bodies or credentials',
        tableType: 'EXTERNAL_TABLE',
        partitionKeys: [{ name: 'dt', type: 'string' }],
        parameters: {
          classification: 'parquet',
          // Partition projection: Athena computes the day folders itself, so new days need no crawler.
          'projection.enabled': 'true',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': '2025-01-01,NOW',
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          // Athena reads every object under a day, so each workspace's folder of that day is included.
          'storage.location.template': `${location}dt=\${dt}/`,
        },
        storageDescriptor: {
          location,
          columns: LOG_EXPORT_COLUMNS.map(([name, type]) => ({ name, type })),
          inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
          serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
        },
      },
    });
    this.table.node.addDependency(this.database);

    const deliveryLogs = new logs.LogGroup(this, 'DeliveryLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    const deliveryLogStream = new logs.LogStream(this, 'DeliveryLogStream', {
      logGroup: deliveryLogs,
      removalPolicy: props.removalPolicy,
    });
    const role = new iam.Role(this, 'DeliveryRole', {
      assumedBy: new iam.ServicePrincipal('firehose.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
    });
    // The actions the Firehose documentation lists for an S3 destination, on this bucket only.
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [this.bucket.bucketArn],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:AbortMultipartUpload', 's3:GetObject', 's3:PutObject'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    acknowledgeWildcardResource(
      role,
      this.bucket.arnForObjects('*'),
      "Firehose names its objects itself (dynamic partitions): the grant names this bucket's objects only",
    );
    deliveryLogs.grantWrite(role);
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['glue:GetTable', 'glue:GetTableVersion', 'glue:GetTableVersions'],
        resources: [
          stack.formatArn({ service: 'glue', resource: 'catalog' }),
          stack.formatArn({ service: 'glue', resource: 'database', resourceName: databaseName }),
          stack.formatArn({
            service: 'glue',
            resource: 'table',
            resourceName: `${databaseName}/${TABLE_NAME}`,
          }),
        ],
      }),
    );

    this.deliveryStream = new firehose.CfnDeliveryStream(this, 'DeliveryStream', {
      deliveryStreamType: 'DirectPut',
      deliveryStreamEncryptionConfigurationInput: { keyType: 'AWS_OWNED_CMK' },
      extendedS3DestinationConfiguration: {
        bucketArn: this.bucket.bucketArn,
        roleArn: role.roleArn,
        prefix: `${EXPORT_PREFIX}dt=!{partitionKeyFromQuery:dt}/workspace=!{partitionKeyFromQuery:workspace}/`,
        errorOutputPrefix: 'errors/!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/',
        bufferingHints: { sizeInMBs: BUFFER_MB, intervalInSeconds: BUFFER_SECONDS },
        // Parquet compresses its own pages (Snappy); the files themselves stay uncompressed.
        compressionFormat: 'UNCOMPRESSED',
        dynamicPartitioningConfiguration: { enabled: true, retryOptions: { durationInSeconds: 300 } },
        processingConfiguration: {
          enabled: true,
          processors: [
            {
              type: 'MetadataExtraction',
              parameters: [
                // The entry's own day (UTC), not the day Firehose received it.
                {
                  parameterName: 'MetadataExtractionQuery',
                  parameterValue: '{dt: .timestamp[0:10], workspace: .workspace}',
                },
                { parameterName: 'JsonParsingEngine', parameterValue: 'JQ-1.6' },
              ],
            },
          ],
        },
        dataFormatConversionConfiguration: {
          enabled: true,
          inputFormatConfiguration: { deserializer: { openXJsonSerDe: {} } },
          outputFormatConfiguration: { serializer: { parquetSerDe: { compression: 'SNAPPY' } } },
          schemaConfiguration: {
            catalogId: Aws.ACCOUNT_ID,
            databaseName,
            tableName: TABLE_NAME,
            region: Aws.REGION,
            roleArn: role.roleArn,
            versionId: 'LATEST',
          },
        },
        cloudWatchLoggingOptions: {
          enabled: true,
          logGroupName: deliveryLogs.logGroupName,
          logStreamName: deliveryLogStream.logStreamName,
        },
      },
    });
    // Firehose checks its role's rights when the stream is created.
    this.deliveryStream.node.addDependency(role);
    this.deliveryStream.node.addDependency(this.table);

    this.exportFailures = new sqs.Queue(this, 'ExportFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.exportFailures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter destination of the export; its messages only point at stream positions',
    });
    this.exportFunction = new nodejs.NodejsFunction(this, 'ExportFunction', {
      entry: join(props.repoRoot, LOG_EXPORT_ENTRY),
      handler: 'handler',
      projectRoot: props.repoRoot,
      depsLockFilePath: join(props.repoRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(1),
      description: 'Log entries from the logs table stream to Firehose, without bodies or credentials',
      bundling: props.bundling,
      environment: { GATEWAY_LOG_EXPORT_STREAM: this.deliveryStream.ref },
      logGroup: new logs.LogGroup(this, 'ExportFunctionLogs', {
        retention: props.logRetention,
        removalPolicy: props.removalPolicy,
      }),
    });
    acknowledgeFunctionDefaults(this.exportFunction);
    this.exportFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['firehose:PutRecordBatch'],
        resources: [this.deliveryStream.attrArn],
      }),
    );
    this.exportFunction.addEventSource(
      new eventSources.DynamoEventSource(props.logsTable, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: 500,
        maxBatchingWindow: Duration.seconds(5),
        // A poison record is isolated by halving the batch, then skipped after the retries.
        bisectBatchOnError: true,
        retryAttempts: 5,
        onFailure: new eventSources.SqsDlq(this.exportFailures),
        // Expiry deletes (TTL) are not entries.
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.or('INSERT', 'MODIFY'),
          }),
        ],
      }),
    );

    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: `${stack.stackName}-gateway-logs`,
      description: 'SQL over the LLM gateway log entries',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        resultConfiguration: {
          outputLocation: `s3://${this.bucket.bucketName}/athena-results/`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
    for (const [name, query] of Object.entries(NAMED_QUERIES)) {
      const named = new athena.CfnNamedQuery(
        this,
        `Query${name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}`,
        {
          name,
          description: query.description,
          database: databaseName,
          workGroup: this.workGroup.name,
          queryString: query.sql,
        },
      );
      named.node.addDependency(this.workGroup);
    }
  }
}
