import { App, type CfnElement, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTION_GROUPS,
  type FunctionGroupName,
  type Operation,
  operationsOf,
  REALTIME_FUNCTIONS,
} from '../../functions/core/operations';
import {
  ALL_TABLES,
  LOG_FILTER_ATTRIBUTES,
  LOG_FILTER_INDEXES,
  type TableDefinition,
} from '../../functions/store/tables';
import { GatewayStack, type GatewayStackProps, gatewayPropsFromContext } from '../../lib/gateway-stack';
import { grantsFor } from '../../lib/grants';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

function synth(context: Record<string, unknown> = {}, props: GatewayStackProps = {}) {
  const app = new App({ context: { ...SKIP_BUNDLING, ...context } });
  const stack = new GatewayStack(app, 'LlmGateway', { ...gatewayPropsFromContext(app.node), ...props });
  return { stack, template: Template.fromStack(stack) };
}

const logicalId = (stack: Stack, construct: IConstruct): string =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const GROUPS = Object.keys(FUNCTION_GROUPS) as FunctionGroupName[];
// The realtime API's functions (WebSocket routes and relay) come on top of the function URL groups.
// And the log export function of the analytics pipeline (lib/analytics.ts).
const FUNCTION_COUNT = GROUPS.length + Object.keys(REALTIME_FUNCTIONS).length + 1;
const tableDef = (id: string): TableDefinition => {
  const def = ALL_TABLES.find((t) => t.id === id);
  if (!def) throw new Error(`no table ${id}`);
  return def;
};

// Anything else (PutItem, UpdateItem, DeleteItem, BatchWriteItem, PartiQL writes, `dynamodb:*`) writes.
const DYNAMODB_READ_ONLY = /^dynamodb:(GetItem|BatchGetItem|Query|Scan|ConditionCheckItem|DescribeTable)$/;

describe('GatewayStack', () => {
  let stack: GatewayStack;
  let template: Template;
  let resources: Record<
    string,
    { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }
  >;

  beforeAll(() => {
    ({ stack, template } = synth());
    resources = template.toJSON().Resources;
  });

  /** CloudFormation properties of a construct's resource; throws rather than comparing against undefined. */
  function propertiesOf(construct: IConstruct): Record<string, unknown> {
    const resource = resources[logicalId(stack, construct)];
    if (!resource) throw new Error(`no resource for ${construct.node.path}`);
    return resource.Properties;
  }

  const tableId = (id: string): string => {
    const table = (stack.tables as Record<string, IConstruct | undefined>)[id];
    if (!table) throw new Error(`no table ${id} in the stack`);
    return logicalId(stack, table);
  };
  const tableArn = (id: string) => ({ 'Fn::GetAtt': [tableId(id), 'Arn'] });
  const indexArn = (id: string, index: string) => ({
    'Fn::Join': ['', [tableArn(id), `/index/${index}`]],
  });

  /** Every statement of the function's role policies. */
  function statementsOf(group: FunctionGroupName): Statement[] {
    const fn = stack.functions[group];
    if (!fn.role) throw new Error(`${group} has no role`);
    const roleId = logicalId(stack, fn.role);
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }

  /** Actions the function may perform on exactly this resource. */
  function actionsOn(group: FunctionGroupName, resource: unknown): string[] {
    return statementsOf(group)
      .filter((s) => s.Effect === 'Allow')
      .filter((s) => asArray(s.Resource).some((r) => JSON.stringify(r) === JSON.stringify(resource)))
      .flatMap((s) => asArray(s.Action));
  }

  describe('functions', () => {
    it('creates one function per function group, with its memory, timeout and description', () => {
      template.resourceCountIs('AWS::Lambda::Function', FUNCTION_COUNT);
      for (const group of GROUPS) {
        const def = FUNCTION_GROUPS[group];
        expect(propertiesOf(stack.functions[group])).toMatchObject({
          MemorySize: def.memoryMb,
          Timeout: def.timeoutSeconds,
          Description: def.description,
          Handler: 'index.handler',
        });
      }
    });

    it('runs every function on Node.js 22 and arm64', () => {
      const functions = template.findResources('AWS::Lambda::Function');
      expect(Object.keys(functions)).toHaveLength(FUNCTION_COUNT);
      for (const fn of Object.values(functions)) {
        expect(fn.Properties.Runtime).toBe('nodejs22.x');
        expect(fn.Properties.Architectures).toEqual(['arm64']);
      }
    });

    it('gives every function a public streaming function URL with open CORS', () => {
      template.resourceCountIs('AWS::Lambda::Url', GROUPS.length);
      for (const group of GROUPS) {
        template.hasResourceProperties('AWS::Lambda::Url', {
          TargetFunctionArn: { 'Fn::GetAtt': [logicalId(stack, stack.functions[group]), 'Arn'] },
          AuthType: 'NONE',
          InvokeMode: 'RESPONSE_STREAM',
          Cors: Match.objectLike({ AllowOrigins: ['*'], AllowHeaders: ['*'], AllowMethods: ['*'] }),
        });
      }
    });

    it('gives every function a log group with the configured retention', () => {
      // One per function, the WebSocket stage's access logs and Firehose's delivery errors.
      template.resourceCountIs('AWS::Logs::LogGroup', FUNCTION_COUNT + 2);
      for (const group of GROUPS) {
        const loggingConfig = propertiesOf(stack.functions[group]).LoggingConfig as {
          LogGroup: { Ref: string };
        };
        const logGroupId = loggingConfig.LogGroup.Ref;
        expect(resources[logGroupId]?.Properties.RetentionInDays).toBe(30);
      }
    });

    it('passes table names, bucket, secret ARN and settings through the environment', () => {
      for (const group of GROUPS) {
        const env = (
          propertiesOf(stack.functions[group]).Environment as { Variables: Record<string, unknown> }
        ).Variables;
        for (const def of ALL_TABLES) expect(env[def.envVar]).toEqual({ Ref: tableId(def.id) });
        expect(env.BLOB_BUCKET).toEqual({ Ref: logicalId(stack, stack.blobBucket) });
        expect(env.GATEWAY_ORIGIN_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.originSecret) });
        // Only functions that may write the control table bootstrap the organisation from the admin key.
        if (grantsFor(operationsOf(group)).adminKeySecret.read) {
          expect(env.GATEWAY_ADMIN_KEY_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.adminKeySecret) });
        } else {
          expect(env.GATEWAY_ADMIN_KEY_SECRET_ARN).toBeUndefined();
        }
        expect(env.GATEWAY_LOG_RETENTION_DAYS).toBe('30');
        expect(env.GATEWAY_STREAM_PADDING_BYTES).toBe('0');
        expect(env.GATEWAY_SSE_KEEPALIVE_MS).toBe('15000');
        expect(env.POWERTOOLS_SERVICE_NAME).toBe('gateway');
        expect(env).not.toHaveProperty('NODE_OPTIONS');
      }
    });

    it('takes padding and retention from context, and enables source maps only when asked', () => {
      const { template: custom } = synth(
        {
          'gateway:streamPaddingBytes': '2048',
          'gateway:logRetentionDays': '90',
          'gateway:sseKeepAliveSeconds': '5',
        },
        { sourceMaps: true },
      );
      // Every gateway function; the log export function serves no request and needs none of these.
      const gatewayFunctions = Object.values(custom.findResources('AWS::Lambda::Function')).filter(
        (fn) => !fn.Properties.Environment.Variables.GATEWAY_LOG_EXPORT_STREAM,
      );
      expect(gatewayFunctions).toHaveLength(FUNCTION_COUNT - 1);
      for (const fn of gatewayFunctions) {
        expect(fn.Properties.Environment.Variables).toMatchObject({
          GATEWAY_STREAM_PADDING_BYTES: '2048',
          GATEWAY_SSE_KEEPALIVE_MS: '5000',
          GATEWAY_LOG_RETENTION_DAYS: '90',
          NODE_OPTIONS: '--enable-source-maps',
        });
      }
      custom.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    });

    it('rejects context values it cannot honour', () => {
      expect(() => synth({ 'gateway:removalPolicy': 'snapshot' })).toThrow(/removalPolicy/);
      expect(() => synth({ 'gateway:logRetentionDays': '31' })).toThrow(/logRetentionDays/);
      expect(() => synth({ 'gateway:streamPaddingBytes': '-1' })).toThrow(/streamPaddingBytes/);
      expect(() => synth({ 'gateway:sseKeepAliveSeconds': '60' })).toThrow(/sseKeepAliveSeconds/);
      expect(() => synth({ 'gateway:sseKeepAliveSeconds': 'often' })).toThrow(/sseKeepAliveSeconds/);
    });
  });

  describe('tables', () => {
    it('creates one on-demand, point-in-time-recoverable, KMS-encrypted table per definition', () => {
      template.resourceCountIs('AWS::DynamoDB::GlobalTable', ALL_TABLES.length);
      for (const def of ALL_TABLES) {
        const table = resources[tableId(def.id)];
        expect(table?.Type).toBe('AWS::DynamoDB::GlobalTable');
        expect(table?.Properties.BillingMode).toBe('PAY_PER_REQUEST');
        expect(table?.Properties.KeySchema).toEqual([
          { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: def.sortKey.name, KeyType: 'RANGE' },
        ]);
        expect(table?.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
        const replicas = table?.Properties.Replicas as { PointInTimeRecoverySpecification: unknown }[];
        expect(replicas.length).toBeGreaterThan(0);
        for (const replica of replicas) {
          expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
        }
      }
    });

    it('expires rate windows in the counters table through TTL', () => {
      expect(resources[tableId('counters')]?.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expires_at',
        Enabled: true,
      });
    });

    it('expires logs and audit entries through TTL and leaves control entities alone', () => {
      expect(resources[tableId('logs')]?.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: tableDef('logs').ttlAttribute,
        Enabled: true,
      });
      expect(tableDef('logs').ttlAttribute).toBe('expires_at');
      expect(resources[tableId('control')]?.Properties).not.toHaveProperty('TimeToLiveSpecification');
      expect(resources[tableId('audit')]?.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expires_at',
        Enabled: true,
      });
    });

    it('indexes the logs table for each filter, copying only what filters test: never ALL, never bodies', () => {
      const indexes = resources[tableId('logs')]?.Properties.GlobalSecondaryIndexes as Array<{
        IndexName: string;
        KeySchema: Array<{ AttributeName: string; KeyType: string }>;
        Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
      }>;
      expect(indexes.map((i) => i.IndexName)).toEqual([
        'by-organisation',
        ...LOG_FILTER_INDEXES.map(([name]) => name),
      ]);
      for (const index of indexes) {
        const def = tableDef('logs').globalIndexes.find((i) => i.name === index.IndexName);
        expect(index.KeySchema).toEqual([
          { AttributeName: def?.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ]);
        expect(index.Projection.ProjectionType).toBe('INCLUDE');
        for (const body of ['request', 'response', 'request_json', 'response_json', 'attempts'])
          expect(index.Projection.NonKeyAttributes).not.toContain(body);
      }
      expect(indexes[0]?.Projection.NonKeyAttributes).toEqual(['expires_at']);
      expect(indexes[1]?.Projection.NonKeyAttributes).toEqual([...LOG_FILTER_ATTRIBUTES]);
      // DynamoDB allows 100 projected attributes over all of a table's indexes.
      expect(
        indexes.reduce((n, i) => n + (i.Projection.NonKeyAttributes?.length ?? 0), 0),
      ).toBeLessThanOrEqual(100);
    });

    it('tells every function the log shard count: 8 by default, gateway:logShards to raise it', () => {
      // Every function that reads or writes the logs table.
      const shardsOf = (t: Template) =>
        Object.values(t.findResources('AWS::Lambda::Function'))
          .map(
            (f) =>
              (f as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties,
          )
          .filter((p) => p.Environment?.Variables?.TABLE_LOGS !== undefined)
          .map((p) => p.Environment?.Variables?.GATEWAY_LOG_SHARDS);
      expect(new Set(shardsOf(template))).toEqual(new Set(['8']));
      expect(new Set(shardsOf(synth({ 'gateway:logShards': '32' }).template))).toEqual(new Set(['32']));
      expect(() => synth({ 'gateway:logShards': '0' })).toThrow(/logShards/);
    });

    it('retains data by default and deletes it only when context says destroy', () => {
      const stateful = ['AWS::DynamoDB::GlobalTable', 'AWS::S3::Bucket', 'AWS::SecretsManager::Secret'];
      const policies = (t: Template) =>
        Object.values(t.toJSON().Resources as typeof resources)
          .filter((r) => stateful.includes(r.Type))
          .map((r) => r.DeletionPolicy);
      // Tables, the body, access log and analytics buckets, and the two secrets.
      expect(policies(template)).toEqual(Array(ALL_TABLES.length + 5).fill('Retain'));
      expect(policies(synth({ 'gateway:removalPolicy': 'destroy' }).template)).toEqual(
        Array(ALL_TABLES.length + 5).fill('Delete'),
      );
      expect(gatewayPropsFromContext(new App().node).removalPolicy).toBe(RemovalPolicy.RETAIN);
    });
  });

  describe('bucket and secret', () => {
    it('blocks public access, encrypts, enforces TLS and expires bodies with the logs', () => {
      expect(propertiesOf(stack.blobBucket)).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 30 })] },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    });

    it('generates the admin key in CloudFormation and outputs only its ARN', () => {
      template.hasResourceProperties('AWS::SecretsManager::Secret', {
        GenerateSecretString: { ExcludePunctuation: true, PasswordLength: 48 },
      });
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs.AdminKeySecretArn?.Value).toEqual({ Ref: logicalId(stack, stack.adminKeySecret) });
      // A dynamic reference or SecretString anywhere in outputs or env would put the value in plain sight.
      const exposed = JSON.stringify([outputs, template.findResources('AWS::Lambda::Function')]);
      expect(exposed).not.toMatch(/resolve:secretsmanager|SecretString/);
    });

    it('outputs every function URL, table name and the bucket name', () => {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      for (const group of GROUPS) {
        const name = `${group.charAt(0).toUpperCase()}${group.slice(1)}FunctionUrl`;
        expect(outputs[name]?.Value).toMatchObject({ 'Fn::GetAtt': [expect.any(String), 'FunctionUrl'] });
      }
      expect(outputs.ControlTableName?.Value).toEqual({ Ref: tableId('control') });
      expect(outputs.LogsTableName?.Value).toEqual({ Ref: tableId('logs') });
      expect(outputs.AuditTableName?.Value).toEqual({ Ref: tableId('audit') });
      expect(outputs.BlobBucketName?.Value).toEqual({ Ref: logicalId(stack, stack.blobBucket) });
    });
  });

  describe('permissions', () => {
    const allStatements = () => GROUPS.flatMap(statementsOf);

    it('names only the stack tables and their indexes in dynamodb statements', () => {
      const allowed = ALL_TABLES.flatMap((def) => [
        tableArn(def.id),
        ...def.globalIndexes.map((index) => indexArn(def.id, index.name)),
      ]).map((r) => JSON.stringify(r));
      const dynamo = allStatements().filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
      expect(dynamo.length).toBeGreaterThan(0);
      for (const s of dynamo) {
        for (const resource of asArray(s.Resource)) expect(allowed).toContain(JSON.stringify(resource));
      }
    });

    it('has no wildcard resource or wildcard action for dynamodb, s3 or secretsmanager', () => {
      const guarded = allStatements().filter((s) =>
        asArray(s.Action).some((a) => /^(dynamodb|s3|secretsmanager):/.test(a)),
      );
      expect(guarded.length).toBeGreaterThan(0);
      for (const s of guarded) {
        expect(asArray(s.Resource)).not.toContain('*');
        for (const action of asArray(s.Action)) expect(action).not.toMatch(/\*/);
      }
    });

    it('lets the chat function add log entries (PutItem only) and bodies but only read the control table', () => {
      expect(actionsOn('chat', tableArn('logs'))).toEqual(['dynamodb:PutItem']);
      expect(actionsOn('chat', tableArn('control'))).toContain('dynamodb:GetItem');
      for (const action of actionsOn('chat', tableArn('control'))) expect(action).toMatch(DYNAMODB_READ_ONLY);
      const objects = {
        'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, stack.blobBucket), 'Arn'] }, '/*']],
      };
      expect(actionsOn('chat', objects)).toEqual(['s3:PutObject']);
    });

    it('lets the logs function read logs, its index and bodies but write no table except audit entries', () => {
      expect(actionsOn('logs', tableArn('logs'))).toContain('dynamodb:Query');
      expect(actionsOn('logs', indexArn('logs', 'by-organisation'))).toContain('dynamodb:Query');
      const dynamoActions = statementsOf('logs')
        .filter(
          (s) => !asArray(s.Resource).some((r) => JSON.stringify(r) === JSON.stringify(tableArn('audit'))),
        )
        .flatMap((s) => asArray(s.Action))
        .filter((a) => a.startsWith('dynamodb:'));
      expect(dynamoActions.length).toBeGreaterThan(0);
      for (const action of dynamoActions) expect(action).toMatch(DYNAMODB_READ_ONLY);
      const objects = {
        'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(stack, stack.blobBucket), 'Arn'] }, '/*']],
      };
      expect(actionsOn('logs', objects)).toEqual(['s3:GetObject']);
    });

    it('lets every authenticating function add audit entries (PutItem only), and only control read them', () => {
      for (const group of GROUPS) {
        const actions = actionsOn(group, tableArn('audit'));
        // The dashboard function serves public files only: it authenticates no one, so it has no table at all.
        if (group === 'dashboard') {
          expect(actions).toEqual([]);
          continue;
        }
        const writes = actions.filter((a) => !DYNAMODB_READ_ONLY.test(a));
        expect(writes).toEqual(['dynamodb:PutItem']);
        if (group === 'control') expect(actions).toContain('dynamodb:Query');
        else expect(actions).toEqual(['dynamodb:PutItem']);
      }
    });

    it('lets only the control function write the control table, and not the logs', () => {
      expect(actionsOn('control', tableArn('control'))).toEqual(
        expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:DeleteItem']),
      );
      expect(actionsOn('control', tableArn('logs'))).toEqual([]);
    });

    it('scopes virtual key secrets to their prefix: control creates, rotates, deletes; chat reads', () => {
      const secretActions = (group: FunctionGroupName) =>
        statementsOf(group)
          .filter((s) => asArray(s.Action).some((a) => a.startsWith('secretsmanager:')))
          .filter((s) => JSON.stringify(s.Resource).includes('gateway/LlmGateway/virtual-keys/'));
      const prefixArn = {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':secretsmanager:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':secret:gateway/LlmGateway/virtual-keys/*',
          ],
        ],
      };
      for (const group of GROUPS) {
        for (const s of secretActions(group)) expect(s.Resource).toEqual(prefixArn);
      }
      expect(actionsOn('control', prefixArn).sort()).toEqual([
        'secretsmanager:CreateSecret',
        'secretsmanager:DeleteSecret',
        'secretsmanager:PutSecretValue',
      ]);
      expect(actionsOn('chat', prefixArn)).toEqual(['secretsmanager:GetSecretValue']);
      expect(actionsOn('logs', prefixArn)).toEqual([]);
      // Beyond the prefix, the admin key and the origin secret (read only), no function may touch any secret.
      const admin = JSON.stringify({ Ref: logicalId(stack, stack.adminKeySecret) });
      const origin = JSON.stringify({ Ref: logicalId(stack, stack.originSecret) });
      for (const s of allStatements().filter((x) =>
        asArray(x.Action).some((a) => a.startsWith('secretsmanager:')),
      )) {
        expect([JSON.stringify(prefixArn), admin, origin]).toContain(JSON.stringify(s.Resource));
        if (JSON.stringify(s.Resource) === origin) {
          for (const action of asArray(s.Action))
            expect(action).toMatch(/^secretsmanager:(GetSecretValue|DescribeSecret)$/);
        }
      }
    });

    it('passes the secret prefix only to the functions that use virtual key secrets', () => {
      const env = (group: FunctionGroupName) =>
        (propertiesOf(stack.functions[group]).Environment as { Variables: Record<string, unknown> })
          .Variables;
      expect(env('chat').GATEWAY_SECRET_PREFIX).toBe('gateway/LlmGateway/virtual-keys/');
      expect(env('control').GATEWAY_SECRET_PREFIX).toBe('gateway/LlmGateway/virtual-keys/');
      expect(env('logs').GATEWAY_SECRET_PREFIX).toBeUndefined();
    });

    it('lets chat count and charge, control write virtual key state, and logs only read counters', () => {
      expect(actionsOn('chat', tableArn('counters'))).toEqual(
        expect.arrayContaining(['dynamodb:UpdateItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']),
      );
      expect(actionsOn('control', tableArn('counters'))).toEqual(
        expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:BatchGetItem']),
      );
      expect(actionsOn('logs', tableArn('counters'))).toContain('dynamodb:Query');
      for (const action of actionsOn('logs', tableArn('counters')))
        expect(action).toMatch(DYNAMODB_READ_ONLY);
    });

    it('lets only the control function, which bootstraps the organisation, read the admin key secret', () => {
      const secret = { Ref: logicalId(stack, stack.adminKeySecret) };
      expect(actionsOn('control', secret)).toContain('secretsmanager:GetSecretValue');
      expect(actionsOn('chat', secret)).toEqual([]);
      expect(actionsOn('logs', secret)).toEqual([]);
    });
  });
});

describe('grantsFor', () => {
  const op = (o: Partial<Operation>): Operation => ({
    name: 'x',
    method: 'GET',
    path: '/v1/x',
    group: 'chat',
    access: { kind: 'authenticated' },
    logged: false,
    ...o,
  });

  it('derives log and body writes from logged operations, for any new group', () => {
    const g = grantsFor([
      op({ method: 'POST', access: { kind: 'scope', scope: 'completions.write' }, logged: true }),
    ]);
    // Entries are only ever added: PutItem, never UpdateItem or DeleteItem.
    expect(g.tables.logs).toEqual({ read: false, write: false, append: true });
    expect(g.blobBucket).toEqual({ read: false, write: true });
    expect(g.tables.control).toEqual({ read: true, write: false });
  });

  it('derives virtual key secret and counter access from model operations and virtual key scopes', () => {
    const model = grantsFor([
      op({ method: 'POST', access: { kind: 'scope', scope: 'completions.write' }, logged: true }),
    ]);
    expect(model.virtualKeySecrets).toEqual({ read: true, write: false });
    expect(model.tables.counters).toEqual({ read: true, write: true });
    const manage = grantsFor([
      op({ method: 'PATCH', access: { kind: 'scope', scope: 'virtual_keys.write' } }),
    ]);
    expect(manage.virtualKeySecrets).toEqual({ read: false, write: true });
    expect(manage.tables.counters).toEqual({ read: true, write: true });
    const read = grantsFor([op({ access: { kind: 'scope', scope: 'virtual_keys.read' } })]);
    expect(read.virtualKeySecrets).toEqual({ read: false, write: false });
    expect(read.tables.counters).toEqual({ read: true, write: false });
    expect(grantsFor([]).tables.counters).toEqual({ read: false, write: false });
  });

  it('lets every authenticating function append audit entries, and only the audit operations read them', () => {
    expect(grantsFor([op({})]).tables.audit).toEqual({ read: false, write: false, append: true });
    expect(grantsFor([op({ access: { kind: 'public' } })]).tables.audit.append).toBe(false);
    expect(grantsFor([op({ name: 'audit_logs.list', access: { kind: 'admin' } })]).tables.audit).toEqual({
      read: true,
      write: false,
      append: true,
    });
  });

  it('derives log reads from the logs.view scope', () => {
    const g = grantsFor([op({ access: { kind: 'scope', scope: 'logs.view' } })]);
    expect(g.tables.logs).toEqual({ read: true, write: false, append: false });
    expect(g.blobBucket).toEqual({ read: true, write: false });
  });

  it('derives control writes from non-GET control-plane operations only', () => {
    expect(grantsFor([op({ access: { kind: 'admin' } })]).tables.control.write).toBe(false);
    expect(grantsFor([op({ method: 'DELETE', access: { kind: 'admin' } })]).tables.control.write).toBe(true);
    expect(grantsFor([]).adminKeySecret.read).toBe(false);
    expect(grantsFor([op({ method: 'POST', access: { kind: 'admin' } })]).adminKeySecret.read).toBe(true);
  });
});
