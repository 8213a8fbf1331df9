// CloudWatch for the gateway: a dashboard of the metrics the functions emit (functions/gateway/
// request-telemetry.ts) and of Lambda and DynamoDB, alarms on what needs a human, and an SNS topic they
// notify (with an email subscription when one is configured).
import {
  aws_cloudwatch_actions as actions,
  CfnOutput,
  aws_cloudwatch as cloudwatch,
  Duration,
  type aws_dynamodb as dynamodb,
  type aws_lambda as lambda,
  Stack,
  aws_sns as sns,
  aws_sns_subscriptions as subscriptions,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE } from '../functions/gateway/request-telemetry';

export interface GatewayObservabilityProps {
  /** The gateway's functions, by function group. */
  functions: Record<string, lambda.IFunction>;
  /** The gateway's tables, by table id. */
  tables: Record<string, dynamodb.ITableV2>;
  /** Subscribed to the alarm topic when set. */
  alarmEmail?: string;
  /** The `service` dimension of the gateway's metrics (POWERTOOLS_SERVICE_NAME). */
  serviceName?: string;
  /** Percentage of 5xx replies over five minutes that raises the alarm. */
  serverErrorRatePercent?: number;
  /**
   * p99 latency that raises the alarm. Model calls take seconds, so the default is generous: it catches
   * a stuck upstream or gateway, not a slow model.
   */
  latencyP99Ms?: number;
}

export const DEFAULT_SERVER_ERROR_RATE_PERCENT = 5;
export const DEFAULT_LATENCY_P99_MS = 60_000;

const PERIOD = Duration.minutes(5);
const pascal = (id: string): string => id.charAt(0).toUpperCase() + id.slice(1);

export class GatewayObservability extends Construct {
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarmTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: GatewayObservabilityProps) {
    super(scope, id);
    const service = props.serviceName ?? 'gateway';
    const errorRate = props.serverErrorRatePercent ?? DEFAULT_SERVER_ERROR_RATE_PERCENT;
    const latencyP99 = props.latencyP99Ms ?? DEFAULT_LATENCY_P99_MS;

    const gatewayMetric = (metricName: string, statistic: string, label?: string) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service },
        statistic,
        period: PERIOD,
        ...(label ? { label } : {}),
      });
    // Provider, model and operation values are not known at deploy time: the graphs find them.
    const search = (dimensions: string, metricName: string, statistic: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimensions}} MetricName="${metricName}" service="${service}"', '${statistic}', ${PERIOD.toSeconds()})`,
        usingMetrics: {},
        label,
        period: PERIOD,
      });

    const requests = gatewayMetric(METRIC.requests, 'Sum', 'Requests');
    const serverErrorRate = new cloudwatch.MathExpression({
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: { requests, errors: gatewayMetric(METRIC.serverErrors, 'Sum') },
      label: '5xx rate (%)',
      period: PERIOD,
    });
    const latencyP99Metric = gatewayMetric(METRIC.latency, 'p99', 'Latency p99');

    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'LLM gateway alarms',
      enforceSSL: true,
    });
    if (props.alarmEmail)
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    const alarm = (
      alarmId: string,
      metric: cloudwatch.IMetric,
      options: Partial<cloudwatch.AlarmProps> & { threshold: number; alarmDescription: string },
    ) => this.addAlarm(alarmId, metric, options);

    // Three periods in a row, so that one bad burst on a quiet gateway does not page anyone.
    alarm('ServerErrorRateAlarm', serverErrorRate, {
      threshold: errorRate,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      alarmDescription: `More than ${errorRate}% of gateway replies were 5xx for 15 minutes.`,
    });
    alarm('LatencyP99Alarm', latencyP99Metric, {
      threshold: latencyP99,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      alarmDescription: `p99 gateway latency above ${latencyP99} ms for 15 minutes.`,
    });
    for (const [group, fn] of Object.entries(props.functions)) {
      // The handlers answer every error themselves: any Lambda error is a crash or a timeout.
      alarm(`${pascal(group)}FunctionErrorsAlarm`, fn.metricErrors({ period: PERIOD, statistic: 'Sum' }), {
        threshold: 1,
        alarmDescription: `The ${group} function failed invocations (crash or timeout).`,
      });
      alarm(
        `${pascal(group)}FunctionThrottlesAlarm`,
        fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        {
          threshold: 1,
          alarmDescription: `The ${group} function was throttled: raise its concurrency or the account limit.`,
        },
      );
    }
    for (const [tableId, table] of Object.entries(props.tables)) {
      alarm(`${pascal(tableId)}TableThrottlesAlarm`, tableThrottles(tableId, table), {
        threshold: 1,
        alarmDescription: `DynamoDB throttled requests to the ${tableId} table.`,
      });
    }

    const fns = Object.entries(props.functions);
    const perFunction = (metric: (fn: lambda.IFunction) => cloudwatch.Metric) =>
      fns.map(([group, fn]) => metric(fn).with({ label: group, period: PERIOD }));
    const graph = (
      title: string,
      left: cloudwatch.IMetric[],
      extra: Partial<cloudwatch.GraphWidgetProps> = {},
    ) => new cloudwatch.GraphWidget({ title, left, width: 8, height: 6, ...extra });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${Stack.of(this).stackName}-gateway`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# LLM gateway\nMetrics in namespace \`${METRICS_NAMESPACE}\` (service \`${service}\`), emitted once per request after its reply. Cost is in USD.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph('Requests and 5xx rate', [requests], {
        right: [serverErrorRate],
        rightYAxis: { min: 0, max: 100, label: '%', showUnits: false },
      }),
      graph('Errors by origin', [
        gatewayMetric(METRIC.gatewayErrors, 'Sum', 'gateway'),
        gatewayMetric(METRIC.providerErrors, 'Sum', 'provider'),
        gatewayMetric(METRIC.clientDisconnects, 'Sum', 'client disconnects'),
        gatewayMetric(METRIC.clientErrors, 'Sum', 'all 4xx'),
      ]),
      graph('Latency (ms)', [
        gatewayMetric(METRIC.latency, 'p50', 'latency p50'),
        latencyP99Metric,
        gatewayMetric(METRIC.upstreamLatency, 'p99', 'upstream p99'),
        gatewayMetric(METRIC.timeToFirstChunk, 'p50', 'first chunk p50'),
        gatewayMetric(METRIC.timeToFirstChunk, 'p99', 'first chunk p99'),
      ]),
    );
    this.dashboard.addWidgets(
      graph('Cost by provider and model (USD)', [search('provider,model', METRIC.cost, 'Sum', '')]),
      graph('Tokens by provider and model', [
        search('provider,model', METRIC.promptTokens, 'Sum', 'prompt'),
        search('provider,model', METRIC.completionTokens, 'Sum', 'completion'),
      ]),
      graph('Requests by operation', [search('operation', METRIC.requests, 'Sum', '')]),
    );
    this.dashboard.addWidgets(
      graph(
        'Lambda invocations',
        perFunction((fn) => fn.metricInvocations({ statistic: 'Sum' })),
      ),
      graph('Lambda errors and throttles', [
        ...perFunction((fn) => fn.metricErrors({ statistic: 'Sum' })).map((m) =>
          m.with({ label: `${m.label} errors` }),
        ),
        ...perFunction((fn) => fn.metricThrottles({ statistic: 'Sum' })).map((m) =>
          m.with({ label: `${m.label} throttles` }),
        ),
      ]),
      graph(
        'Lambda duration p99 (ms)',
        perFunction((fn) => fn.metricDuration({ statistic: 'p99' })),
      ),
    );
    const tables = Object.entries(props.tables);
    this.dashboard.addWidgets(
      graph(
        'DynamoDB throttled requests',
        tables.map(([tableId, table]) => tableThrottles(tableId, table).with({ label: tableId })),
      ),
      graph(
        'DynamoDB consumed capacity',
        tables.flatMap(([tableId, table]) => [
          table.metricConsumedReadCapacityUnits({ period: PERIOD, label: `${tableId} read` }),
          table.metricConsumedWriteCapacityUnits({ period: PERIOD, label: `${tableId} write` }),
        ]),
      ),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 8, height: 6 }),
    );

    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.alarmTopic.topicArn,
      description: 'SNS topic of the gateway alarms: subscribe email, chat or paging to it',
    });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboardName });
  }

  /** An alarm that notifies the alarm topic when it fires and when it clears. */
  addAlarm(
    alarmId: string,
    metric: cloudwatch.IMetric,
    options: Partial<cloudwatch.AlarmProps> & { threshold: number; alarmDescription: string },
  ): cloudwatch.Alarm {
    const created = new cloudwatch.Alarm(this, alarmId, {
      metric,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No traffic is not an incident.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...options,
    });
    const notify = new actions.SnsAction(this.alarmTopic);
    created.addAlarmAction(notify);
    created.addOkAction(notify);
    this.alarms.push(created);
    return created;
  }
}

/** Read and write throttle events of a table (its indexes' writes included), summed. */
function tableThrottles(tableId: string, table: dynamodb.ITableV2): cloudwatch.MathExpression {
  // Metric ids must be unique within a graph that shows every table.
  const reads = `reads_${tableId}`;
  const writes = `writes_${tableId}`;
  return new cloudwatch.MathExpression({
    expression: `${reads} + ${writes}`,
    usingMetrics: {
      [reads]: table.metric('ReadThrottleEvents', { statistic: 'Sum', period: PERIOD }),
      [writes]: table.metric('WriteThrottleEvents', { statistic: 'Sum', period: PERIOD }),
    },
    period: PERIOD,
  });
}
