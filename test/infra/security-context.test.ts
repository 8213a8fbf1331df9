import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { GatewayStack, gatewayPropsFromContext } from '../../lib/gateway-stack';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

function synth(name: string, context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...SKIP_BUNDLING, ...context } });
  const stack = new GatewayStack(app, name, gatewayPropsFromContext(app.node));
  return { stack, template: Template.fromStack(stack) };
}

const chatEnv = (stack: GatewayStack) => {
  const fn = Template.fromStack(stack).toJSON().Resources[
    stack.getLogicalId(stack.functions.chat.node.defaultChild as never)
  ] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
  return fn.Properties.Environment.Variables;
};

describe('security settings from CDK context', () => {
  it('refuses private hosts and keeps the admin key from coming back unless the operator says so', () => {
    const { stack } = synth('Plain');
    expect(chatEnv(stack).GATEWAY_ALLOW_PRIVATE_HOSTS).toBeUndefined();
    expect(chatEnv(stack).GATEWAY_RECOVER_ADMIN_KEY).toBeUndefined();
    const { stack: open } = synth('Open', {
      'gateway:allowPrivateHosts': 'true',
      'gateway:recoverAdminKey': true,
    });
    expect(chatEnv(open).GATEWAY_ALLOW_PRIVATE_HOSTS).toBe('true');
    expect(chatEnv(open).GATEWAY_RECOVER_ADMIN_KEY).toBe('1');
  });

  it('scopes virtual key secrets to the stack, so two stacks cannot read each other', () => {
    const a = synth('StackA');
    const b = synth('StackB');
    expect(chatEnv(a.stack).GATEWAY_SECRET_PREFIX).toBe('gateway/StackA/virtual-keys/');
    expect(chatEnv(b.stack).GATEWAY_SECRET_PREFIX).toBe('gateway/StackB/virtual-keys/');
    const json = JSON.stringify(a.template.toJSON());
    expect(json).toContain(':secret:gateway/StackA/virtual-keys/*');
    expect(json).not.toContain('gateway/StackB/');
  });

  it('sends the pinned origin secret version after a rotation', () => {
    const { template } = synth('Rotated', { 'gateway:originSecretVersionId': 'v-2222' });
    expect(JSON.stringify(template.toJSON())).toMatch(/SecretString:::v-2222}}/);
  });
});
