import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueueWithDeadLettersProps {
  /** Deliveries of one message before SQS moves it to the dead-letter queue. */
  readonly maxReceiveCount: number;
  /** Timeout of the function that consumes the queue. */
  readonly consumerTimeout: Duration;
  /** Batching window of that function's event source, if any. */
  readonly consumerBatchingWindow?: Duration;
}

/** A queue consumed by one function, with a dead-letter queue for what that function cannot process. */
export class QueueWithDeadLetters extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueueWithDeadLettersProps) {
    super(scope, id);
    this.deadLetterQueue = deadLetterQueue(this, 'DeadLetters');
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: visibilityTimeoutFor(props.consumerTimeout, props.consumerBatchingWindow),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}

/**
 * Where messages that could not be delivered or processed are set aside: encrypted, TLS only,
 * kept as long as SQS allows (time to look at what failed and redrive it). Every one is alarmed
 * (SchedulerMonitoring's `deadLetterQueues`).
 */
export function deadLetterQueue(scope: Construct, id: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({
    id: 'Serverless-SQSRedrivePolicy',
    reason:
      'This is a dead-letter queue, the end of its line: nothing consumes it, and its messages wait 14 days for an operator, announced by an alarm.',
  });
  return queue;
}

/**
 * Lambda's guidance for SQS event sources: six times the function timeout (plus the batching
 * window), so that messages of a throttled or retried batch are not handed out twice.
 */
export function visibilityTimeoutFor(consumerTimeout: Duration, batchingWindow: Duration = Duration.seconds(0)): Duration {
  return Duration.seconds(consumerTimeout.toSeconds() * 6 + batchingWindow.toSeconds());
}
