// CDK app entry: `cdk synth` / `cdk deploy` run this through `npx tsx bin/gateway.ts` (cdk.json).
import { App, Validations } from 'aws-cdk-lib';
import { createGatewayApp } from '../lib/app';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;

// Outside us-east-1 this adds the edge stack `LlmGatewayEdge` there, holding the WAF WebACL (lib/app.ts).
createGatewayApp(app, 'LlmGateway', {
  // Environment-agnostic when the CLI knows no account, so `cdk synth` works without credentials.
  ...(account || region ? { env: { account, region } } : {}),
  description: 'LLM gateway: streaming function URLs, DynamoDB state, S3 bodies, Secrets Manager keys',
});

// `-c gateway:nag=true` runs cdk-nag's AwsSolutions pack on synth; test/infra/nag.test.ts runs it always.
if (String(app.node.tryGetContext('gateway:nag')) === 'true') {
  const { AwsSolutionsChecks } = await import('cdk-nag');
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
}
