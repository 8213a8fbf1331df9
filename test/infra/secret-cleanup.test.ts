import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { createGatewayApp } from '../../lib/app';
import { GatewayStack, gatewayPropsFromContext } from '../../lib/gateway-stack';

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const PREFIX = 'gateway/LlmGateway/virtual-keys/';

function synth(context: Record<string, unknown>) {
  const app = new App({ context: { ...SKIP_BUNDLING, ...context } });
  const stack = new GatewayStack(app, 'LlmGateway', gatewayPropsFromContext(app.node));
  return { stack, template: Template.fromStack(stack) };
}

describe('runtime secret cleanup', () => {
  it('exists only in a stack whose removal policy is destroy', () => {
    const retained = synth({});
    expect(retained.stack.secretCleanup).toBeUndefined();
    retained.template.resourceCountIs('Custom::GatewaySecretCleanup', 0);
    expect(JSON.stringify(retained.template.toJSON())).not.toContain('secretsmanager:ListSecrets');
    const destroyed = synth({ 'gateway:removalPolicy': 'destroy' });
    expect(destroyed.stack.secretCleanup).toBeDefined();
    destroyed.template.resourceCountIs('Custom::GatewaySecretCleanup', 1);
  });

  it("runs its function on deletion with the stack's prefix and least-privilege rights", () => {
    const { stack, template } = synth({ 'gateway:removalPolicy': 'destroy' });
    const cleanup = stack.secretCleanup as NonNullable<typeof stack.secretCleanup>;
    const fnId = stack.getLogicalId(cleanup.function.node.defaultChild as never);
    template.hasResourceProperties('Custom::GatewaySecretCleanup', {
      ServiceToken: { 'Fn::GetAtt': [fnId, 'Arn'] },
      SecretPrefix: PREFIX,
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { GATEWAY_SECRET_PREFIX: PREFIX } },
      Runtime: 'nodejs22.x',
    });
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p).includes('secretsmanager:ListSecrets'),
    );
    // Only the cleanup function may list secrets.
    expect(policies).toHaveLength(1);
    const policy = policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } };
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      { Action: 'secretsmanager:ListSecrets', Effect: 'Allow', Resource: '*' },
      {
        Action: 'secretsmanager:DeleteSecret',
        Effect: 'Allow',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':secretsmanager:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              `:secret:${PREFIX}*`,
            ],
          ],
        },
      },
    ]);
    // The custom resource goes before the policy on deletion, so the function can still delete.
    const [custom] = Object.values(template.findResources('Custom::GatewaySecretCleanup'));
    const policyId = Object.entries(template.findResources('AWS::IAM::Policy')).find(
      ([, p]) => p === policy,
    )?.[0];
    expect(custom?.DependsOn).toEqual(expect.arrayContaining([policyId]));
  });

  it('passes cdk-nag AwsSolutions in a destroy stack', () => {
    const app = new App({ context: { ...SKIP_BUNDLING, 'gateway:removalPolicy': 'destroy' } });
    createGatewayApp(app, 'LlmGateway');
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const errors = report.violations
      .filter((v) => v.severity === 'error')
      .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
    expect(errors).toEqual([]);
  });
});
