import { App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { createGatewayApp } from '../../lib/app';

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

// The pack over the app as bin/gateway.ts builds it (environment-agnostic, every default on). Every
// acknowledgement lives in lib/ beside its resource, so `-c gateway:nag=true` on synth reports the same.
// scale-edge.test.ts runs it over the cross-region variant.
describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged error over the default app', () => {
    const app = new App({ context: SKIP_BUNDLING });
    createGatewayApp(app, 'LlmGateway');
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const errors = report.violations
      .filter((v) => v.severity === 'error')
      .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
    expect(errors).toEqual([]);
    // The pack did look: the stack has resources of the kinds its rules check.
    expect(app.node.findAll().length).toBeGreaterThan(100);
  });
});
