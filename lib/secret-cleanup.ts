// Virtual-key secrets are created at runtime, so CloudFormation does not delete them with the stack. In a
// stack whose removal policy is `destroy`, this custom resource deletes them on `cdk destroy`.
import { join } from 'node:path';
import {
  ArnFormat,
  CustomResource,
  Duration,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledgeFunctionDefaults, acknowledgeWildcardResource } from './nag';

export const SECRET_CLEANUP_ENTRY = 'functions/handlers/secret-cleanup.ts';

export interface SecretCleanupProps {
  repoRoot: string;
  /** The name prefix of the secrets to delete, ending in `/`. */
  secretPrefix: string;
  bundling: nodejs.BundlingOptions;
  logRetention: logs.RetentionDays;
}

export class SecretCleanup extends Construct {
  readonly function: nodejs.NodejsFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: SecretCleanupProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: join(props.repoRoot, SECRET_CLEANUP_ENTRY),
      handler: 'handler',
      projectRoot: props.repoRoot,
      depsLockFilePath: join(props.repoRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(10),
      description:
        "On stack deletion, deletes the virtual-key secrets created at runtime under the stack's prefix",
      bundling: props.bundling,
      environment: { GATEWAY_SECRET_PREFIX: props.secretPrefix },
      // Deleted with the stack like everything else in a `destroy` stack.
      logGroup: new logs.LogGroup(this, 'Logs', {
        retention: props.logRetention,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    acknowledgeFunctionDefaults(this.function);
    // Secrets Manager appends a random suffix to a secret's ARN, hence the trailing wildcard.
    const secrets = stack.formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${props.secretPrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const policy = new iam.Policy(this, 'Policy', {
      statements: [
        // ListSecrets has no resource-level permissions; the handler filters by the prefix.
        new iam.PolicyStatement({ actions: ['secretsmanager:ListSecrets'], resources: ['*'] }),
        new iam.PolicyStatement({ actions: ['secretsmanager:DeleteSecret'], resources: [secrets] }),
      ],
    });
    this.function.role?.attachInlinePolicy(policy);
    acknowledgeWildcardResource(
      policy,
      '*',
      'secretsmanager:ListSecrets supports no resource-level permissions; it reveals names and metadata, never values',
    );
    acknowledgeWildcardResource(
      policy,
      secrets,
      'Virtual-key secrets are created at runtime: the grant names exactly the secrets under their name prefix',
    );
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.function.functionArn,
      resourceType: 'Custom::GatewaySecretCleanup',
      properties: { SecretPrefix: props.secretPrefix },
    });
    // Deleted before the policy, so that the function may still delete when its turn comes.
    this.resource.node.addDependency(policy);
  }
}
