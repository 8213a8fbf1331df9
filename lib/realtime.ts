// The realtime API on AWS: an API Gateway WebSocket API whose `$connect`, `$default` and `$disconnect`
// routes invoke one small function, and a relay function, invoked asynchronously per session, that owns
// the provider's socket. Client messages reach the relay through one SQS FIFO queue per connection; the
// relay answers through the stage's `@connections` management API.
import { join } from 'node:path';
import {
  ArnFormat,
  aws_apigateway as apigw,
  aws_apigatewayv2 as apigwv2,
  Duration,
  aws_lambda_destinations as destinations,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  aws_sns as sns,
  Validations,
} from 'aws-cdk-lib';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Construct } from 'constructs';
import { type FunctionGroup, REALTIME_FUNCTIONS } from '../functions/core/operations';
import type { GroupGrants } from './grants';
import { acknowledgeFunctionDefaults, acknowledgeWildcardResource } from './nag';

/** The stage name is the last path segment of the WebSocket URL, like `/v1` of the HTTP base URL. */
export const REALTIME_STAGE = 'v1';

export interface RealtimeApiProps {
  repoRoot: string;
  /** The environment every function gets (table names, bucket, settings). */
  environment: Record<string, string>;
  /** What `$connect` needs as a model operation (grantsFor of the realtime operation). */
  socketGrants: GroupGrants;
  /** Adds the statements of `grants` to a function's role (tables, bucket, secrets). */
  grantData(fn: lambda.IFunction, grants: GroupGrants): void;
  /** The environment a function needs for its grants (secret prefix). */
  environmentFor(grants: GroupGrants): Record<string, string>;
  bundling: nodejs.BundlingOptions;
  logRetention: logs.RetentionDays;
  removalPolicy: RemovalPolicy;
  /**
   * Create the region's API Gateway CloudWatch role (an account setting that stage access logs need).
   * Off when the account already has one that another stack manages.
   */
  apiGatewayAccountRole?: boolean;
}

/** A relay that has not started by then is of no use: its client has given up. */
export const RELAY_MAX_EVENT_AGE = Duration.minutes(2);

// GetQueueAttributes: `$connect` accepts a connection only once its new queue answers.
const SQS_SOCKET_ACTIONS = [
  'sqs:CreateQueue',
  'sqs:GetQueueAttributes',
  'sqs:SendMessage',
  'sqs:DeleteQueue',
];
const SQS_RELAY_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:DeleteQueue'];

export class RealtimeApi extends Construct {
  readonly api: apigwv2.WebSocketApi;
  readonly stage: apigwv2.WebSocketStage;
  readonly socketFunction: nodejs.NodejsFunction;
  readonly relayFunction: nodejs.NodejsFunction;
  /** Every per-connection queue's name starts with this, so IAM names exactly those queues. */
  readonly queuePrefix: string;
  /** Receives the record of every relay invocation that failed or expired before it ran. */
  readonly relayFailures: sns.Topic;
  readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RealtimeApiProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.queuePrefix = `${stack.stackName.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 30)}-rt-`;
    const queueArns = stack.formatArn({
      service: 'sqs',
      resource: `${this.queuePrefix}*`,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });

    // The socket routes authenticate and route like an HTTP model call; the relay only logs and charges.
    const socketGrants: GroupGrants = {
      ...props.socketGrants,
      tables: { ...props.socketGrants.tables, connections: { read: true, write: true } },
      // Realtime providers are reached over WebSocket, never through Bedrock.
      bedrockInvoke: false,
    };
    const relayGrants: GroupGrants = {
      tables: {
        control: { read: false, write: false },
        logs: { read: false, write: false, append: true },
        counters: { read: true, write: true },
        audit: { read: false, write: false },
        connections: { read: true, write: true },
      },
      blobBucket: { read: false, write: true },
      adminKeySecret: { read: false },
      virtualKeySecrets: { read: false, write: false },
      bedrockInvoke: false,
    };

    const realtimeEnv = {
      GATEWAY_REALTIME_QUEUE_URL_BASE: `https://sqs.${stack.region}.${stack.urlSuffix}/${stack.account}/`,
      GATEWAY_REALTIME_QUEUE_PREFIX: this.queuePrefix,
    };
    this.relayFunction = this.createFunction('RealtimeRelay', REALTIME_FUNCTIONS.realtimeRelay, props, {
      ...props.environment,
      ...props.environmentFor(relayGrants),
      ...realtimeEnv,
    });
    this.socketFunction = this.createFunction('RealtimeSocket', REALTIME_FUNCTIONS.realtimeSocket, props, {
      ...props.environment,
      ...props.environmentFor(socketGrants),
      ...realtimeEnv,
      GATEWAY_REALTIME_RELAY_FUNCTION: this.relayFunction.functionName,
    });

    const integration = (name: string) => new WebSocketLambdaIntegration(name, this.socketFunction);
    this.api = new apigwv2.WebSocketApi(this, 'Api', {
      description: 'LLM gateway realtime API (/v1/realtime)',
      connectRouteOptions: { integration: integration('ConnectIntegration') },
      defaultRouteOptions: { integration: integration('DefaultIntegration') },
      disconnectRouteOptions: { integration: integration('DisconnectIntegration') },
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stage = new apigwv2.WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: REALTIME_STAGE,
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogs),
        // One line per handshake, message and disconnect: who, which route, what status, how long.
        format: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            connectionId: '$context.connectionId',
            eventType: '$context.eventType',
            routeKey: '$context.routeKey',
            status: '$context.status',
            requestTime: '$context.requestTimeEpoch',
            sourceIp: '$context.identity.sourceIp',
            integrationLatency: '$context.integrationLatency',
            error: '$context.error.message',
          }),
        ),
      },
    });
    if (props.apiGatewayAccountRole ?? true) this.createAccountRole();
    // Every route authenticates in the socket function ($connect checks the gateway key or JWT and
    // refuses the upgrade; later routes act only for a connection $connect accepted).
    for (const route of ['$connect', '$default', '$disconnect']) {
      const child = this.api.node.tryFindChild(`${route}-Route`);
      if (child) {
        Validations.of(child).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'The socket function authenticates $connect itself (gateway key or JWT, like every HTTP route)',
        });
      }
    }
    this.relayFunction.addEnvironment('GATEWAY_REALTIME_MANAGEMENT_URL', this.stage.callbackUrl);
    this.socketFunction.addEnvironment('GATEWAY_REALTIME_MANAGEMENT_URL', this.stage.callbackUrl);

    props.grantData(this.socketFunction, socketGrants);
    props.grantData(this.relayFunction, relayGrants);
    this.socketFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: SQS_SOCKET_ACTIONS, resources: [queueArns] }),
    );
    this.relayFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: SQS_RELAY_ACTIONS, resources: [queueArns] }),
    );
    const queuesReason =
      "One queue per connection, created at $connect: the grant names this stack's queue prefix only";
    acknowledgeWildcardResource(this.socketFunction, queueArns, queuesReason);
    acknowledgeWildcardResource(this.relayFunction, queueArns, queuesReason);
    this.relayFunction.grantInvoke(this.socketFunction);
    acknowledgeWildcardResource(
      this.socketFunction,
      `${this.relayFunction.functionArn}:*`,
      'grantInvoke names the relay function and its versions; no other function',
    );
    // A retried relay would open a second provider socket for the same session; an old one serves nobody.
    // The failure record holds the relay job, which carries the upstream's authorization header: the
    // topic is a signal for the alarm and keeps nothing, so subscribe no email or queue to it.
    this.relayFailures = new sns.Topic(this, 'RelayFailures', {
      displayName: 'LLM gateway realtime relay failures',
      enforceSSL: true,
    });
    this.relayFunction.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: RELAY_MAX_EVENT_AGE,
      onFailure: new destinations.SnsDestination(this.relayFailures),
    });
    // execute-api:ManageConnections on this stage's @connections only (post, delete, get); the socket
    // function posts only the error event of a client message it could not queue.
    for (const fn of [this.relayFunction, this.socketFunction]) {
      this.stage.grantManagementApiAccess(fn);
      acknowledgeWildcardResource(
        fn,
        stack.formatArn({
          service: 'execute-api',
          resource: this.api.apiId,
          resourceName: `${REALTIME_STAGE}/*/@connections/*`,
        }),
        "Connections are created by clients at runtime: the grant names this stage's @connections only",
      );
    }
  }

  /**
   * API Gateway writes stage logs with a role set once per account and region (like RestApi's
   * `cloudWatchRole`); the role is kept on delete because the account setting outlives the stack.
   */
  private createAccountRole(): void {
    const role = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs'),
      ],
    });
    role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The AWS managed policy API Gateway documents for its account logging role',
    });
    const account = new apigw.CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.stage.node.defaultChild?.node.addDependency(account);
  }

  /** The URL clients connect to: `wss://<api>.execute-api.<region>.amazonaws.com/v1`. */
  get url(): string {
    return this.stage.url;
  }

  /** The API's host name, for CloudFront to use as an origin (the base URL's `/v1/realtime`). */
  get domainName(): string {
    const stack = Stack.of(this);
    return `${this.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
  }

  /** The stage's path, the only path on which API Gateway accepts the WebSocket handshake. */
  get stagePath(): string {
    return `/${REALTIME_STAGE}`;
  }

  private createFunction(
    id: string,
    def: FunctionGroup,
    props: RealtimeApiProps,
    environment: Record<string, string>,
  ): nodejs.NodejsFunction {
    const fn = new nodejs.NodejsFunction(this, `${id}Function`, {
      entry: join(props.repoRoot, def.entry),
      handler: 'handler',
      projectRoot: props.repoRoot,
      depsLockFilePath: join(props.repoRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: def.memoryMb,
      timeout: Duration.seconds(def.timeoutSeconds),
      description: def.description,
      bundling: props.bundling,
      environment,
      logGroup: new logs.LogGroup(this, `${id}FunctionLogs`, {
        retention: props.logRetention,
        removalPolicy: props.removalPolicy,
      }),
    });
    acknowledgeFunctionDefaults(fn);
    return fn;
  }
}
