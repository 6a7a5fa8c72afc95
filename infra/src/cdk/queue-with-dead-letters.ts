import { SQS_MAX_MESSAGE_BYTES } from '@adhoc-scheduler/shared';
import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEAD_LETTER_RETENTION_DAYS, visibilityTimeoutSeconds } from '../queues.js';

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
  /** How long a message handed to the consumer stays hidden (see visibilityTimeoutSeconds). */
  readonly visibilityTimeout: Duration;

  constructor(scope: Construct, id: string, props: QueueWithDeadLettersProps) {
    super(scope, id);
    this.deadLetterQueue = deadLetterQueue(this, 'DeadLetters');
    this.visibilityTimeout = Duration.seconds(
      visibilityTimeoutSeconds(props.consumerTimeout.toSeconds(), props.consumerBatchingWindow?.toSeconds()),
    );
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: this.visibilityTimeout,
      // Set, not assumed: the senders batch and size their messages to this limit (limits.ts).
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}

/**
 * Where messages that could not be delivered or processed are set aside: encrypted, TLS only,
 * kept DEAD_LETTER_RETENTION_DAYS. Every one is alarmed (SchedulerMonitoring's `deadLetterQueues`).
 */
export function deadLetterQueue(scope: Construct, id: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(DEAD_LETTER_RETENTION_DAYS),
    // As large as the queue it serves, or SQS could not set aside that queue's largest message.
    maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
  });
  Validations.of(queue).acknowledge({
    id: 'Serverless-SQSRedrivePolicy',
    reason: `This is a dead-letter queue, the end of its line: nothing consumes it, and its messages wait ${DEAD_LETTER_RETENTION_DAYS} days for an operator, announced by an alarm.`,
  });
  return queue;
}
