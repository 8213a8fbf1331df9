// The stacks of one gateway deployment. A CloudFront WAF WebACL must be created in us-east-1: a gateway
// stack in us-east-1 (or environment-agnostic) creates its own; one in any other region gets it from a
// small edge stack in us-east-1, passed across regions by CDK's cross-region references (SSM parameters
// written in us-east-1 and read back by a custom resource). `gateway:webAclArn` skips both.
import { type App, Stack, type StackProps, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { EDGE_REGION, GatewayStack, gatewayPropsFromContext } from './gateway-stack';
import { GatewayWebAcl } from './waf';

export interface EdgeStackProps extends StackProps {
  wafRateLimit?: number;
}

/** What the gateway needs from us-east-1 when it runs elsewhere: the WAF WebACL of its distribution. */
export class GatewayEdgeStack extends Stack {
  readonly webAcl: GatewayWebAcl;

  constructor(scope: Construct, id: string, props: EdgeStackProps) {
    super(scope, id, {
      ...props,
      env: { account: props.env?.account, region: EDGE_REGION },
      crossRegionReferences: true,
    });
    this.webAcl = new GatewayWebAcl(this, 'WebAcl', { rateLimit: props.wafRateLimit, metricPrefix: id });
  }
}

export interface GatewayStacks {
  gateway: GatewayStack;
  edge?: GatewayEdgeStack;
}

/** Adds the gateway stack `id` (and its edge stack when one is needed) to `app`, from its context. */
export function createGatewayApp(app: App, id: string, props: StackProps = {}): GatewayStacks {
  const settings = gatewayPropsFromContext(app.node);
  const region = props.env?.region;
  const needsEdge =
    settings.waf !== false &&
    !settings.webAclArn &&
    region !== undefined &&
    !Token.isUnresolved(region) &&
    region !== EDGE_REGION;
  if (!needsEdge) return { gateway: new GatewayStack(app, id, { ...settings, ...props }) };
  const edge = new GatewayEdgeStack(app, `${id}Edge`, {
    env: props.env,
    wafRateLimit: settings.wafRateLimit,
    description: `WAF WebACL of the ${id} CloudFront distribution (CloudFront takes WebACLs from ${EDGE_REGION} only)`,
  });
  const gateway = new GatewayStack(app, id, {
    ...settings,
    ...props,
    webAclArn: edge.webAcl.arn,
    crossRegionReferences: true,
  });
  return { gateway, edge };
}
