import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOG_EXPORT_COLUMNS } from '../../functions/store/log-export';
import { NAMED_QUERIES, TABLE_NAME } from '../../lib/analytics';
import {
  DEFAULT_RESERVED_CONCURRENCY,
  type GatewayFunctionName,
  GatewayStack,
  gatewayPropsFromContext,
} from '../../lib/gateway-stack';
import { RELAY_MAX_EVENT_AGE } from '../../lib/realtime';
import { COUNTED_BODY_RULES, DEFAULT_WAF_RATE_LIMIT } from '../../lib/waf';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties of many shapes, asserted field by field
type Json = any;
type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };

// The default stack (environment-agnostic, every context value unset): synthesised once for the file.
describe('GatewayStack at scale (defaults)', () => {
  let stack: GatewayStack;
  let template: Template;
  let resources: Record<string, Resource>;
  const idOf = (c: IConstruct) => stack.getLogicalId(c.node.defaultChild as CfnElement);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const only = (type: string): Resource => {
    const found = ofType(type);
    expect(found).toHaveLength(1);
    return (found[0] as [string, Resource])[1];
  };
  const functionsByName = (): Record<GatewayFunctionName, IConstruct> => ({
    ...stack.functions,
    realtimeSocket: stack.realtime.socketFunction,
    realtimeRelay: stack.realtime.relayFunction,
  });
  const alarmNamed = (id: string) => {
    const alarm = Object.entries(resources).find(
      ([logicalId, r]) => r.Type === 'AWS::CloudWatch::Alarm' && logicalId.startsWith(id),
    );
    if (!alarm) throw new Error(`no alarm ${id}`);
    return alarm[1].Properties;
  };

  beforeAll(() => {
    const app = new App({ context: SKIP_BUNDLING });
    stack = new GatewayStack(app, 'LlmGateway', gatewayPropsFromContext(app.node));
    template = Template.fromStack(stack);
    resources = template.toJSON().Resources;
  });

  describe('concurrency', () => {
    it('reserves concurrency for the control plane and caps the realtime relays, leaving model groups shared', () => {
      for (const [name, fn] of Object.entries(functionsByName())) {
        const reserved = resources[idOf(fn)]?.Properties.ReservedConcurrentExecutions;
        expect(reserved, name).toBe(DEFAULT_RESERVED_CONCURRENCY[name as GatewayFunctionName]);
      }
      expect(DEFAULT_RESERVED_CONCURRENCY.control).toBeGreaterThan(0);
      expect(resources[idOf(stack.functions.chat)]?.Properties.ReservedConcurrentExecutions).toBeUndefined();
    });

    it('alarms on the account-wide ConcurrentExecutions at 80% of the default quota, on the alarm topic', () => {
      const alarm = alarmNamed('ObservabilityAccountConcurrencyAlarm');
      expect(alarm).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'ConcurrentExecutions',
        Statistic: 'Maximum',
        Threshold: 800,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [{ Ref: idOf(stack.observability.alarmTopic) }],
      });
      // Account-wide: no FunctionName dimension.
      expect(alarm.Dimensions).toBeUndefined();
    });
  });

  describe('realtime relay', () => {
    it('invokes the relay at most once, drops it after a short event age and reports the failure', () => {
      const config = only('AWS::Lambda::EventInvokeConfig').Properties;
      expect(config).toMatchObject({
        FunctionName: { Ref: idOf(stack.realtime.relayFunction) },
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: RELAY_MAX_EVENT_AGE.toSeconds(),
        DestinationConfig: { OnFailure: { Destination: { Ref: idOf(stack.realtime.relayFailures) } } },
      });
      expect(RELAY_MAX_EVENT_AGE.toSeconds()).toBeLessThanOrEqual(300);
    });

    it('keeps the failure records nowhere (they carry the upstream credential) and alarms on the first one', () => {
      const topic = idOf(stack.realtime.relayFailures);
      const subscriptions = ofType('AWS::SNS::Subscription').filter(
        ([, r]) => JSON.stringify(r.Properties.TopicArn) === JSON.stringify({ Ref: topic }),
      );
      expect(subscriptions).toEqual([]);
      expect(alarmNamed('ObservabilityRelayFailureAlarm')).toMatchObject({
        Namespace: 'AWS/SNS',
        MetricName: 'NumberOfMessagesPublished',
        Dimensions: [{ Name: 'TopicName', Value: { 'Fn::GetAtt': [topic, 'TopicName'] } }],
        Threshold: 1,
        AlarmActions: [{ Ref: idOf(stack.observability.alarmTopic) }],
      });
    });

    it('alarms when sessions wait because every reserved relay is busy', () => {
      expect(alarmNamed('ObservabilityRelayThrottlesAlarm')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(stack.realtime.relayFunction) } }],
        Threshold: 1,
      });
    });

    it('writes WebSocket stage access logs with the request id, through the account logging role', () => {
      const stage = resources[idOf(stack.realtime.stage)];
      const settings = stage?.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };
      expect(settings.DestinationArn).toEqual({ 'Fn::GetAtt': [idOf(stack.realtime.accessLogs), 'Arn'] });
      expect(JSON.parse(settings.Format)).toMatchObject({
        requestId: '$context.requestId',
        connectionId: '$context.connectionId',
        routeKey: '$context.routeKey',
        status: '$context.status',
      });
      const [accountId, account] = ofType('AWS::ApiGateway::Account')[0] as [string, Resource];
      expect(account.Properties.CloudWatchRoleArn).toEqual({
        'Fn::GetAtt': [expect.stringContaining('ApiGatewayCloudWatchRole'), 'Arn'],
      });
      expect(stage?.DependsOn).toContain(accountId);
    });
  });

  describe('edge', () => {
    it('puts a CLOUDFRONT WebACL with the common rules, IP reputation and a rate rule in front of the distribution', () => {
      const acl = only('AWS::WAFv2::WebACL').Properties as {
        Scope: string;
        DefaultAction: unknown;
        Rules: Array<{ Name: string; Action?: unknown; Statement: Json }>;
      };
      expect(acl.Scope).toBe('CLOUDFRONT');
      expect(acl.DefaultAction).toEqual({ Allow: {} });
      const byName = Object.fromEntries(acl.Rules.map((r) => [r.Name, r]));
      expect(byName.RateLimitPerIp?.Statement.RateBasedStatement).toEqual({
        AggregateKeyType: 'IP',
        Limit: DEFAULT_WAF_RATE_LIMIT,
      });
      expect(byName.RateLimitPerIp?.Action).toEqual({ Block: {} });
      expect(byName.AWSManagedRulesAmazonIpReputationList?.Statement.ManagedRuleGroupStatement).toMatchObject(
        { VendorName: 'AWS', Name: 'AWSManagedRulesAmazonIpReputationList' },
      );
      const common = byName.AWSManagedRulesCommonRuleSet?.Statement.ManagedRuleGroupStatement;
      expect(common).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesCommonRuleSet' });
      // Prompts are large and full of code: body rules count instead of blocking.
      expect(common.RuleActionOverrides).toEqual(
        COUNTED_BODY_RULES.map((Name) => ({ Name, ActionToUse: { Count: {} } })),
      );
      const distribution = only('AWS::CloudFront::Distribution').Properties.DistributionConfig as Record<
        string,
        unknown
      >;
      expect(distribution.WebACLId).toEqual({
        'Fn::GetAtt': [stack.getLogicalId(stack.webAcl?.webAcl as CfnElement), 'Arn'],
      });
    });

    it('refuses, in an environment-agnostic stack, a deploy outside us-east-1 where the WebACL cannot exist', () => {
      const rules = template.toJSON().Rules as Record<string, { Assertions: Array<{ Assert: unknown }> }>;
      const rule = rules.WebAclRegionRule;
      expect(rule?.Assertions[0]?.Assert).toEqual({
        'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'],
      });
    });

    it('writes CloudFront standard logs to an encrypted, TLS-only, expiring bucket with ACLs for CloudFront', () => {
      const distribution = only('AWS::CloudFront::Distribution').Properties.DistributionConfig as {
        Logging: { Bucket: unknown; Prefix: string };
        ViewerCertificate?: unknown;
      };
      const bucketId = idOf(stack.accessLogBucket);
      expect(distribution.Logging).toEqual({
        Bucket: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] },
        Prefix: 'cloudfront/',
      });
      expect(resources[bucketId]?.Properties).toMatchObject({
        OwnershipControls: { Rules: [{ ObjectOwnership: 'ObjectWriter' }] },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
        LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 30 })] },
      });
      const tlsOnly = ofType('AWS::S3::BucketPolicy').some(
        ([, p]) =>
          JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: bucketId }) &&
          JSON.stringify(p.Properties.PolicyDocument).includes('"aws:SecureTransport":"false"'),
      );
      expect(tlsOnly).toBe(true);
      // The body and analytics buckets log their accesses there too.
      for (const bucket of [stack.blobBucket, stack.analytics?.bucket]) {
        expect(resources[idOf(bucket as IConstruct)]?.Properties.LoggingConfiguration).toMatchObject({
          DestinationBucketName: { Ref: bucketId },
        });
      }
      // Without a domain, the default certificate: no aliases, no custom TLS policy.
      expect(distribution.ViewerCertificate).toBeUndefined();
    });
  });

  describe('log analytics', () => {
    it('streams new images of the logs table to the export function, inserts and updates only', () => {
      expect(resources[idOf(stack.tables.logs)]?.Properties.StreamSpecification).toEqual({
        StreamViewType: 'NEW_IMAGE',
      });
      const mapping = only('AWS::Lambda::EventSourceMapping').Properties;
      expect(mapping).toMatchObject({
        FunctionName: { Ref: idOf(stack.analytics?.exportFunction as IConstruct) },
        EventSourceArn: { 'Fn::GetAtt': [idOf(stack.tables.logs), 'StreamArn'] },
        BisectBatchOnFunctionError: true,
        DestinationConfig: {
          OnFailure: {
            Destination: { 'Fn::GetAtt': [idOf(stack.analytics?.exportFailures as IConstruct), 'Arn'] },
          },
        },
      });
      const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters;
      expect(filters.map((f) => JSON.parse(f.Pattern))).toEqual([{ eventName: ['INSERT', 'MODIFY'] }]);
    });

    it('gives the export function PutRecordBatch on its delivery stream and nothing on the tables it does not read', () => {
      const exportFn = stack.analytics?.exportFunction;
      const roleId = idOf(exportFn?.role as IConstruct);
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
        .flatMap(
          ([, p]) => (p.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement,
        );
      const deliveryStream = stack.getLogicalId(stack.analytics?.deliveryStream as CfnElement);
      expect(statements).toContainEqual(
        expect.objectContaining({
          Action: 'firehose:PutRecordBatch',
          Resource: { 'Fn::GetAtt': [deliveryStream, 'Arn'] },
        }),
      );
      const actions = statements.flatMap((s) => [s.Action].flat() as string[]);
      expect(
        actions.filter((a) => /^dynamodb:(PutItem|UpdateItem|DeleteItem|GetItem|Query|Scan)/.test(a)),
      ).toEqual([]);
    });

    it('delivers Parquet partitioned by the entry day and workspace, schema from the Glue table', () => {
      const config = only('AWS::KinesisFirehose::DeliveryStream').Properties as {
        DeliveryStreamEncryptionConfigurationInput: unknown;
        ExtendedS3DestinationConfiguration: Json;
      };
      expect(config.DeliveryStreamEncryptionConfigurationInput).toEqual({ KeyType: 'AWS_OWNED_CMK' });
      const s3 = config.ExtendedS3DestinationConfiguration;
      expect(s3.Prefix).toBe(
        'logs/dt=!{partitionKeyFromQuery:dt}/workspace=!{partitionKeyFromQuery:workspace}/',
      );
      expect(s3.DynamicPartitioningConfiguration.Enabled).toBe(true);
      const query = s3.ProcessingConfiguration.Processors[0].Parameters.find(
        (p: { ParameterName: string }) => p.ParameterName === 'MetadataExtractionQuery',
      );
      expect(query.ParameterValue).toBe('{dt: .timestamp[0:10], workspace: .workspace}');
      expect(s3.BufferingHints.SizeInMBs).toBeGreaterThanOrEqual(64);
      const conversion = s3.DataFormatConversionConfiguration;
      expect(conversion.Enabled).toBe(true);
      expect(conversion.OutputFormatConfiguration.Serializer).toEqual({
        ParquetSerDe: { Compression: 'SNAPPY' },
      });
      expect(conversion.SchemaConfiguration.TableName).toBe(TABLE_NAME);
    });

    it('declares the Glue table from the export record columns, projected by day', () => {
      const table = only('AWS::Glue::Table').Properties.TableInput as Json;
      expect(table.Name).toBe(TABLE_NAME);
      expect(table.StorageDescriptor.Columns).toEqual(
        LOG_EXPORT_COLUMNS.map(([Name, Type]) => ({ Name, Type })),
      );
      expect(table.PartitionKeys).toEqual([{ Name: 'dt', Type: 'string' }]);
      expect(table.Parameters).toMatchObject({
        'projection.enabled': 'true',
        'projection.dt.type': 'date',
        'projection.dt.format': 'yyyy-MM-dd',
      });
      expect(table.StorageDescriptor.SerdeInfo.SerializationLibrary).toMatch(/parquet/i);
    });

    it('has an Athena workgroup writing encrypted results, with the named queries', () => {
      const workGroup = only('AWS::Athena::WorkGroup').Properties as Json;
      expect(workGroup.WorkGroupConfiguration).toMatchObject({
        EnforceWorkGroupConfiguration: true,
        ResultConfiguration: { EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } },
      });
      const queries = ofType('AWS::Athena::NamedQuery').map(([, q]) => q.Properties);
      expect(queries.map((q) => q.Name).sort()).toEqual(Object.keys(NAMED_QUERIES).sort());
      expect(Object.keys(NAMED_QUERIES).sort()).toEqual(
        ['errors-by-provider', 'slowest-requests', 'spend-by-user-model-day'].sort(),
      );
      for (const q of queries) {
        expect(q.WorkGroup).toBe(workGroup.Name);
        expect(q.QueryString).toContain(`FROM ${TABLE_NAME}`);
      }
      // Every column a query names exists in the table.
      const columns = new Set<string>([...LOG_EXPORT_COLUMNS.map(([name]) => name), 'dt']);
      for (const name of ['user', 'model', 'cost', 'latency_ms', 'provider', 'error_type', 'recorded_at']) {
        expect(columns.has(name)).toBe(true);
      }
    });
  });
});
