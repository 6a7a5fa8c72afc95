import { CfnOutput, Duration, Stack, Token, Validations, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct, Node } from 'constructs';
import { fileURLToPath } from 'node:url';
import { contextString, ContextError } from '../context.js';
import { NodeFunction } from '../node-function.js';

export const DEFAULT_CLIENT_EXAMPLE_STACK_NAME = 'AdhocSchedulerClientExample';

/** Keys of the stack's outputs. */
export const CLIENT_EXAMPLE_OUTPUTS = {
  outputTopicArn: 'OutputTopicArn',
  failureTopicArn: 'FailureTopicArn',
  consumerLogGroupName: 'ConsumerLogGroupName',
} as const;

/** Context key: the scheduler stack's `EmitterRoleArn` output. */
export const CLIENT_EXAMPLE_CONTEXT = {
  emitterRoleArn: 'emitterRoleArn',
} as const;

export interface ClientExampleStackProps extends StackProps {
  /**
   * The scheduler's emitter role, the only one that publishes to clients' topics: events to the
   * output topic, failure notices (rejected requests and failed publishes) to the failure topic.
   */
  readonly emitterRoleArn: string;
}

/**
 * What a client of the scheduler deploys in its own account: an output topic and a failure
 * topic that the scheduler's emitter role may publish to, and a function subscribed to the
 * output topic that logs each event with its lateness.
 */
export class ClientExampleStack extends Stack {
  readonly outputTopic: sns.Topic;
  readonly failureTopic: sns.Topic;
  readonly consumer: NodeFunction;

  constructor(scope: Construct, id: string, props: ClientExampleStackProps) {
    super(scope, id, { description: 'Ad hoc scheduler client example: output and failure topics, and a consumer', ...props });
    const emitter = new iam.ArnPrincipal(roleArn(CLIENT_EXAMPLE_CONTEXT.emitterRoleArn, props.emitterRoleArn));

    this.outputTopic = new sns.Topic(this, 'OutputTopic', { enforceSSL: true });
    allowPublish(this.outputTopic, emitter);
    this.failureTopic = new sns.Topic(this, 'FailureTopic', { enforceSSL: true });
    allowPublish(this.failureTopic, emitter);

    this.consumer = new NodeFunction(this, 'Consumer', {
      entry: fileURLToPath(new URL('./consumer.ts', import.meta.url)),
      description: 'Logs each scheduled event and its lateness',
      timeout: Duration.seconds(10),
      memorySize: 256,
      logRetention: logs.RetentionDays.ONE_WEEK,
    });
    this.outputTopic.addSubscription(new subscriptions.LambdaSubscription(this.consumer.function));
    // A consumer whose events matter sets aside what it cannot take: a redrive policy on its
    // subscription and a dead-letter queue (or on-failure destination) on its function.
    const onlyLogs =
      "The example's consumer only logs each event's lateness for someone trying the scheduler out: a delivery it loses costs one log line, not data.";
    Validations.of(this.consumer).acknowledge(
      { id: 'Serverless-LambdaDLQ', reason: onlyLogs },
      { id: 'Serverless-SNSRedrivePolicy', reason: onlyLogs },
    );

    new CfnOutput(this, CLIENT_EXAMPLE_OUTPUTS.outputTopicArn, {
      value: this.outputTopic.topicArn,
      description: 'Use as "target" in schedule requests',
    });
    new CfnOutput(this, CLIENT_EXAMPLE_OUTPUTS.failureTopicArn, {
      value: this.failureTopic.topicArn,
      description: 'Use as "failure_topic" in schedule requests',
    });
    new CfnOutput(this, CLIENT_EXAMPLE_OUTPUTS.consumerLogGroupName, {
      value: this.consumer.logGroup.logGroupName,
      description: 'Where the consumer logs each event and its lateness',
    });
  }
}

function allowPublish(topic: sns.Topic, publisher: iam.IPrincipal): void {
  topic.addToResourcePolicy(
    new iam.PolicyStatement({ sid: 'SchedulerPublishes', principals: [publisher], actions: ['sns:Publish'], resources: [topic.topicArn] }),
  );
}

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

/** A topic policy naming anything else fails only at deployment; fail at synth instead. */
function roleArn(name: string, value: string): string {
  if (!Token.isUnresolved(value) && !ROLE_ARN.test(value)) throw new ContextError(`${name} must be an IAM role ARN, got "${value}"`);
  return value;
}

export function clientExampleStackPropsFromContext(node: Node): ClientExampleStackProps {
  const emitterRoleArn = contextString(node, CLIENT_EXAMPLE_CONTEXT.emitterRoleArn);
  if (emitterRoleArn === undefined) {
    throw new ContextError(
      `the scheduler's emitter role is required: -c ${CLIENT_EXAMPLE_CONTEXT.emitterRoleArn}=<the scheduler stack's EmitterRoleArn output>`,
    );
  }
  return { emitterRoleArn };
}
