// AWS WAF in front of the CloudFront distribution: AWS's common rule set and Amazon IP reputation list,
// and a rate-based rule per client IP. A WebACL for CloudFront must be created in us-east-1, whatever
// the region of the gateway: lib/app.ts decides where this construct lives (inline when the gateway
// stack is in us-east-1, otherwise in a small edge stack there).
import { aws_wafv2 as wafv2 } from 'aws-cdk-lib';
import { Construct } from 'constructs';

/** Requests per client IP in any 5-minute window before WAF blocks that IP for a while. */
export const DEFAULT_WAF_RATE_LIMIT = 30_000;

/**
 * Common rule set rules that inspect the request body. Prompts are large (the set blocks bodies over
 * 8 KB) and legitimately contain code, HTML and file paths, so these only count: they show up in WAF's
 * metrics and samples, and never refuse a model call for what its prompt talks about.
 */
export const COUNTED_BODY_RULES = [
  'SizeRestrictions_BODY',
  'CrossSiteScripting_BODY',
  'GenericLFI_BODY',
  'GenericRFI_BODY',
  'EC2MetaDataSSRF_BODY',
];

export interface GatewayWebAclProps {
  /** Requests per IP per 5 minutes; WAF accepts 10 to 2,000,000,000. */
  rateLimit?: number;
  /** Prefix of the CloudWatch metric names of the ACL and its rules. */
  metricPrefix: string;
}

export class GatewayWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: GatewayWebAclProps) {
    super(scope, id);
    const rateLimit = props.rateLimit ?? DEFAULT_WAF_RATE_LIMIT;
    if (!Number.isInteger(rateLimit) || rateLimit < 10 || rateLimit > 2_000_000_000) {
      throw new Error(`the WAF rate limit must be an integer from 10 to 2000000000, got ${rateLimit}`);
    }
    const visibility = (name: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${props.metricPrefix}-${name}`,
      sampledRequestsEnabled: true,
    });
    const managed = (
      priority: number,
      name: string,
      ruleActionOverrides?: wafv2.CfnWebACL.RuleActionOverrideProperty[],
    ): wafv2.CfnWebACL.RuleProperty => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ...(ruleActionOverrides ? { ruleActionOverrides } : {}),
        },
      },
      visibilityConfig: visibility(name),
    });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      description: 'LLM gateway: AWS common rules, Amazon IP reputation, rate limit per IP',
      visibilityConfig: visibility('all'),
      rules: [
        // First, so a flood is refused before any managed rule spends capacity on it.
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: rateLimit } },
          visibilityConfig: visibility('rate-limit'),
        },
        managed(1, 'AWSManagedRulesAmazonIpReputationList'),
        managed(
          2,
          'AWSManagedRulesCommonRuleSet',
          COUNTED_BODY_RULES.map((name) => ({ name, actionToUse: { count: {} } })),
        ),
      ],
    });
  }

  get arn(): string {
    return this.webAcl.attrArn;
  }
}
