import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FUNCTION_GROUPS,
  type FunctionGroupName,
  OPERATIONS,
  REALTIME_OPERATION,
} from '../../functions/core/operations';
import { ORIGIN_SECRET_HEADER } from '../../functions/middleware/request-context';
import { distributionRoutes, matchesPathPattern } from '../../lib/distribution';
import { GatewayStack, gatewayPropsFromContext } from '../../lib/gateway-stack';

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...SKIP_BUNDLING, ...context } });
  const stack = new GatewayStack(app, 'LlmGateway', gatewayPropsFromContext(app.node));
  return { stack, template: Template.fromStack(stack) };
}

interface Origin {
  Id: string;
  DomainName: unknown;
  CustomOriginConfig: { OriginReadTimeout?: number; OriginProtocolPolicy: string };
  OriginCustomHeaders: Array<{ HeaderName: string; HeaderValue: unknown }>;
}
interface Behaviour {
  PathPattern?: string;
  TargetOriginId: string;
  AllowedMethods: string[];
  CachePolicyId: string;
  OriginRequestPolicyId: string;
  ViewerProtocolPolicy: string;
  Compress?: boolean;
}
interface DistributionConfig {
  Origins: Origin[];
  DefaultCacheBehavior: Behaviour;
  CacheBehaviors: Behaviour[];
}

// Managed policy ids, from the CloudFront documentation.
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

describe('CloudFront base URL', () => {
  let stack: GatewayStack;
  let template: Template;
  let config: DistributionConfig;
  // The HTTP behaviours and their origins: the realtime behaviour has its own test file.
  let httpBehaviours: Behaviour[];
  let functionUrlOrigins: Origin[];

  beforeAll(() => {
    ({ stack, template } = synth());
    const distributions = template.findResources('AWS::CloudFront::Distribution');
    expect(Object.keys(distributions)).toHaveLength(1);
    config = (Object.values(distributions)[0] as { Properties: { DistributionConfig: DistributionConfig } })
      .Properties.DistributionConfig;
    httpBehaviours = [
      config.DefaultCacheBehavior,
      ...config.CacheBehaviors.filter((b) => b.PathPattern !== REALTIME_OPERATION.path),
    ];
    const realtimeOrigin = config.CacheBehaviors.find(
      (b) => b.PathPattern === REALTIME_OPERATION.path,
    )?.TargetOriginId;
    functionUrlOrigins = config.Origins.filter((o) => o.Id !== realtimeOrigin);
  });

  /** Which function group's URL an origin points at, from its domain expression. */
  function groupOfOrigin(originId: string): FunctionGroupName {
    const origin = config.Origins.find((o) => o.Id === originId);
    const text = JSON.stringify(origin?.DomainName);
    const group = (Object.keys(FUNCTION_GROUPS) as FunctionGroupName[]).find((g) => {
      const fn = stack.functions[g];
      const urlId = stack.getLogicalId(fn.node.findChild('FunctionUrl').node.defaultChild as CfnElement);
      return text.includes(`"${urlId}"`);
    });
    if (!group) throw new Error(`origin ${originId} points at no function URL`);
    return group;
  }

  /** The group CloudFront sends a path to: the first behaviour whose pattern matches, else the default. */
  function routeOf(path: string): FunctionGroupName {
    const behaviour = config.CacheBehaviors.find((b) => matchesPathPattern(b.PathPattern as string, path));
    return groupOfOrigin((behaviour ?? config.DefaultCacheBehavior).TargetOriginId);
  }

  it('routes every path of operations.ts to the function of its group', () => {
    for (const op of OPERATIONS) {
      const path = op.path.replace(/\{\w+\}/g, 'sample_id-1');
      expect(`${op.method} ${path} -> ${routeOf(path)}`).toBe(`${op.method} ${path} -> ${op.group}`);
    }
  });

  it('has one behaviour per path pattern derived from operations.ts, most specific first', () => {
    const routes = distributionRoutes(OPERATIONS, 'control');
    // The realtime behaviour comes first, then exactly the derived ones.
    expect(config.CacheBehaviors.map((b) => b.PathPattern)).toEqual([
      REALTIME_OPERATION.path,
      ...routes.map((r) => r.pathPattern),
    ]);
    // One behaviour covers a whole family of paths of one function...
    expect(routes).toContainEqual({ pathPattern: '/v1/responses*', group: 'responses' });
    expect(routes).toContainEqual({ pathPattern: '/v1/audio/*', group: 'media' });
    expect(routes.map((r) => r.pathPattern)).not.toContain('/v1/responses/*/cancel');
    // ...but never reaches into another function's paths: /v1/organisation stays with the default.
    expect(routes.map((r) => r.pathPattern)).not.toContain('/v1/o*');
    // Well inside CloudFront's default quota of 25 cache behaviours, with room to grow.
    expect(routes.length).toBeLessThanOrEqual(20);
  });

  it('refuses two groups claiming one path pattern', () => {
    expect(() =>
      distributionRoutes(
        [
          { path: '/v1/a/{x}', group: 'chat' },
          { path: '/v1/a/{y}', group: 'media' },
        ],
        'control',
      ),
    ).toThrow(/both chat and media/);
  });

  it('caches nothing, allows every method, keeps HTTPS, does not compress, forwards all but Host', () => {
    // The default behaviour in, exactly one (the realtime one) out.
    expect(httpBehaviours).toHaveLength(config.CacheBehaviors.length);
    for (const b of httpBehaviours) {
      expect(b.CachePolicyId).toBe(CACHING_DISABLED);
      expect(b.OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
      expect([...b.AllowedMethods].sort()).toEqual([
        'DELETE',
        'GET',
        'HEAD',
        'OPTIONS',
        'PATCH',
        'POST',
        'PUT',
      ]);
      expect(b.ViewerProtocolPolicy).toBe('https-only');
      expect(b.Compress).toBe(false);
    }
  });

  it('sends the origin secret header from Secrets Manager to every function URL origin over HTTPS', () => {
    const secretRef = stack.getLogicalId(stack.originSecret.node.defaultChild as CfnElement);
    expect(functionUrlOrigins.length).toBe(Object.keys(FUNCTION_GROUPS).length);
    for (const origin of functionUrlOrigins) {
      expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
      const header = origin.OriginCustomHeaders.find((h) => h.HeaderName === ORIGIN_SECRET_HEADER);
      expect(JSON.stringify(header?.HeaderValue)).toContain('resolve:secretsmanager:');
      expect(JSON.stringify(header?.HeaderValue)).toContain(secretRef);
    }
  });

  it('uses a 60 s origin read timeout by default and takes a higher one from context', () => {
    for (const origin of functionUrlOrigins) expect(origin.CustomOriginConfig.OriginReadTimeout).toBe(60);
    const raised = synth({ 'gateway:originReadTimeoutSeconds': '180' }).template;
    const cfg = (
      Object.values(raised.findResources('AWS::CloudFront::Distribution'))[0] as {
        Properties: { DistributionConfig: DistributionConfig };
      }
    ).Properties.DistributionConfig;
    const raisedOrigins = cfg.Origins.filter((o) => functionUrlOrigins.some((f) => f.Id === o.Id));
    expect(raisedOrigins).toHaveLength(functionUrlOrigins.length);
    for (const origin of raisedOrigins) expect(origin.CustomOriginConfig.OriginReadTimeout).toBe(180);
    expect(() => synth({ 'gateway:originReadTimeoutSeconds': '500' })).toThrow(/origin read timeout/);
  });

  it('outputs the base URL as https://<domain>/v1', () => {
    const output = template.toJSON().Outputs.BaseUrl;
    const value = JSON.stringify(output.Value);
    expect(value).toContain('https://');
    expect(value).toContain('DomainName');
    expect(value).toContain('/v1');
  });
});
