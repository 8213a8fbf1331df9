import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { REALTIME_FUNCTIONS } from '../../functions/core/operations';
import { TABLES } from '../../functions/store/tables';
import { GatewayStack } from '../../lib/gateway-stack';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new GatewayStack(app, 'LlmGateway');

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const logicalId = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

describe('realtime API', () => {
  let template: Template;
  let resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  beforeAll(() => {
    template = Template.fromStack(stack);
    resources = template.toJSON().Resources;
  });

  function statementsOf(fn: IConstruct & { role?: IConstruct }): Statement[] {
    if (!fn.role) throw new Error('no role');
    const roleId = logicalId(fn.role);
    return Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }
  const actionsOf = (fn: IConstruct & { role?: IConstruct }, prefix: string) =>
    statementsOf(fn).flatMap((s) =>
      asArray(s.Action)
        .filter((a) => a.startsWith(prefix))
        .map((a) => ({ a, s })),
    );

  it('creates a WebSocket API with $connect, $default and $disconnect routed to the socket function', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    const routes = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route');
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const integrations = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Integration');
    expect(integrations).toHaveLength(3);
    for (const integration of integrations) {
      expect(integration.Properties.IntegrationType).toBe('AWS_PROXY');
      expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(
        logicalId(stack.realtime.socketFunction),
      );
    }
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'v1', AutoDeploy: true });
  });

  it('outputs the wss URL of the stage', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const url = JSON.stringify(outputs.RealtimeUrl?.Value);
    expect(url).toContain('wss://');
    expect(url).toContain(logicalId(stack.realtime.api));
    expect(url).toContain('/v1');
  });

  it("runs both functions on Node.js 22 arm64, the relay for Lambda's full 15 minutes", () => {
    for (const [fn, def] of [
      [stack.realtime.socketFunction, REALTIME_FUNCTIONS.realtimeSocket],
      [stack.realtime.relayFunction, REALTIME_FUNCTIONS.realtimeRelay],
    ] as const) {
      expect(resources[logicalId(fn)]?.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: def.memoryMb,
        Timeout: def.timeoutSeconds,
      });
    }
    expect(REALTIME_FUNCTIONS.realtimeRelay.timeoutSeconds).toBe(900);
  });

  it('creates the connections table with TTL', () => {
    expect(resources[logicalId(stack.tables.connections)]?.Properties.TimeToLiveSpecification).toEqual({
      AttributeName: TABLES.connections.ttlAttribute,
      Enabled: true,
    });
  });

  it('lets only the relay and the socket function manage connections, and only on their own stage', () => {
    // The socket function posts the error event of a client message it could not queue.
    for (const fn of [stack.realtime.relayFunction, stack.realtime.socketFunction]) {
      const manage = actionsOf(fn, 'execute-api:');
      expect(manage.map((m) => m.a)).toEqual(['execute-api:ManageConnections']);
      const resource = JSON.stringify(manage[0]?.s.Resource);
      expect(resource).toContain(logicalId(stack.realtime.api));
      expect(resource).toContain('/v1/*/@connections/*');
    }
    for (const fn of Object.values(stack.functions)) expect(actionsOf(fn, 'execute-api:')).toEqual([]);
  });

  it('scopes SQS to the per-connection queues: the socket creates and sends, the relay receives', () => {
    const prefix = stack.realtime.queuePrefix;
    const socket = actionsOf(stack.realtime.socketFunction, 'sqs:');
    const relay = actionsOf(stack.realtime.relayFunction, 'sqs:');
    expect(socket.map((m) => m.a).sort()).toEqual([
      'sqs:CreateQueue',
      'sqs:DeleteQueue',
      'sqs:GetQueueAttributes',
      'sqs:SendMessage',
    ]);
    expect(relay.map((m) => m.a).sort()).toEqual([
      'sqs:DeleteMessage',
      'sqs:DeleteQueue',
      'sqs:ReceiveMessage',
    ]);
    for (const { s } of [...socket, ...relay]) {
      expect(JSON.stringify(s.Resource)).toContain(`:${prefix}*`);
      expect(s.Resource).not.toBe('*');
    }
  });

  it('lets the socket function start the relay and write connection state; the relay reads no credential', () => {
    const invoke = actionsOf(stack.realtime.socketFunction, 'lambda:');
    expect(invoke.map((m) => m.a)).toContain('lambda:InvokeFunction');
    expect(JSON.stringify(invoke[0]?.s.Resource)).toContain(logicalId(stack.realtime.relayFunction));
    const connections = { 'Fn::GetAtt': [logicalId(stack.tables.connections), 'Arn'] };
    for (const fn of [stack.realtime.socketFunction, stack.realtime.relayFunction]) {
      const onTable = statementsOf(fn)
        .filter((s) => asArray(s.Resource).some((r) => JSON.stringify(r) === JSON.stringify(connections)))
        .flatMap((s) => asArray(s.Action));
      expect(onTable).toEqual(
        expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem']),
      );
    }
    for (const fn of Object.values(stack.functions)) {
      expect(JSON.stringify(statementsOf(fn))).not.toContain(logicalId(stack.tables.connections));
    }
    expect(actionsOf(stack.realtime.relayFunction, 'secretsmanager:')).toEqual([]);
    expect(actionsOf(stack.realtime.socketFunction, 'secretsmanager:').map((m) => m.a)).toEqual([
      'secretsmanager:GetSecretValue',
    ]);
  });

  it('tells the functions where the queues, the relay and the management API are', () => {
    const env = (fn: IConstruct) => {
      const resource = resources[logicalId(fn)];
      if (!resource) throw new Error(`no resource for ${fn.node.path}`);
      return (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    };
    expect(env(stack.realtime.socketFunction)).toMatchObject({
      GATEWAY_REALTIME_QUEUE_PREFIX: stack.realtime.queuePrefix,
      GATEWAY_REALTIME_RELAY_FUNCTION: { Ref: logicalId(stack.realtime.relayFunction) },
      GATEWAY_REALTIME_QUEUE_URL_BASE: expect.anything(),
      GATEWAY_REALTIME_MANAGEMENT_URL: expect.anything(),
    });
    expect(env(stack.realtime.relayFunction)).toMatchObject({
      GATEWAY_REALTIME_QUEUE_PREFIX: stack.realtime.queuePrefix,
      GATEWAY_REALTIME_MANAGEMENT_URL: expect.anything(),
    });
    expect(env(stack.realtime.relayFunction)).not.toHaveProperty('GATEWAY_SECRET_PREFIX');
  });
});
