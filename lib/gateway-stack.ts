// The gateway on AWS: one table per TABLES entry, a body bucket, the admin-key secret, and one streaming
// function URL per FUNCTION_GROUPS entry, with permissions derived from the operations each group serves.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ArnFormat,
  CfnOutput,
  Duration,
  aws_dynamodb as dynamodb,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
  aws_sns as sns,
} from 'aws-cdk-lib';
import type { Construct, Node } from 'constructs';
import {
  FUNCTION_GROUPS,
  type FunctionGroupName,
  OPERATIONS,
  type Operation,
  operationsOf,
  REALTIME_OPERATION,
  type Scope,
} from '../functions/operations';
import {
  ALL_TABLES,
  type KeyAttribute,
  TABLES,
  type TableDefinition,
  type TableName,
} from '../functions/store/tables';
import { lambdaBundling, sourceMapsEnabled } from './bundling';
import { DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS, GatewayDistribution } from './distribution';
import { GatewayObservability } from './observability';
import { RealtimeApi } from './realtime';

// Handler entries in operations.ts are relative to the repository root, which is this file's parent folder.
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface GatewayStackProps extends StackProps {
  /** Days to keep usage logs, large bodies and function logs; must be a CloudWatch retention value. */
  logRetentionDays?: number;
  /** RETAIN (default) keeps data when the stack is deleted; DESTROY is for throwaway stacks. */
  removalPolicy?: RemovalPolicy;
  /** Bytes of SSE comment padding on a stream's first write (DESIGN.md section 6); 0 disables it. */
  streamPaddingBytes?: number;
  /** Ship source maps and enable them at runtime; defaults to `GATEWAY_SOURCEMAPS=1`. */
  sourceMaps?: boolean;
  /** CloudFront's origin read timeout; above 60 s needs a CloudFront service quota increase. */
  originReadTimeoutSeconds?: number;
  /** Email address subscribed to the alarm topic. */
  alarmEmail?: string;
}

export const DEFAULT_LOG_RETENTION_DAYS = 30;

/** Reads the stack's `gateway:*` context values (strings from `-c`, numbers from cdk.json). */
export function gatewayPropsFromContext(node: Node): GatewayStackProps {
  const days = node.tryGetContext('gateway:logRetentionDays');
  const removal = node.tryGetContext('gateway:removalPolicy');
  const padding = node.tryGetContext('gateway:streamPaddingBytes');
  const readTimeout = node.tryGetContext('gateway:originReadTimeoutSeconds');
  const alarmEmail = node.tryGetContext('gateway:alarmEmail');
  if (alarmEmail !== undefined && !(typeof alarmEmail === 'string' && /^[^@\s]+@[^@\s]+$/.test(alarmEmail))) {
    throw new Error(`gateway:alarmEmail must be an email address, got ${JSON.stringify(alarmEmail)}`);
  }
  if (removal !== undefined && removal !== 'retain' && removal !== 'destroy') {
    throw new Error(`gateway:removalPolicy must be "retain" or "destroy", got ${JSON.stringify(removal)}`);
  }
  return {
    logRetentionDays: days === undefined ? DEFAULT_LOG_RETENTION_DAYS : Number(days),
    removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    streamPaddingBytes: padding === undefined ? 0 : Number(padding),
    originReadTimeoutSeconds:
      readTimeout === undefined ? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS : Number(readTimeout),
    ...(alarmEmail ? { alarmEmail } : {}),
  };
}

/** What one data resource allows a function to do. */
export interface DataAccess {
  read: boolean;
  write: boolean;
  /** PutItem only: adds items, never updates or deletes them (audit entries). Implied by `write`. */
  append?: boolean;
}

export interface GroupGrants {
  tables: Record<TableName, DataAccess>;
  blobBucket: DataAccess;
  adminKeySecret: { read: boolean };
  /** Provider credentials of virtual keys, the secrets under VIRTUAL_KEY_SECRET_PREFIX. */
  virtualKeySecrets: DataAccess;
  /** Calls Bedrock with its own role, for virtual keys whose credential names no access keys. */
  bedrockInvoke: boolean;
}

/** Every virtual key's secret lives under this name prefix, so IAM can name exactly those secrets. */
export const VIRTUAL_KEY_SECRET_PREFIX = 'gateway/virtual-keys/';

/**
 * Permissions a function needs, from the operations it serves, so a new group in operations.ts gets the
 * right grants without touching this file.
 */
export function grantsFor(
  operations: readonly Pick<Operation, 'name' | 'method' | 'access' | 'logged'>[],
): GroupGrants {
  // Model operations write a usage log entry and, when large, its bodies.
  const writesLogs = operations.some((op) => op.logged);
  // Reading logs is exactly what the logs.view scope allows.
  const readsLogs = operations.some((op) => op.access.kind === 'scope' && op.access.scope === 'logs.view');
  // Control-plane mutations are the non-GET operations that are not model operations.
  const writesControl = operations.some((op) => !op.logged && op.method !== 'GET');
  const hasScope = (scope: Scope) =>
    operations.some((op) => op.access.kind === 'scope' && op.access.scope === scope);
  // Model operations may name a virtual key: they read its credential, check and charge its budget and
  // rate limit, and count per-user usage.
  const usesVirtualKeys = writesLogs;
  // Creating, rotating and deleting a virtual key writes its secret and its enforced state.
  const managesVirtualKeys = hasScope('virtual_keys.write');
  // A function that authenticates callers records every invalid JWT it sees in the audit table.
  const authenticates = operations.some((op) => op.access.kind !== 'public');
  // The audit log is read only by its own (admin) operations.
  const readsAudit = operations.some((op) => op.name.startsWith('audit_logs.'));
  return {
    tables: {
      // Functions authenticate callers against the control table; one serving only public files does not.
      control: { read: authenticates || writesControl, write: writesControl },
      logs: { read: readsLogs, write: writesLogs },
      // Virtual key reads show the spend; log readers see per-user analytics.
      counters: {
        read: usesVirtualKeys || managesVirtualKeys || hasScope('virtual_keys.read') || readsLogs,
        write: usesVirtualKeys || managesVirtualKeys,
      },
      audit: { read: readsAudit, write: false, append: authenticates },
      // Realtime sessions only (lib/realtime.ts grants it to the realtime functions).
      connections: { read: false, write: false },
    },
    blobBucket: { read: readsLogs, write: writesLogs },
    // The first use of the bootstrap admin key creates the organisation, a control-table write: only a
    // function that may write that table recognises the key (README: call /v1/organisation first).
    adminKeySecret: { read: writesControl },
    virtualKeySecrets: { read: usesVirtualKeys, write: managesVirtualKeys },
    bedrockInvoke: usesVirtualKeys,
  };
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
    if (!Number.isInteger(streamPaddingBytes) || streamPaddingBytes < 0) {
      throw new Error(`streamPaddingBytes must be a non-negative integer, got ${streamPaddingBytes}`);
    }

    this.tables = mapTables((def) => this.createTable(def, removalPolicy));

    this.blobBucket = new s3.Bucket(this, 'BlobBucket', {
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

    // CloudFront sends this value in a custom origin header (resolved from Secrets Manager at deploy
    // time); the functions read it once per container and refuse requests that lack it.
    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      description:
        'Header value that proves a request to an LLM gateway function URL came through CloudFront',
      generateSecretString: { excludePunctuation: true, passwordLength: 48 },
      removalPolicy,
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
      GATEWAY_STREAM_PADDING_BYTES: String(streamPaddingBytes),
      POWERTOOLS_SERVICE_NAME: 'gateway',
      GATEWAY_ORIGIN_SECRET_ARN: this.originSecret.secretArn,
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
      environmentFor: (grants) => environmentFor({}, grants, this.adminKeySecret.secretArn),
      bundling: lambdaBundling(sourceMaps),
      logRetention,
      removalPolicy,
    });
    new CfnOutput(this, 'RealtimeUrl', {
      value: this.realtime.url,
      description: 'WebSocket URL of the realtime API on API Gateway itself: connect with ?model=<model>',
    });

    this.distribution = new GatewayDistribution(this, 'Cdn', {
      functionUrls: urls as Record<FunctionGroupName, lambda.FunctionUrl>,
      operations: OPERATIONS,
      defaultGroup: 'control',
      originSecret: this.originSecret.secretValue.unsafeUnwrap(),
      readTimeoutSeconds: props.originReadTimeoutSeconds ?? DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS,
      realtime: {
        path: REALTIME_OPERATION.path,
        domainName: this.realtime.domainName,
        stagePath: this.realtime.stagePath,
      },
    });
    new CfnOutput(this, 'BaseUrl', {
      value: `https://${this.distribution.distribution.distributionDomainName}/v1`,
      description: 'Base URL for OpenAI SDKs: every /v1 operation through CloudFront',
    });
    new CfnOutput(this, 'RealtimeBaseUrl', {
      value: `wss://${this.distribution.distribution.distributionDomainName}${REALTIME_OPERATION.path}`,
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
    new CfnOutput(this, 'AdminKeySecretArn', {
      value: this.adminKeySecret.secretArn,
      description: 'Read the key with `aws secretsmanager get-secret-value --secret-id <arn>`',
    });
  }

  private createTable(def: TableDefinition, removalPolicy: RemovalPolicy): dynamodb.TableV2 {
    return new dynamodb.TableV2(this, `${pascal(def.id)}Table`, {
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
    const allow = (actions: string[], resources: string[]) =>
      fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
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
      allow(['s3:GetObject'], [objects]);
      // Without ListBucket S3 answers a missing key with AccessDenied instead of NoSuchKey.
      allow(['s3:ListBucket'], [this.blobBucket.bucketArn]);
    }
    if (grants.blobBucket.write) allow(['s3:PutObject'], [objects]);
    if (grants.adminKeySecret.read) this.adminKeySecret.grantRead(fn);
    // Secrets Manager appends a random suffix to a secret's ARN, hence the trailing wildcard.
    const virtualKeySecrets = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${VIRTUAL_KEY_SECRET_PREFIX}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    if (grants.virtualKeySecrets.read) allow(SECRET_READ_ACTIONS, [virtualKeySecrets]);
    if (grants.virtualKeySecrets.write) allow(SECRET_WRITE_ACTIONS, [virtualKeySecrets]);
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
      );
    }
  }
}

/** The shared environment plus what only some functions get: the admin key ARN, the secret prefix. */
export function environmentFor(
  shared: Record<string, string>,
  grants: GroupGrants,
  adminKeySecretArn: string,
): Record<string, string> {
  return {
    ...shared,
    ...(grants.adminKeySecret.read ? { GATEWAY_ADMIN_KEY_SECRET_ARN: adminKeySecretArn } : {}),
    ...(grants.virtualKeySecrets.read || grants.virtualKeySecrets.write
      ? { GATEWAY_SECRET_PREFIX: VIRTUAL_KEY_SECRET_PREFIX }
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
