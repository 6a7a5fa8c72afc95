import { EMISSION_ATTRIBUTE } from '@adhoc-scheduler/shared';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { SNSEvent, SNSEventRecord } from 'aws-lambda';
import type { IConstruct } from 'constructs';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CLIENT_EXAMPLE_OUTPUTS,
  ClientExampleStack,
  clientExampleStackPropsFromContext,
} from '../../src/cdk/client-example/client-example-stack.js';
import { handler } from '../../src/cdk/client-example/consumer.js';
import { ContextError } from '../../src/cdk/context.js';
import { cdkTestApp, permissions, permissionsOf } from './cdk-test-app.js';

const EMITTER_ROLE = 'arn:aws:iam::123456789012:role/AdhocScheduler-emitter-eu-west-1';

let stack: ClientExampleStack;
let template: Template;

beforeAll(() => {
  stack = new ClientExampleStack(cdkTestApp(['Client']), 'Client', { emitterRoleArn: EMITTER_ROLE });
  template = Template.fromStack(stack);
});

const ref = (construct: IConstruct): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);

function topicPolicy(topicLogicalId: string) {
  const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy')).filter(
    (policy) => JSON.stringify(policy.Properties.Topics) === JSON.stringify([{ Ref: topicLogicalId }]),
  );
  expect(policies).toHaveLength(1);
  return policies[0]?.Properties.PolicyDocument.Statement as Record<string, unknown>[];
}

describe('the client example stack', () => {
  it('lets only the scheduler’s emitter role publish to the output and failure topics, over TLS', () => {
    template.resourceCountIs('AWS::SNS::Topic', 2);
    template.resourceCountIs('AWS::SNS::TopicPolicy', 2);
    for (const topic of [stack.outputTopic, stack.failureTopic]) {
      const statements = topicPolicy(ref(topic));
      expect(statements.filter((statement) => statement.Effect === 'Allow')).toEqual([
        {
          Sid: 'SchedulerPublishes',
          Effect: 'Allow',
          Principal: { AWS: EMITTER_ROLE },
          Action: 'sns:Publish',
          Resource: { Ref: ref(topic) },
        },
      ]);
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('subscribes the consumer function, on Node 24 and arm64, to the output topic', () => {
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: ref(stack.consumer.logGroup) } },
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps' } },
    });
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: { Ref: ref(stack.outputTopic) },
      Endpoint: stack.resolve(stack.consumer.function.functionArn),
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'sns.amazonaws.com',
      SourceArn: { Ref: ref(stack.outputTopic) },
    });
  });

  it('gives the consumer nothing but its own log group', () => {
    expect(permissionsOf(template, ref(stack.consumer.role))).toEqual(
      permissions(stack, [['logs:CreateLogStream', 'logs:PutLogEvents'], [stack.consumer.logGroup.logGroupArn]]),
    );
    const [role] = Object.values(template.findResources('AWS::IAM::Role'));
    expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('outputs the topics to use in schedule requests and where the consumer logs', () => {
    expect(template.toJSON().Outputs).toEqual({
      [CLIENT_EXAMPLE_OUTPUTS.outputTopicArn]: expect.objectContaining({ Value: { Ref: ref(stack.outputTopic) } }),
      [CLIENT_EXAMPLE_OUTPUTS.failureTopicArn]: expect.objectContaining({ Value: { Ref: ref(stack.failureTopic) } }),
      [CLIENT_EXAMPLE_OUTPUTS.consumerLogGroupName]: expect.objectContaining({ Value: { Ref: ref(stack.consumer.logGroup) } }),
    });
  });

  it('takes the scheduler’s emitter role from the CDK context and refuses anything but a role ARN', () => {
    const propsFrom = (context: Record<string, unknown>) => clientExampleStackPropsFromContext(cdkTestApp([], context).node);
    expect(propsFrom({ emitterRoleArn: EMITTER_ROLE })).toEqual({ emitterRoleArn: EMITTER_ROLE });
    expect(() => propsFrom({})).toThrow(ContextError);
    expect(() => new ClientExampleStack(cdkTestApp([]), 'Wrong', { emitterRoleArn: 'arn:aws:sns:eu-west-1:123456789012:topic' })).toThrow(
      /must be an IAM role ARN/,
    );
  });
});

describe('the consumer', () => {
  afterEach(() => vi.restoreAllMocks());

  function record(scheduledAt: string, publishedAt: string, payload: string): SNSEventRecord {
    return {
      EventSource: 'aws:sns',
      EventVersion: '1.0',
      EventSubscriptionArn: 'arn:aws:sns:eu-west-1:123456789012:output:subscription',
      Sns: {
        Type: 'Notification',
        MessageId: 'message-1',
        TopicArn: 'arn:aws:sns:eu-west-1:123456789012:output',
        Subject: '',
        Message: payload,
        Timestamp: publishedAt,
        SignatureVersion: '1',
        Signature: '',
        SigningCertUrl: '',
        UnsubscribeUrl: '',
        MessageAttributes: {
          [EMISSION_ATTRIBUTE.scheduledAt]: { Type: 'String', Value: scheduledAt },
          [EMISSION_ATTRIBUTE.eventId]: { Type: 'String', Value: 'event-1' },
          [EMISSION_ATTRIBUTE.user]: { Type: 'String', Value: 'client-a' },
        },
      },
    };
  }

  it('logs each event with its lateness at publish and at receipt', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2030-01-01T00:00:00.250Z'));
    const log = vi.spyOn(console, 'info').mockImplementation(() => {});
    const event: SNSEvent = { Records: [record('2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.040Z', 'wake up')] };
    await handler(event);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith({
      event: 'scheduled event received',
      eventId: 'event-1',
      user: 'client-a',
      scheduledAt: '2030-01-01T00:00:00.000Z',
      publishLatenessMs: 40,
      receiveLatenessMs: 250,
      payload: 'wake up',
    });
  });
});
