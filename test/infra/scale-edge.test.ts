import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGatewayApp, type GatewayStacks } from '../../lib/app';
import { GatewayStack, gatewayPropsFromContext } from '../../lib/gateway-stack';

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0b1c2d3e-aaaa-bbbb-cccc-0123456789ab';

interface DistributionConfig {
  Aliases?: string[];
  ViewerCertificate?: Record<string, unknown>;
  WebACLId?: unknown;
}

// A gateway in eu-west-1 with a custom domain: the WebACL lives in an edge stack in us-east-1.
describe('GatewayStack outside us-east-1, with a custom domain', () => {
  let app: App;
  let stacks: GatewayStacks;
  let main: Template;
  let edge: Template;
  let distribution: DistributionConfig;

  beforeAll(() => {
    app = new App({
      context: {
        ...SKIP_BUNDLING,
        'gateway:domainName': 'llm.example.com',
        'gateway:certificateArn': CERTIFICATE,
      },
    });
    stacks = createGatewayApp(app, 'LlmGateway', { env: { account: '123456789012', region: 'eu-west-1' } });
    main = Template.fromStack(stacks.gateway);
    if (!stacks.edge) throw new Error('no edge stack');
    edge = Template.fromStack(stacks.edge);
    const [resource] = Object.values(main.findResources('AWS::CloudFront::Distribution'));
    distribution = resource?.Properties.DistributionConfig as DistributionConfig;
  });

  it('creates the WebACL in an edge stack in us-east-1, and none in the regional stack', () => {
    expect(stacks.edge?.region).toBe('us-east-1');
    edge.resourceCountIs('AWS::WAFv2::WebACL', 1);
    edge.hasResourceProperties('AWS::WAFv2::WebACL', { Scope: 'CLOUDFRONT' });
    main.resourceCountIs('AWS::WAFv2::WebACL', 0);
    // The ARN crosses regions through CDK's export reader, not a hard-coded value.
    expect(JSON.stringify(distribution.WebACLId)).toMatch(/ExportsReader/);
    expect(JSON.stringify(distribution.WebACLId)).toMatch(/WebAcl/);
  });

  it('serves the custom domain with its ACM certificate, SNI and TLS 1.2 minimum', () => {
    expect(distribution.Aliases).toEqual(['llm.example.com']);
    expect(distribution.ViewerCertificate).toEqual({
      AcmCertificateArn: CERTIFICATE,
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    const outputs = main.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.BaseUrl?.Value).toBe('https://llm.example.com/v1');
  });

  it('passes cdk-nag AwsSolutions over both stacks with no unacknowledged error', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const errors = report.violations
      .filter((v) => v.severity === 'error')
      .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
    expect(errors).toEqual([]);
  });

  it('refuses a certificate outside us-east-1, half a domain setting, and a regional WebACL', () => {
    const context = (extra: Record<string, unknown>) => new App({ context: { ...SKIP_BUNDLING, ...extra } });
    expect(() => gatewayPropsFromContext(context({ 'gateway:domainName': 'llm.example.com' }).node)).toThrow(
      /together/,
    );
    const regional = context({
      'gateway:domainName': 'llm.example.com',
      'gateway:certificateArn': CERTIFICATE.replace('us-east-1', 'eu-west-1'),
      'gateway:waf': 'false',
    });
    expect(
      () =>
        new GatewayStack(regional, 'Bad', {
          ...gatewayPropsFromContext(regional.node),
          env: { region: 'eu-west-1' },
        }),
    ).toThrow(/us-east-1/);
    // Without the edge stack, a stack outside us-east-1 cannot create its own WebACL.
    const bare = context({});
    expect(
      () =>
        new GatewayStack(bare, 'Bare', {
          ...gatewayPropsFromContext(bare.node),
          env: { region: 'eu-west-1' },
        }),
    ).toThrow(/WAF for CloudFront lives in us-east-1/);
  });
});
