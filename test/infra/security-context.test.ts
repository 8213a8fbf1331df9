import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
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
  // Two stacks, synthesized once: the defaults, and every security context value set.
  let plain: ReturnType<typeof synth>;
  let open: ReturnType<typeof synth>;
  beforeAll(() => {
    plain = synth('StackA');
    open = synth('StackB', {
      'gateway:allowPrivateHosts': 'true',
      'gateway:recoverAdminKey': true,
      'gateway:originSecretVersionId': 'v-2222',
    });
  });

  it('refuses private hosts and keeps the admin key from coming back unless the operator says so', () => {
    expect(chatEnv(plain.stack).GATEWAY_ALLOW_PRIVATE_HOSTS).toBeUndefined();
    expect(chatEnv(plain.stack).GATEWAY_RECOVER_ADMIN_KEY).toBeUndefined();
    expect(chatEnv(open.stack).GATEWAY_ALLOW_PRIVATE_HOSTS).toBe('true');
    expect(chatEnv(open.stack).GATEWAY_RECOVER_ADMIN_KEY).toBe('1');
  });

  it('scopes virtual key secrets to the stack, so two stacks cannot read each other', () => {
    expect(chatEnv(plain.stack).GATEWAY_SECRET_PREFIX).toBe('gateway/StackA/virtual-keys/');
    expect(chatEnv(open.stack).GATEWAY_SECRET_PREFIX).toBe('gateway/StackB/virtual-keys/');
    const json = JSON.stringify(plain.template.toJSON());
    expect(json).toContain(':secret:gateway/StackA/virtual-keys/*');
    expect(json).not.toContain('gateway/StackB/');
  });

  it('sends the pinned origin secret version after a rotation', () => {
    expect(JSON.stringify(open.template.toJSON())).toMatch(/SecretString:::v-2222}}/);
    expect(JSON.stringify(plain.template.toJSON())).not.toMatch(/SecretString:::v-/);
  });
});
