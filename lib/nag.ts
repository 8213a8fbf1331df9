// cdk-nag (AwsSolutions) acknowledgements that recur on many resources, with their reasons. Each call
// site sits next to the resource it excuses; test/infra/nag.test.ts runs the pack over the app.
import { type aws_lambda as lambda, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** cdk-nag's flat form of a CloudFormation reference (`<Logical.Arn>/*`, `<AWS::Partition>`). */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const o = node as Record<string, unknown>;
  if (o['Fn::Join']) {
    const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (o['Fn::Sub']) return flatten(o['Fn::Sub']);
  if (o['Fn::GetAtt']) {
    const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (o['Fn::ImportValue']) return flatten(o['Fn::ImportValue']);
  if (o.Ref) return `<${flatten(o.Ref)}>`;
  return JSON.stringify(node);
}

/** Acknowledges AwsSolutions-IAM5 for one wildcard resource of a policy under `scope`. */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  const flat = flatten(Stack.of(scope).resolve(resource));
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason });
}

/** What every function of the stack shares: the Node.js 22 runtime and the basic execution role. */
export function acknowledgeFunctionDefaults(fn: lambda.Function): void {
  Validations.of(fn).acknowledge(
    {
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime the bundles target (lib/bundling.ts) and the tests run on; moving on is a deliberate change',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        'The AWS managed policy grants only CloudWatch Logs writes, which every function needs for its log group',
    },
  );
}
