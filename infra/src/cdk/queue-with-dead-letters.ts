import { Duration } from 'aws-cdk-lib';
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
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows: time to look at what failed and redrive it.
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: visibilityTimeoutFor(props.consumerTimeout, props.consumerBatchingWindow),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}

/**
 * Lambda's guidance for SQS event sources: six times the function timeout (plus the batching
 * window), so that messages of a throttled or retried batch are not handed out twice.
 */
export function visibilityTimeoutFor(consumerTimeout: Duration, batchingWindow: Duration = Duration.seconds(0)): Duration {
  return Duration.seconds(consumerTimeout.toSeconds() * 6 + batchingWindow.toSeconds());
}
