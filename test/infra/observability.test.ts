import { App, type CfnElement, aws_dynamodb as dynamodb, aws_lambda as lambda, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_GROUPS, type FunctionGroupName } from '../../functions/core/operations';
import { METRIC } from '../../functions/gateway/request-telemetry';
import { TABLES } from '../../functions/store/tables';
import { lambdaBundling } from '../../lib/bundling';
import { GatewayStack, gatewayPropsFromContext } from '../../lib/gateway-stack';
import { GatewayObservability } from '../../lib/observability';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...SKIP_BUNDLING, ...context } });
  const stack = new GatewayStack(app, 'LlmGateway', gatewayPropsFromContext(app.node));
  return { stack, template: Template.fromStack(stack) };
}

const GROUPS = Object.keys(FUNCTION_GROUPS) as FunctionGroupName[];
const TABLE_IDS = Object.keys(TABLES);

interface AlarmProps {
  AlarmName?: string;
  AlarmDescription: string;
  MetricName?: string;
  Namespace?: string;
  ExtendedStatistic?: string;
  Statistic?: string;
  Threshold: number;
  EvaluationPeriods: number;
  ComparisonOperator: string;
  TreatMissingData: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: { MetricName: string }; Stat: string };
  }[];
  AlarmActions: unknown[];
  OKActions: unknown[];
}

describe('GatewayObservability', () => {
  let stack: GatewayStack;
  let template: Template;
  let alarms: AlarmProps[];
  const idOf = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

  beforeAll(() => {
    ({ stack, template } = synth({ 'gateway:alarmEmail': 'oncall@example.com' }));
    alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (r) => r.Properties as AlarmProps,
    );
  });

  it('creates an SNS topic, subscribes the configured email, and outputs the topic', () => {
    // The alarm topic, the realtime relay's failure topic (a signal without subscribers) and the budget
    // alert topic (test/infra/budget-alerts.test.ts).
    template.resourcePropertiesCountIs('AWS::SNS::Topic', { DisplayName: 'LLM gateway alarms' }, 1);
    template.resourceCountIs('AWS::SNS::Topic', 3);
    const topic = { Ref: idOf(stack.observability.alarmTopic) };
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: topic,
    });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const arnOutput = Object.entries(outputs).find(([name]) => name.includes('AlarmTopicArn'));
    expect(arnOutput?.[1].Value).toEqual(topic);
  });

  it('notifies the topic of every alarm, on alarm and on recovery', () => {
    const topic = { Ref: idOf(stack.observability.alarmTopic) };
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([topic]);
      expect(alarm.OKActions).toEqual([topic]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
  });

  it('alarms on the 5xx rate of the gateway, over three periods', () => {
    const rate = alarms.find((a) =>
      a.Metrics?.some((m) => m.Expression?.includes('100 * errors / requests')),
    );
    expect(rate).toBeDefined();
    expect(rate).toMatchObject({
      Threshold: 5,
      EvaluationPeriods: 3,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    const names = rate?.Metrics?.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
    expect(names?.sort()).toEqual([METRIC.requests, METRIC.serverErrors].sort());
  });

  it('alarms on p99 latency of the gateway metrics', () => {
    const latency = alarms.find((a) =>
      a.Metrics?.some((m) => m.MetricStat?.Metric.MetricName === METRIC.latency),
    );
    expect(latency).toMatchObject({ Threshold: 60_000, EvaluationPeriods: 3 });
    expect(latency?.Metrics?.[0]?.MetricStat).toEqual({
      Metric: {
        Namespace: 'LlmGateway',
        MetricName: METRIC.latency,
        Dimensions: [{ Name: 'service', Value: 'gateway' }],
      },
      Period: 300,
      Stat: 'p99',
    });
  });

  it('alarms on errors and throttles of every function', () => {
    for (const group of GROUPS) {
      const fn = { Ref: idOf(stack.functions[group]) };
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarms).toContainEqual(
          expect.objectContaining({
            Namespace: 'AWS/Lambda',
            MetricName: metric,
            Statistic: 'Sum',
            Threshold: 1,
            Dimensions: [{ Name: 'FunctionName', Value: fn }],
          }),
        );
      }
    }
  });

  it('alarms on read and write throttling of every table', () => {
    const throttleAlarms = alarms.filter((a) =>
      a.Metrics?.some((m) => m.MetricStat?.Metric.MetricName === 'ReadThrottleEvents'),
    );
    expect(throttleAlarms).toHaveLength(TABLE_IDS.length);
    for (const alarm of throttleAlarms) {
      const names = alarm.Metrics?.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
      expect(names?.sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      expect(alarm.Threshold).toBe(1);
    }
  });

  it('has a CloudWatch dashboard of the gateway, Lambda and DynamoDB metrics', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'LlmGateway-gateway' });
    const body = JSON.stringify(
      Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    for (const name of Object.values(METRIC)) expect(body).toContain(name);
    expect(body).toContain('LlmGateway');
    // Provider and model values are found at view time by search expressions.
    expect(body).toMatch(/SEARCH\('\{LlmGateway,service,provider,model\} MetricName=[^']*Cost/);
    for (const group of GROUPS) expect(body).toContain(idOf(stack.functions[group]));
    for (const table of TABLE_IDS) expect(body).toContain(`reads_${table}`);
    expect(body).toContain('alarm');
  });

  it('gives the dashboard function no access to any table or bucket, and no secret but the origin header', () => {
    const fn = stack.functions.dashboard;
    const roleId = idOf(fn.role as IConstruct);
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: roleId }] },
    });
    const documents = Object.values(policies).map((p) => p.Properties.PolicyDocument);
    expect(JSON.stringify(documents)).not.toMatch(/dynamodb:|s3:/);
    // Behind CloudFront like every function, it checks the origin secret header, and may read only that.
    const secretStatements = documents
      .flatMap((d) => d.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
      .filter((st) => JSON.stringify(st.Action).includes('secretsmanager:'));
    expect(secretStatements.length).toBeGreaterThan(0);
    for (const st of secretStatements) {
      expect(st.Resource).toEqual({ Ref: idOf(stack.originSecret) });
    }
  });

  it('builds the dashboard files into the dashboard function, and only there', () => {
    const hooks = lambdaBundling(false, 'dashboard').commandHooks;
    expect(hooks?.afterBundling('/repo', '/out')).toEqual([
      '"/repo/node_modules/.bin/tsx" "/repo/scripts/bundle-function.ts" "/repo/functions/handlers/dashboard.ts" "/out"',
      '"/repo/node_modules/.bin/tsx" "/repo/dashboard/build.ts" "/out/dashboard"',
    ]);
    // Every function group is bundled again with code splitting (lazy chunks); only the dashboard gets files.
    expect(lambdaBundling(true, 'chat').commandHooks?.afterBundling('/repo', '/out')).toEqual([
      '"/repo/node_modules/.bin/tsx" "/repo/scripts/bundle-function.ts" "/repo/functions/handlers/chat.ts" "/out" --sourcemap',
    ]);
    expect(lambdaBundling(false).commandHooks).toBeUndefined();
  });

  it('has no subscription without an email, and rejects a gateway:alarmEmail that is not an address', () => {
    // The construct alone around one small function and table: a whole gateway stack is slow to synthesise.
    const small = new Stack(new App(), 'Small');
    const fn = new lambda.Function(small, 'Fn', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = async () => {};'),
    });
    const table = new dynamodb.TableV2(small, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    });
    new GatewayObservability(small, 'Observability', { functions: { chat: fn }, tables: { logs: table } });
    const quiet = Template.fromStack(small);
    quiet.resourceCountIs('AWS::SNS::Topic', 1);
    quiet.resourceCountIs('AWS::SNS::Subscription', 0);
    quiet.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    quiet.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: Match.anyValue() });
    const context = (value: string) => new App({ context: { 'gateway:alarmEmail': value } }).node;
    expect(() => gatewayPropsFromContext(context('not an address'))).toThrow(/alarmEmail/);
    expect(gatewayPropsFromContext(context('ops@example.com')).alarmEmail).toBe('ops@example.com');
  });
});
