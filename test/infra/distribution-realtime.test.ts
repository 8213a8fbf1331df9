import { App, type CfnElement, aws_lambda as lambda, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTION_GROUPS,
  type FunctionGroupName,
  OPERATIONS,
  type Operation,
  REALTIME_OPERATION,
} from '../../functions/core/operations';
import { ORIGIN_SECRET_HEADER } from '../../functions/middleware/request-context';
import { GatewayDistribution, matchesPathPattern } from '../../lib/distribution';
import { GatewayStack } from '../../lib/gateway-stack';
import { realtimeRewriteCode } from '../../lib/realtime-rewrite';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

// Managed policy ids, from the CloudFront documentation.
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

interface Origin {
  Id: string;
  DomainName: unknown;
  CustomOriginConfig: { OriginProtocolPolicy: string };
  OriginCustomHeaders?: Array<{ HeaderName: string }>;
}
interface Behaviour {
  PathPattern?: string;
  TargetOriginId: string;
  AllowedMethods: string[];
  CachePolicyId: string;
  OriginRequestPolicyId: string;
  ViewerProtocolPolicy: string;
  FunctionAssociations?: Array<{ EventType: string; FunctionARN: unknown }>;
}
interface DistributionConfig {
  Origins: Origin[];
  DefaultCacheBehavior: Behaviour;
  CacheBehaviors: Behaviour[];
}
interface CloudFrontEvent {
  request: {
    method: string;
    uri: string;
    querystring: Record<string, unknown>;
    headers: Record<string, unknown>;
  };
}

/** Runs a CloudFront Function's source the way CloudFront does: a global `handler` called with the event. */
function runFunction(code: string, event: CloudFrontEvent): CloudFrontEvent['request'] {
  const handler = new Function(`${code}\nreturn handler;`)() as (
    e: CloudFrontEvent,
  ) => CloudFrontEvent['request'];
  return handler(event);
}

const handshake = (uri: string): CloudFrontEvent => ({
  request: {
    method: 'GET',
    uri,
    querystring: {
      model: { value: 'gpt-realtime' },
      'x-trace': { value: 'a b', multiValue: [{ value: 'a b' }] },
    },
    headers: {
      upgrade: { value: 'websocket' },
      'sec-websocket-key': { value: 'dGhlIHNhbXBsZSBub25jZQ==' },
      'sec-websocket-protocol': { value: 'realtime, gateway-key.abc' },
    },
  },
});

describe('the realtime rewrite function', () => {
  const code = realtimeRewriteCode('/v1/realtime', '/v1');

  it('sends the realtime path to the stage path and leaves the query string and headers alone', () => {
    const event = handshake('/v1/realtime');
    const before = structuredClone(event.request);
    const request = runFunction(code, event);
    expect(request.uri).toBe('/v1');
    expect(request.querystring).toEqual(before.querystring);
    expect(request.headers).toEqual(before.headers);
    expect(request.method).toBe('GET');
  });

  it('leaves any other path as it is', () => {
    for (const uri of ['/v1/realtime/', '/v1/realtimeX', '/v1/REALTIME', '/v1', '/v1/chat/completions']) {
      expect(runFunction(code, handshake(uri)).uri).toBe(uri);
    }
  });

  it('refuses paths that could break out of a string literal', () => {
    expect(() => realtimeRewriteCode('/v1/realtime"); x("', '/v1')).toThrow(/plain URI path/);
    expect(() => realtimeRewriteCode('/v1/realtime', 'v1')).toThrow(/plain URI path/);
  });
});

describe('realtime through the CloudFront base URL', () => {
  let stack: GatewayStack;
  let template: Template;
  let config: DistributionConfig;
  let realtime: Behaviour;
  const logicalId = (c: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(c.node.defaultChild as CfnElement);

  beforeAll(() => {
    const app = new App({ context: SKIP_BUNDLING });
    stack = new GatewayStack(app, 'LlmGateway');
    template = Template.fromStack(stack);
    const distribution = Object.values(template.findResources('AWS::CloudFront::Distribution'))[0] as {
      Properties: { DistributionConfig: DistributionConfig };
    };
    config = distribution.Properties.DistributionConfig;
    const found = config.CacheBehaviors.find((b) => b.PathPattern === REALTIME_OPERATION.path);
    if (!found) throw new Error('no realtime behaviour');
    realtime = found;
  });

  it('serves /v1/realtime from the first behaviour, whatever the query string', () => {
    expect(REALTIME_OPERATION.path).toBe('/v1/realtime');
    // Path patterns are matched against the path alone, so `?model=...` needs no `*`.
    expect(config.CacheBehaviors[0]).toBe(realtime);
    const first = config.CacheBehaviors.find((b) =>
      matchesPathPattern(b.PathPattern as string, '/v1/realtime'),
    );
    expect(first).toBe(realtime);
    // No HTTP operation is under the realtime path, so the exact pattern takes nothing from them.
    for (const op of OPERATIONS) expect(op.path.startsWith('/v1/realtime')).toBe(false);
  });

  it("sends it over HTTPS to the WebSocket API's execute-api host, without the origin secret", () => {
    const origin = config.Origins.find((o) => o.Id === realtime.TargetOriginId);
    const domain = JSON.stringify(origin?.DomainName);
    expect(domain).toContain(logicalId(stack.realtime.api));
    expect(domain).toContain('.execute-api.');
    expect(domain).not.toContain('/');
    expect(origin?.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(origin?.OriginCustomHeaders ?? []).not.toContainEqual(
      expect.objectContaining({ HeaderName: ORIGIN_SECRET_HEADER }),
    );
    expect(realtime.ViewerProtocolPolicy).toBe('https-only');
  });

  it('caches nothing and forwards every viewer header and the query string, but not Host', () => {
    expect(realtime.CachePolicyId).toBe(CACHING_DISABLED);
    expect(realtime.OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
    expect([...realtime.AllowedMethods].sort()).toEqual(['GET', 'HEAD']);
  });

  it('rewrites the path to the stage with a cloudfront-js-2.0 viewer-request function', () => {
    const rewrite = stack.distribution.realtimeRewrite;
    if (!rewrite) throw new Error('no rewrite function');
    expect(realtime.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [logicalId(rewrite), 'FunctionARN'] } },
    ]);
    template.resourceCountIs('AWS::CloudFront::Function', 1);
    const resource = template.toJSON().Resources[logicalId(rewrite)] as {
      Properties: { AutoPublish: boolean; FunctionCode: string; FunctionConfig: { Runtime: string } };
    };
    expect(resource.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    expect(resource.Properties.AutoPublish).toBe(true);
    // The deployed source is the tested one, and it maps the public path to the stage's.
    expect(resource.Properties.FunctionCode).toBe(realtimeRewriteCode('/v1/realtime', '/v1'));
    expect(stack.realtime.stagePath).toBe('/v1');
    expect(runFunction(resource.Properties.FunctionCode, handshake('/v1/realtime')).uri).toBe('/v1');
  });

  it('outputs wss://<distribution>/v1/realtime and keeps the direct API Gateway URL', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.RealtimeBaseUrl?.Value).toEqual({
      'Fn::Join': [
        '',
        [
          'wss://',
          { 'Fn::GetAtt': [logicalId(stack.distribution.distribution), 'DomainName'] },
          '/v1/realtime',
        ],
      ],
    });
    expect(JSON.stringify(outputs.RealtimeUrl?.Value)).toContain(logicalId(stack.realtime.api));
  });
});

describe('the realtime behaviour of GatewayDistribution', () => {
  // A small stack with placeholder functions: enough to build the construct without bundling anything.
  function build(
    realtimePath: string,
    operations: readonly Pick<Operation, 'path' | 'group'>[] = OPERATIONS,
  ) {
    const stack = new Stack(new App(), 'Test');
    const functionUrls: Partial<Record<FunctionGroupName, lambda.IFunctionUrl>> = {};
    for (const group of Object.keys(FUNCTION_GROUPS) as FunctionGroupName[]) {
      const fn = new lambda.Function(stack, `${group}Fn`, {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler = async () => ({})'),
      });
      functionUrls[group] = fn.addFunctionUrl();
    }
    return new GatewayDistribution(stack, 'Cdn', {
      functionUrls: functionUrls as Record<FunctionGroupName, lambda.IFunctionUrl>,
      operations,
      defaultGroup: 'control',
      originSecret: 'secret',
      readTimeoutSeconds: 60,
      realtime: {
        path: realtimePath,
        domainName: 'abc.execute-api.eu-west-1.amazonaws.com',
        stagePath: '/v1',
      },
    });
  }

  it('refuses a realtime path with wildcards', () => {
    expect(() => build('/v1/realtime*')).toThrow(/plain path/);
  });

  it('refuses a realtime path that an HTTP operation also serves', () => {
    expect(() => build('/v1/chat/completions')).toThrow(/also the HTTP path \/v1\/chat\/completions/);
    expect(() => build('/v1/realtime', [...OPERATIONS, { path: '/v1/{thing}', group: 'chat' }])).toThrow(
      /also the HTTP path \/v1\/\{thing\}/,
    );
  });
});
