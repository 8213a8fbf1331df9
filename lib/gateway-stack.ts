// The gateway on AWS: one table per TABLES entry, a body bucket, the admin-key secret, and one streaming
// function URL per FUNCTION_GROUPS entry, with permissions derived from the operations each group serves.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Annotations,
  ArnFormat,
  Aws,
  CfnOutput,
  CfnRule,
  aws_cloudwatch as cloudwatch,
  Duration,
  aws_dynamodb as dynamodb,
  Fn,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  SecretValue,
  Stack,
  type StackProps,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
  aws_sns as sns,
  Token,
  Validations,
} from 'aws-cdk-lib';
import type { Construct, Node } from 'constructs';
import {
  FUNCTION_GROUPS,
  type FunctionGroupName,
  OPERATIONS,
  operationsOf,
  REALTIME_FUNCTIONS,
  REALTIME_OPERATION,
  type RealtimeFunctionName,
} from '../functions/core/operations';
import {
  ALL_TABLES,
  type KeyAttribute,
  revisionSuffix,
  TABLES,
  type TableDefinition,
  type TableName,
} from '../functions/store/tables';
import { LogAnalytics } from './analytics';
import { lambdaBundling, sourceMapsEnabled } from './bundling';
import { DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS, GatewayDistribution } from './distribution';
import { type GroupGrants, grantsFor, virtualKeySecretPrefix } from './grants';
import { acknowledgeFunctionDefaults, acknowledgeWildcardResource } from './nag';
import { GatewayObservability } from './observability';
import { RealtimeApi } from './realtime';
import { SecretCleanup } from './secret-cleanup';
import { GatewayWebAcl } from './waf';

/** CloudFront's control plane region: its certificates and WAF WebACLs must be created there. */
export const EDGE_REGION = 'us-east-1';

// Handler entries in operations.ts are relative to the repository root, which is this file's parent folder.
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface GatewayStackProps extends StackProps {
  /** Days to keep usage logs, large bodies and function logs; must be a CloudWatch retention value. */
  logRetentionDays?: number;
  /**
   * Write shards of every log partition and index key (default 8): each takes about 1,000 writes a
   * second. Only ever raise it; readers fan out over every shard (docs/scaling.md).
   */
  logShards?: number;
  /** RETAIN (default) keeps data when the stack is deleted; DESTROY is for throwaway stacks. */
  removalPolicy?: RemovalPolicy;
  /** Bytes of SSE comment padding on a stream's first write (README, GATEWAY_STREAM_PADDING_BYTES); 0 disables it. */
  streamPaddingBytes?: number;
  /** Seconds of stream silence after which an SSE keep-alive comment is sent (default 15); 0 disables it. */
  sseKeepAliveSeconds?: number;
  /** Ship source maps and enable them at runtime; defaults to `GATEWAY_SOURCEMAPS=1`. */
  sourceMaps?: boolean;
  /** CloudFront's origin read timeout; above 60 s needs a CloudFront service quota increase. */
  originReadTimeoutSeconds?: number;
  /** Email address subscribed to the alarm topic. */
  alarmEmail?: string;
  /** Reserved concurrency per function; `null` leaves a function on the account's unreserved pool. */
  reservedConcurrency?: Partial<Record<GatewayFunctionName, number | null>>;
  /** The account's (regional) Lambda concurrency quota, to check reservations and set the alarm. */
  accountConcurrency?: number;
  /** Account-wide concurrent executions that raise the alarm; defaults to 80% of `accountConcurrency`. */
  concurrencyAlarmThreshold?: number;
  /** Set the region's API Gateway CloudWatch role (needed by stage access logs); default true. */
  apiGatewayAccountRole?: boolean;
  /** AWS WAF on the distribution (default true). */
  waf?: boolean;
  /**
   * A CLOUDFRONT-scope WebACL to use instead of creating one: from the edge stack (lib/app.ts) or from
   * `gateway:webAclArn`. Without it the stack creates its own, which CloudFormation accepts only in us-east-1.
   */
  webAclArn?: string;
  /** Requests per client IP per 5 minutes before the WAF rate rule blocks it. */
  wafRateLimit?: number;
  /** Stream every log entry to Firehose, S3 (Parquet), Glue and Athena (default true). */
  logAnalytics?: boolean;
  /** Serve the base URL on this domain too, with `certificateArn` (ACM, us-east-1); TLS 1.2 minimum. */
  domainName?: string;
  certificateArn?: string;
  /** Lets functions reach private (RFC 1918, unique-local) addresses: a risk, for private model servers. */
  allowPrivateHosts?: boolean;
  /** One-off recovery: the admin-key secret creates an admin key again after every one was deleted. */
  recoverAdminKey?: boolean;
  /** The origin secret's version CloudFront sends; set after a rotation so the distribution takes it. */
  originSecretVersionId?: string;
}

/** Every function of the stack: the function URL groups and the realtime functions. */
export type GatewayFunctionName = FunctionGroupName | RealtimeFunctionName;

/**
 * Reserved concurrency guarantees a function that many executions and caps it there. The control plane
 * (keys, logs, dashboard, realtime handshakes) always keeps some, so a burst of model calls or of
 * 15-minute realtime relays never locks operators out; relays are capped so that they cannot take the
 * whole account. Model groups share the unreserved pool unless a context value gives them their own.
 */
export const DEFAULT_RESERVED_CONCURRENCY: Partial<Record<GatewayFunctionName, number>> = {
  control: 20,
  logs: 10,
  dashboard: 5,
  realtimeSocket: 20,
  realtimeRelay: 100,
};
/** Lambda's default concurrency quota per account and region. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;
// Lambda refuses reservations that leave fewer than 100 executions unreserved.
const MIN_UNRESERVED_CONCURRENCY = 100;

export const DEFAULT_LOG_RETENTION_DAYS = 30;
export const DEFAULT_LOG_SHARDS = 8;
/** CloudFront cuts an origin silent for 60 s; a comment every 15 s keeps a thinking model's stream open. */
export const DEFAULT_SSE_KEEPALIVE_SECONDS = 15;

/** Reads the stack's `gateway:*` context values (strings from `-c`, numbers from cdk.json). */
export function gatewayPropsFromContext(node: Node): GatewayStackProps {
  const days = node.tryGetContext('gateway:logRetentionDays');
  const shards = node.tryGetContext('gateway:logShards');
  const removal = node.tryGetContext('gateway:removalPolicy');
  const padding = node.tryGetContext('gateway:streamPaddingBytes');
  const keepAlive = node.tryGetContext('gateway:sseKeepAliveSeconds');
  const readTimeout = node.tryGetContext('gateway:originReadTimeoutSeconds');
  const alarmEmail = node.tryGetContext('gateway:alarmEmail');
  const reserved = node.tryGetContext('gateway:reservedConcurrency');
  const accountConcurrency = node.tryGetContext('gateway:accountConcurrency');
  const alarmThreshold = node.tryGetContext('gateway:concurrencyAlarmThreshold');
  const accountRole = node.tryGetContext('gateway:apiGatewayAccountRole');
  const waf = node.tryGetContext('gateway:waf');
  const logAnalytics = node.tryGetContext('gateway:logAnalytics');
  const webAclArn = node.tryGetContext('gateway:webAclArn');
  const wafRateLimit = node.tryGetContext('gateway:wafRateLimit');
  const domainName = node.tryGetContext('gateway:domainName');
  const certificateArn = node.tryGetContext('gateway:certificateArn');
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new Error('gateway:domainName and gateway:certificateArn go together: give both or neither');
  }
  const versionId = node.tryGetContext('gateway:originSecretVersionId');
  if (alarmEmail !== undefined && !(typeof alarmEmail === 'string' && /^[^@\s]+@[^@\s]+$/.test(alarmEmail))) {
    throw new Error(`gateway:alarmEmail must be an email address, got ${JSON.stringify(alarmEmail)}`);
  }
  if (removal !== undefined && removal !== 'retain' && removal !== 'destroy') {
    throw new Error(`gateway:removalPolicy must be "retain" or "destroy", got ${JSON.stringify(removal)}`);
  }
  return {
    logRetentionDays: days === undefined ? DEFAULT_LOG_RETENTION_DAYS : Number(days),
    ...(shards !== undefined ? { logShards: Number(shards) } : {}),
    removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    streamPaddingBytes: padding === undefined ? 0 : Number(padding),
    ...(keepAlive !== undefined ? { sseKeepAliveSeconds: Number(keepAlive) } : {}),
    originReadTimeoutSeconds:
      readTimeout === undefined ? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS : Number(readTimeout),
    ...(alarmEmail ? { alarmEmail } : {}),
    // `-c` passes a JSON string; cdk.json may hold the object itself.
    ...(reserved !== undefined
      ? { reservedConcurrency: typeof reserved === 'string' ? JSON.parse(reserved) : reserved }
      : {}),
    ...(accountConcurrency !== undefined ? { accountConcurrency: Number(accountConcurrency) } : {}),
    ...(alarmThreshold !== undefined ? { concurrencyAlarmThreshold: Number(alarmThreshold) } : {}),
    ...(accountRole !== undefined ? { apiGatewayAccountRole: flag(accountRole) } : {}),
    ...(waf !== undefined ? { waf: flag(waf) } : {}),
    ...(logAnalytics !== undefined ? { logAnalytics: flag(logAnalytics) } : {}),
    ...(webAclArn ? { webAclArn: String(webAclArn) } : {}),
    ...(wafRateLimit !== undefined ? { wafRateLimit: Number(wafRateLimit) } : {}),
    ...(domainName ? { domainName: String(domainName), certificateArn: String(certificateArn) } : {}),
    allowPrivateHosts: flag(node.tryGetContext('gateway:allowPrivateHosts') ?? false),
    recoverAdminKey: flag(node.tryGetContext('gateway:recoverAdminKey') ?? false),
    ...(typeof versionId === 'string' && versionId ? { originSecretVersionId: versionId } : {}),
  };
}

/** A boolean context value: `-c x=false` arrives as the string "false". */
export function flag(value: unknown): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`expected true or false, got ${JSON.stringify(value)}`);
}

/**
 * The reservation of every function, defaults overlaid by the settings, checked against the account's
 * quota so that a deploy never fails half-way on Lambda's minimum of unreserved executions.
 */
export function reservedConcurrencyOf(
  settings: Partial<Record<GatewayFunctionName, number | null>> = {},
  accountConcurrency: number = DEFAULT_ACCOUNT_CONCURRENCY,
): Partial<Record<GatewayFunctionName, number>> {
  // New accounts can start far below 1,000 (10 is common): Lambda then lets nothing be reserved, so the
  // control plane shares the pool until the quota is raised (the stack warns at synth).
  if (accountConcurrency <= MIN_UNRESERVED_CONCURRENCY) return {};
  const known = [...Object.keys(FUNCTION_GROUPS), ...Object.keys(REALTIME_FUNCTIONS)];
  const merged: Record<string, number | null | undefined> = { ...DEFAULT_RESERVED_CONCURRENCY, ...settings };
  const result: Partial<Record<GatewayFunctionName, number>> = {};
  for (const [name, value] of Object.entries(merged)) {
    if (!known.includes(name)) {
      throw new Error(`gateway:reservedConcurrency names no function: ${name} (known: ${known.join(', ')})`);
    }
    if (value === null || value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`reserved concurrency of ${name} must be a positive integer or null, got ${value}`);
    }
    result[name as GatewayFunctionName] = value;
  }
  // A null for control would leave operators without a guaranteed way in during a burst.
  if (result.control === undefined) {
    throw new Error(
      'the control function must keep a reserved concurrency: the control plane is always guaranteed some',
    );
  }
  const total = Object.values(result).reduce((a, b) => a + b, 0);
  if (total > accountConcurrency - MIN_UNRESERVED_CONCURRENCY) {
    throw new Error(
      `reserved concurrency totals ${total}, but an account quota of ${accountConcurrency} allows at most ${accountConcurrency - MIN_UNRESERVED_CONCURRENCY}: raise gateway:accountConcurrency after raising the quota, or reserve less`,
    );
  }
  return result;
}

// Exactly the calls the repositories make, plus their batch forms; no Scan, no table management.
const DYNAMODB_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
// Reads, and the create/rotate/delete that the control plane does; never list, never policy changes.
const SECRET_READ_ACTIONS = ['secretsmanager:GetSecretValue'];
const SECRET_WRITE_ACTIONS = [
  'secretsmanager:CreateSecret',
  'secretsmanager:PutSecretValue',
  'secretsmanager:DeleteSecret',
];
const DYNAMODB_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];

// Construct ids and output names use the PascalCase of a group or table id: `chat` -> `ChatFunctionUrl`.
const pascal = (id: string): string => id.charAt(0).toUpperCase() + id.slice(1);

const attribute = (key: KeyAttribute): dynamodb.Attribute => ({
  name: key.name,
  type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
});

// Response headers a browser client may read; CORS hides non-safelisted headers otherwise.
const EXPOSED_HEADERS = [
  'x-gateway-request-id',
  'x-gateway-trace-id',
  'x-gateway-provider',
  'x-gateway-error-origin',
  'x-gateway-target-index',
  'x-gateway-retry-count',
  'retry-after',
];

export class GatewayStack extends Stack {
  readonly tables: Record<TableName, dynamodb.TableV2>;
  readonly blobBucket: s3.Bucket;
  readonly accessLogBucket: s3.Bucket;
  /** Firehose, Glue and Athena over the log entries, unless `logAnalytics` is false. */
  readonly analytics?: LogAnalytics;
  /** Deletes the runtime virtual-key secrets on stack deletion; only in a `destroy` stack. */
  readonly secretCleanup?: SecretCleanup;
  /** The WebACL created by this stack (in us-east-1 or an environment-agnostic stack), if any. */
  readonly webAcl?: GatewayWebAcl;
  readonly adminKeySecret: secretsmanager.Secret;
  readonly functions: Record<FunctionGroupName, nodejs.NodejsFunction>;
  readonly originSecret: secretsmanager.Secret;
  readonly distribution: GatewayDistribution;
  readonly observability: GatewayObservability;
  readonly realtime: RealtimeApi;
  /** Budget alerts (threshold crossed, budget exhausted) of every workspace, API key, user and virtual key. */
  readonly budgetAlertTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: GatewayStackProps = {}) {
    super(scope, id, props);
    const retentionDays = props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const streamPaddingBytes = props.streamPaddingBytes ?? 0;
    const sourceMaps = props.sourceMaps ?? sourceMapsEnabled();
    const logRetention = validRetention(retentionDays);
    const logShards = props.logShards ?? DEFAULT_LOG_SHARDS;
    if (!Number.isInteger(logShards) || logShards < 1 || logShards > 64) {
      throw new Error(`logShards must be a whole number from 1 to 64, got ${logShards}`);
    }
    if (!Number.isInteger(streamPaddingBytes) || streamPaddingBytes < 0) {
      throw new Error(`streamPaddingBytes must be a non-negative integer, got ${streamPaddingBytes}`);
    }
    const sseKeepAliveSeconds = props.sseKeepAliveSeconds ?? DEFAULT_SSE_KEEPALIVE_SECONDS;
    // A keep-alive must come before CloudFront's origin read timeout cuts a silent stream.
    if (!(sseKeepAliveSeconds >= 0 && sseKeepAliveSeconds < 60)) {
      throw new Error(`sseKeepAliveSeconds must be 0 (off) or below 60, got ${sseKeepAliveSeconds}`);
    }

    const logAnalytics = props.logAnalytics ?? true;
    // The analytics export reads new log entries from the table's stream.
    this.tables = mapTables((def) =>
      this.createTable(def, removalPolicy, logAnalytics && def.id === TABLES.logs.id),
    );

    // CloudFront's standard logs and S3 server access logs. CloudFront writes its logs with an ACL, so
    // ACLs stay enabled here (object writer); nothing in this bucket is public.
    this.accessLogBucket = new s3.Bucket(this, 'AccessLogBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [
        { expiration: Duration.days(retentionDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    });
    Validations.of(this.accessLogBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the access log bucket; logging its own accesses into itself would loop',
    });

    this.blobBucket = new s3.Bucket(this, 'BlobBucket', {
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'blob-bucket/',
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        // Bodies belong to log entries, so they expire with them.
        { expiration: Duration.days(retentionDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    });

    // The value is generated by CloudFormation and never leaves Secrets Manager; the key is the value itself.
    this.adminKeySecret = new secretsmanager.Secret(this, 'AdminKeySecret', {
      description: 'Bootstrap organisation admin key of the LLM gateway',
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
      removalPolicy,
    });
    Validations.of(this.adminKeySecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The bootstrap key creates the organisation once; operators then use API keys they rotate through the API',
    });

    // CloudFront sends this value in a custom origin header (resolved from Secrets Manager at deploy
    // time); the functions read it once per container and refuse requests that lack it.
    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      description:
        'Header value that proves a request to an LLM gateway function URL came through CloudFront',
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
      removalPolicy,
    });
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'CloudFront reads the value at deploy time, so a rotation is a deploy: a rotation Lambda would leave CloudFront sending the old value',
    });

    this.budgetAlertTopic = new sns.Topic(this, 'BudgetAlertTopic', {
      displayName: 'LLM gateway budget alerts',
      enforceSSL: true,
    });

    const environment: Record<string, string> = {
      ...Object.fromEntries(ALL_TABLES.map((def) => [def.envVar, this.tableOf(def).tableName])),
      GATEWAY_ALERT_TOPIC_ARN: this.budgetAlertTopic.topicArn,
      BLOB_BUCKET: this.blobBucket.bucketName,
      GATEWAY_LOG_RETENTION_DAYS: String(retentionDays),
      GATEWAY_LOG_SHARDS: String(logShards),
      GATEWAY_STREAM_PADDING_BYTES: String(streamPaddingBytes),
      GATEWAY_SSE_KEEPALIVE_MS: String(Math.round(sseKeepAliveSeconds * 1000)),
      POWERTOOLS_SERVICE_NAME: 'gateway',
      GATEWAY_ORIGIN_SECRET_ARN: this.originSecret.secretArn,
      ...(props.allowPrivateHosts ? { GATEWAY_ALLOW_PRIVATE_HOSTS: 'true' } : {}),
      ...(props.recoverAdminKey ? { GATEWAY_RECOVER_ADMIN_KEY: '1' } : {}),
      ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
    };

    const functions: Partial<Record<FunctionGroupName, nodejs.NodejsFunction>> = {};
    const urls: Partial<Record<FunctionGroupName, lambda.FunctionUrl>> = {};
    for (const name of Object.keys(FUNCTION_GROUPS) as FunctionGroupName[]) {
      const group = FUNCTION_GROUPS[name];
      const id = pascal(name);
      const fn = new nodejs.NodejsFunction(this, `${id}Function`, {
        entry: join(REPO_ROOT, group.entry),
        handler: 'handler',
        projectRoot: REPO_ROOT,
        depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        memorySize: group.memoryMb,
        timeout: Duration.seconds(group.timeoutSeconds),
        description: group.description,
        bundling: lambdaBundling(sourceMaps, name),
        environment: environmentFor(
          environment,
          grantsFor(operationsOf(name)),
          this.adminKeySecret.secretArn,
          virtualKeySecretPrefix(this.stackName),
        ),
        logGroup: new logs.LogGroup(this, `${id}FunctionLogs`, { retention: logRetention, removalPolicy }),
      });
      const url = fn.addFunctionUrl({
        // Callers present gateway keys or JWTs, which the function verifies itself.
        authType: lambda.FunctionUrlAuthType.NONE,
        invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
        cors: {
          allowedOrigins: ['*'],
          allowedHeaders: ['*'],
          allowedMethods: [lambda.HttpMethod.ALL],
          exposedHeaders: EXPOSED_HEADERS,
        },
      });
      acknowledgeFunctionDefaults(fn);
      this.grant(fn, grantsFor(operationsOf(name)));
      this.originSecret.grantRead(fn);
      // Model calls settle budgets, and a settlement or a refusal may send an alert.
      if (operationsOf(name).some((op) => op.logged)) this.budgetAlertTopic.grantPublish(fn);
      urls[name] = url;
      new CfnOutput(this, `${id}FunctionUrl`, { value: url.url, description: group.description });
      functions[name] = fn;
    }
    this.functions = functions as Record<FunctionGroupName, nodejs.NodejsFunction>;

    this.realtime = new RealtimeApi(this, 'Realtime', {
      repoRoot: REPO_ROOT,
      environment,
      socketGrants: grantsFor([REALTIME_OPERATION]),
      grantData: (fn, grants) => this.grant(fn, grants),
      environmentFor: (grants) =>
        environmentFor({}, grants, this.adminKeySecret.secretArn, virtualKeySecretPrefix(this.stackName)),
      bundling: lambdaBundling(sourceMaps),
      logRetention,
      removalPolicy,
      apiGatewayAccountRole: props.apiGatewayAccountRole ?? true,
    });
    new CfnOutput(this, 'RealtimeUrl', {
      value: this.realtime.url,
      description: 'WebSocket URL of the realtime API on API Gateway itself: connect with ?model=<model>',
    });

    if (props.waf !== false && !props.webAclArn) this.webAcl = this.createWebAcl(props);
    this.distribution = new GatewayDistribution(this, 'Cdn', {
      functionUrls: urls as Record<FunctionGroupName, lambda.FunctionUrl>,
      operations: OPERATIONS,
      defaultGroup: 'control',
      // A pinned version changes the template, so CloudFormation resolves the rotated value for CloudFront.
      originSecret: (props.originSecretVersionId
        ? SecretValue.secretsManager(this.originSecret.secretArn, { versionId: props.originSecretVersionId })
        : this.originSecret.secretValue
      ).unsafeUnwrap(),
      readTimeoutSeconds: props.originReadTimeoutSeconds ?? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS,
      realtime: {
        path: REALTIME_OPERATION.path,
        domainName: this.realtime.domainName,
        stagePath: this.realtime.stagePath,
      },
      webAclArn: props.waf === false ? undefined : (props.webAclArn ?? this.webAcl?.arn),
      ...(props.domainName && props.certificateArn
        ? { customDomain: { domainName: props.domainName, certificateArn: props.certificateArn } }
        : {}),
      logBucket: this.accessLogBucket,
    });
    const host = props.domainName ?? this.distribution.distribution.distributionDomainName;
    new CfnOutput(this, 'BaseUrl', {
      value: `https://${host}/v1`,
      description: 'Base URL for OpenAI SDKs: every /v1 operation through CloudFront',
    });
    new CfnOutput(this, 'RealtimeBaseUrl', {
      value: `wss://${host}${REALTIME_OPERATION.path}`,
      description:
        'Realtime API through CloudFront, on the same host as BaseUrl: connect with ?model=<model>',
    });

    for (const def of ALL_TABLES) {
      new CfnOutput(this, `${pascal(def.id)}TableName`, { value: this.tableOf(def).tableName });
    }
    new CfnOutput(this, 'BlobBucketName', { value: this.blobBucket.bucketName });
    new CfnOutput(this, 'BudgetAlertTopicArn', {
      value: this.budgetAlertTopic.topicArn,
      description: 'SNS topic of budget alerts: subscribe an email, a queue or a chat integration',
    });
    this.observability = new GatewayObservability(this, 'Observability', {
      functions: this.functions,
      tables: this.tables,
      alarmEmail: props.alarmEmail,
    });
    if (logAnalytics) {
      this.analytics = new LogAnalytics(this, 'Analytics', {
        logsTable: this.tables.logs,
        repoRoot: REPO_ROOT,
        bundling: lambdaBundling(sourceMaps),
        retentionDays,
        logRetention,
        removalPolicy,
        accessLogBucket: this.accessLogBucket,
      });
      this.observability.addAlarm(
        'LogExportFailureAlarm',
        this.analytics.exportFailures.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
        }),
        {
          threshold: 1,
          alarmDescription:
            'Log entries could not be exported to Firehose after every retry (see the export function logs).',
        },
      );
      new CfnOutput(this, 'AthenaWorkGroup', {
        value: this.analytics.workGroup.name,
        description: 'Athena workgroup with the named queries over every log entry (table log_entries)',
      });
    }
    if (removalPolicy === RemovalPolicy.DESTROY) {
      this.secretCleanup = new SecretCleanup(this, 'SecretCleanup', {
        repoRoot: REPO_ROOT,
        secretPrefix: virtualKeySecretPrefix(this.stackName),
        bundling: lambdaBundling(sourceMaps),
        logRetention,
      });
    }
    this.reserveConcurrency(props);
    // Relays past their reservation wait in Lambda's async queue, then expire into the failure topic.
    this.observability.addAlarm(
      'RelayThrottlesAlarm',
      this.realtime.relayFunction.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }),
      {
        threshold: 1,
        alarmDescription:
          'Realtime sessions waited for a relay: raise realtimeRelay in gateway:reservedConcurrency (and the account quota).',
      },
    );
    this.observability.addAlarm(
      'RelayFailureAlarm',
      this.realtime.relayFailures.metricNumberOfMessagesPublished({ period: Duration.minutes(5) }),
      {
        threshold: 1,
        alarmDescription:
          'A realtime relay invocation failed or expired before it ran: its session had no provider socket.',
      },
    );
    new CfnOutput(this, 'AdminKeySecretArn', {
      value: this.adminKeySecret.secretArn,
      description: 'Read the key with `aws secretsmanager get-secret-value --secret-id <arn>`',
    });
  }

  /**
   * A WebACL in this stack. CloudFront takes only WebACLs of us-east-1: a stack deployed elsewhere gets
   * its WebACL from the edge stack instead (lib/app.ts), and an environment-agnostic stack carries a
   * CloudFormation rule that refuses a deploy outside us-east-1 with that explanation.
   */
  private createWebAcl(props: GatewayStackProps): GatewayWebAcl {
    if (!Token.isUnresolved(this.region) && this.region !== EDGE_REGION) {
      throw new Error(
        `WAF for CloudFront lives in ${EDGE_REGION}: deploy ${this.stackName} through createGatewayApp (lib/app.ts), which adds an edge stack there, or pass gateway:webAclArn, or set gateway:waf=false`,
      );
    }
    if (Token.isUnresolved(this.region)) {
      new CfnRule(this, 'WebAclRegionRule', {
        assertions: [
          {
            assert: Fn.conditionEquals(Aws.REGION, EDGE_REGION),
            assertDescription: `The WAF WebACL of a CloudFront distribution must be created in ${EDGE_REGION}. Deploy with an explicit region (bin/gateway.ts then adds an edge stack in ${EDGE_REGION}), or pass -c gateway:webAclArn=<arn>, or -c gateway:waf=false.`,
          },
        ],
      });
    }
    const acl = new GatewayWebAcl(this, 'WebAcl', {
      rateLimit: props.wafRateLimit,
      metricPrefix: this.stackName,
    });
    return acl;
  }

  /** Applies each function's reservation and alarms before the account runs out of executions. */
  private reserveConcurrency(props: GatewayStackProps): void {
    const accountConcurrency = props.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY;
    const reserved = reservedConcurrencyOf(props.reservedConcurrency, accountConcurrency);
    if (Object.keys(reserved).length === 0) {
      Annotations.of(this).addWarningV2(
        'gateway:no-reserved-concurrency',
        `An account concurrency quota of ${accountConcurrency} leaves nothing to reserve: the control plane is not protected from bursts until the quota is raised (Service Quotas, Lambda concurrent executions).`,
      );
    }
    const all: Record<GatewayFunctionName, lambda.Function> = {
      ...this.functions,
      realtimeSocket: this.realtime.socketFunction,
      realtimeRelay: this.realtime.relayFunction,
    };
    for (const [name, fn] of Object.entries(all)) {
      const value = reserved[name as GatewayFunctionName];
      if (value !== undefined)
        (fn.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = value;
    }
    const threshold = props.concurrencyAlarmThreshold ?? Math.floor(accountConcurrency * 0.8);
    this.observability.addAlarm(
      'AccountConcurrencyAlarm',
      // Account-wide: every function in the region, the gateway's and any other.
      new cloudwatch.Metric({
        namespace: 'AWS/Lambda',
        metricName: 'ConcurrentExecutions',
        statistic: 'Maximum',
        period: Duration.minutes(1),
      }),
      {
        threshold,
        evaluationPeriods: 3,
        alarmDescription: `Lambda ran ${threshold} or more concurrent executions (quota ${accountConcurrency}) for 3 minutes: raise the quota before calls are throttled.`,
      },
    );
  }

  private createTable(def: TableDefinition, removalPolicy: RemovalPolicy, stream = false): dynamodb.TableV2 {
    return new dynamodb.TableV2(this, `${pascal(def.id)}Table${revisionSuffix(def)}`, {
      ...(stream ? { dynamoStream: dynamodb.StreamViewType.NEW_IMAGE } : {}),
      partitionKey: attribute(def.partitionKey),
      sortKey: attribute(def.sortKey),
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      timeToLiveAttribute: def.ttlAttribute,
      globalSecondaryIndexes: def.globalIndexes.map((index) => ({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        sortKey: attribute(index.sortKey),
        ...(index.projection.type === 'KEYS_ONLY'
          ? { projectionType: dynamodb.ProjectionType.KEYS_ONLY }
          : {
              projectionType: dynamodb.ProjectionType.INCLUDE,
              nonKeyAttributes: [...index.projection.attributes],
            }),
      })),
      removalPolicy,
    });
  }

  private tableOf(def: TableDefinition): dynamodb.TableV2 {
    const table = (this.tables as Record<string, dynamodb.TableV2>)[def.id];
    if (!table) throw new Error(`table ${def.id} is in ALL_TABLES but not in TABLES`);
    return table;
  }

  /** Adds one statement per resource and access, naming each table, index and bucket exactly. */
  grant(fn: lambda.IFunction, grants: GroupGrants): void {
    // A wildcard resource is acknowledged for cdk-nag right where it is granted, with why it is needed.
    const allow = (actions: string[], resources: string[], wildcardReason?: string) => {
      fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
      if (wildcardReason) {
        for (const r of resources) acknowledgeWildcardResource(fn, r, wildcardReason);
      }
    };
    const objectsReason =
      "Log bodies are objects with generated keys: the grant names this bucket's objects only";
    for (const def of ALL_TABLES) {
      const access = grants.tables[def.id as TableName];
      const tableArn = this.tableOf(def).tableArn;
      // Queries may go to a named index; writes only ever go to the table itself.
      if (access.read) {
        allow(DYNAMODB_READ_ACTIONS, [
          tableArn,
          ...def.globalIndexes.map((i) => `${tableArn}/index/${i.name}`),
        ]);
      }
      if (access.write) allow(DYNAMODB_WRITE_ACTIONS, [tableArn]);
      else if (access.append) allow(['dynamodb:PutItem'], [tableArn]);
    }
    const objects = this.blobBucket.arnForObjects('*');
    if (grants.blobBucket.read) {
      allow(['s3:GetObject'], [objects], objectsReason);
      // Without ListBucket S3 answers a missing key with AccessDenied instead of NoSuchKey.
      allow(['s3:ListBucket'], [this.blobBucket.bucketArn]);
    }
    if (grants.blobBucket.write) allow(['s3:PutObject'], [objects], objectsReason);
    if (grants.adminKeySecret.read) this.adminKeySecret.grantRead(fn);
    // Secrets Manager appends a random suffix to a secret's ARN, hence the trailing wildcard.
    const virtualKeySecrets = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${virtualKeySecretPrefix(Stack.of(this).stackName)}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const secretsReason =
      'Virtual keys are created at runtime: the grant names exactly the secrets under their name prefix';
    if (grants.virtualKeySecrets.read) allow(SECRET_READ_ACTIONS, [virtualKeySecrets], secretsReason);
    if (grants.virtualKeySecrets.write) allow(SECRET_WRITE_ACTIONS, [virtualKeySecrets], secretsReason);
    // Converse needs InvokeModel, ConverseStream InvokeModelWithResponseStream; inference profiles route
    // to foundation models in other regions, hence every region for foundation models.
    if (grants.bedrockInvoke) {
      const stack = Stack.of(this);
      allow(
        ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
        [
          `arn:${stack.partition}:bedrock:*::foundation-model/*`,
          `arn:${stack.partition}:bedrock:*:${stack.account}:inference-profile/*`,
        ],
        'A virtual key may name any Bedrock model, and cross-region inference profiles run in several regions',
      );
    }
  }
}

/** The shared environment plus what only some functions get: the admin key ARN, the secret prefix. */
export function environmentFor(
  shared: Record<string, string>,
  grants: GroupGrants,
  adminKeySecretArn: string,
  secretPrefix: string,
): Record<string, string> {
  return {
    ...shared,
    ...(grants.adminKeySecret.read ? { GATEWAY_ADMIN_KEY_SECRET_ARN: adminKeySecretArn } : {}),
    ...(grants.virtualKeySecrets.read || grants.virtualKeySecrets.write
      ? { GATEWAY_SECRET_PREFIX: secretPrefix }
      : {}),
  };
}

function mapTables<T>(create: (def: TableDefinition) => T): Record<TableName, T> {
  return Object.fromEntries(Object.entries(TABLES).map(([name, def]) => [name, create(def)])) as Record<
    TableName,
    T
  >;
}

// CloudWatch Logs accepts only these retention periods; RetentionDays' numeric values are exactly them.
function validRetention(days: number): logs.RetentionDays {
  const allowed = Object.values(logs.RetentionDays).filter((v): v is number => typeof v === 'number');
  if (!allowed.includes(days)) {
    throw new Error(`logRetentionDays must be one of ${allowed.join(', ')}, got ${days}`);
  }
  return days as logs.RetentionDays;
}
