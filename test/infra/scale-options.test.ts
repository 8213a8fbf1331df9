import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_RESERVED_CONCURRENCY,
  flag,
  GatewayStack,
  gatewayPropsFromContext,
  reservedConcurrencyOf,
} from '../../lib/gateway-stack';

const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

// Every optional part turned off, and concurrency from context: one synth for the file.
describe('GatewayStack with WAF and log analytics off, concurrency from context', () => {
  let stack: GatewayStack;
  let template: Template;

  beforeAll(() => {
    const app = new App({
      context: {
        ...SKIP_BUNDLING,
        'gateway:waf': 'false',
        'gateway:logAnalytics': 'false',
        'gateway:apiGatewayAccountRole': 'false',
        // As `-c` passes it: a JSON string.
        'gateway:reservedConcurrency': '{"chat": 300, "realtimeRelay": null}',
        'gateway:accountConcurrency': '3000',
      },
    });
    stack = new GatewayStack(app, 'LlmGateway', gatewayPropsFromContext(app.node));
    template = Template.fromStack(stack);
  });

  it('creates no WebACL, rule, Firehose, Glue, Athena or table stream', () => {
    for (const type of [
      'AWS::WAFv2::WebACL',
      'AWS::KinesisFirehose::DeliveryStream',
      'AWS::Glue::Table',
      'AWS::Athena::WorkGroup',
      'AWS::Lambda::EventSourceMapping',
      'AWS::ApiGateway::Account',
    ]) {
      template.resourceCountIs(type, 0);
    }
    expect(Object.keys(template.toJSON().Rules ?? {}).filter((id) => id.startsWith('WebAcl'))).toEqual([]);
    const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
    expect(distribution?.Properties.DistributionConfig.WebACLId).toBeUndefined();
    for (const table of Object.values(template.findResources('AWS::DynamoDB::GlobalTable'))) {
      expect(table.Properties.StreamSpecification).toBeUndefined();
    }
  });

  it('reserves what context says, keeps the other defaults, and scales the alarm to the quota', () => {
    const reserved = (fn: { node: { defaultChild?: unknown } }) =>
      (fn.node.defaultChild as { reservedConcurrentExecutions?: number }).reservedConcurrentExecutions;
    expect(reserved(stack.functions.chat)).toBe(300);
    expect(reserved(stack.realtime.relayFunction)).toBeUndefined();
    expect(reserved(stack.functions.control)).toBe(DEFAULT_RESERVED_CONCURRENCY.control);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ConcurrentExecutions',
      Threshold: 2400,
    });
  });
});

describe('reservedConcurrencyOf', () => {
  it('keeps the control plane reserved and the total within the quota less 100 unreserved', () => {
    expect(reservedConcurrencyOf()).toEqual(DEFAULT_RESERVED_CONCURRENCY);
    expect(() => reservedConcurrencyOf({ control: null })).toThrow(/control/);
    expect(() => reservedConcurrencyOf({ chat: 800 })).toThrow(/at most 900/);
    expect(reservedConcurrencyOf({ chat: 700 }).chat).toBe(700);
    expect(reservedConcurrencyOf({ chat: 5000 }, 10_000).chat).toBe(5000);
    expect(() => reservedConcurrencyOf({ chat: 0 })).toThrow(/positive integer/);
    expect(() => reservedConcurrencyOf({ nope: 1 } as never)).toThrow(/names no function/);
    // A new account's quota of 10 allows no reservation at all: nothing is reserved rather than a failed deploy.
    expect(reservedConcurrencyOf({}, 10)).toEqual({});
  });

  it('reads boolean context values as CDK passes them', () => {
    expect(flag('false')).toBe(false);
    expect(flag(true)).toBe(true);
    expect(() => flag('no')).toThrow(/true or false/);
  });
});
