import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayStack } from '../../lib/gateway-stack';

// An empty list tells CDK to skip asset bundling: these tests are about the template, not the bundles.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let stack: GatewayStack;
let template: Template;
let topicId: string;

beforeAll(() => {
  const app = new App({ context: SKIP_BUNDLING });
  stack = new GatewayStack(app, 'LlmGateway');
  template = Template.fromStack(stack);
  topicId = stack.getLogicalId(stack.budgetAlertTopic.node.defaultChild as CfnElement);
});

describe('budget alerts on AWS', () => {
  it('has a topic of its own, named in an output', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { DisplayName: 'LLM gateway budget alerts' });
    template.hasOutput('BudgetAlertTopicArn', { Value: { Ref: topicId } });
  });

  it('tells the model functions the topic and lets them publish to it', () => {
    const chatId = stack.getLogicalId(stack.functions.chat.node.defaultChild as CfnElement);
    const chat = template.findResources('AWS::Lambda::Function')[chatId];
    expect(chat?.Properties.Environment.Variables.GATEWAY_ALERT_TOPIC_ARN).toEqual({ Ref: topicId });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'sns:Publish', Effect: 'Allow', Resource: { Ref: topicId } }),
        ]),
      },
      Roles: Match.arrayWith([
        { Ref: stack.getLogicalId(stack.functions.chat.role?.node.defaultChild as CfnElement) },
      ]),
    });
  });
});
