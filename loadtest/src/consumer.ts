import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteTopicCommand, SubscribeCommand, UnsubscribeCommand, type SNSClient } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createSchedulerTarget } from '@adhoc-scheduler/quickstart/client-topics';
import { EMISSION_ATTRIBUTE, parseDueDate, SQS_BATCH_ENTRIES, SQS_MAX_WAIT_SECONDS } from '@adhoc-scheduler/shared';
import type { FailureReceipt, Receipt } from './tracker.js';

/** The run's own output topic and the queue that receives it, as a client of the scheduler sets them up. */
export interface ConsumerEndpoint {
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly subscriptionArn: string;
}

/**
 * Creates the output topic as the quickstart does (the scheduler's emitter role may publish to
 * it) and a queue subscribed to it with raw delivery, so the event's attributes arrive as SQS
 * message attributes. A queue is the consumer everywhere: locally SNS delivers only to SQS, and
 * on AWS a queue measures the same delivery without a Lambda cold start in the numbers.
 */
export async function createConsumerEndpoint(
  sns: SNSClient,
  sqs: SQSClient,
  name: string,
  emitterRoleArn: string,
  // Long enough that no message comes back while its delete is still queued behind others.
  visibilityTimeoutSeconds = 300,
): Promise<ConsumerEndpoint> {
  const topicArn = await createSchedulerTarget(sns, name, emitterRoleArn);
  const { QueueUrl: queueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        MessageRetentionPeriod: '3600',
        ReceiveMessageWaitTimeSeconds: String(SQS_MAX_WAIT_SECONDS),
      },
    }),
  );
  if (!queueUrl) throw new Error(`CreateQueue returned no URL for ${name}`);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const queueArn = Attributes?.QueueArn;
  if (!queueArn) throw new Error(`no ARN for queue ${name}`);
  const queuePolicy = {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'OutputTopicDelivers',
        Effect: 'Allow',
        Principal: { Service: 'sns.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        Condition: { ArnEquals: { 'aws:SourceArn': topicArn } },
      },
    ],
  };
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { Policy: JSON.stringify(queuePolicy) } }));
  const { SubscriptionArn: subscriptionArn } = await sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: queueArn,
      Attributes: { RawMessageDelivery: 'true' },
      ReturnSubscriptionArn: true,
    }),
  );
  if (!subscriptionArn) throw new Error(`Subscribe returned no ARN for ${name}`);
  return { topicArn, queueUrl, queueArn, subscriptionArn };
}

export async function deleteConsumerEndpoint(sns: SNSClient, sqs: SQSClient, endpoint: ConsumerEndpoint): Promise<void> {
  await sns.send(new UnsubscribeCommand({ SubscriptionArn: endpoint.subscriptionArn }));
  await sns.send(new DeleteTopicCommand({ TopicArn: endpoint.topicArn }));
  await sqs.send(new DeleteQueueCommand({ QueueUrl: endpoint.queueUrl }));
}

export interface ConsumerStats {
  readonly receives: number;
  readonly emptyReceives: number;
  readonly receiveErrors: number;
  readonly deleteErrors: number;
}

export interface Consumer {
  /** Ends the long polls and sends the deletes still queued. */
  stop(): Promise<ConsumerStats>;
}

export function receiptOf(message: Message, receivedAt: number): Receipt {
  const attributes = message.MessageAttributes ?? {};
  const scheduledText = attributes[EMISSION_ATTRIBUTE.scheduledAt]?.StringValue;
  const publishedText = attributes[EMISSION_ATTRIBUTE.publishedAt]?.StringValue;
  return {
    eventId: attributes[EMISSION_ATTRIBUTE.eventId]?.StringValue,
    scheduledAt: scheduledText === undefined ? undefined : parseDueDate(scheduledText),
    publishedAt: publishedText === undefined ? undefined : parseDueDate(publishedText),
    receivedAt,
    queuedAt: sentTimestampOf(message),
    messageId: message.MessageId ?? '',
  };
}

/** When the queue took the message (SentTimestamp, epoch ms), where the receive asked for it. */
function sentTimestampOf(message: Message): number | undefined {
  const sent = Number(message.Attributes?.SentTimestamp);
  return Number.isFinite(sent) && sent > 0 ? sent : undefined;
}

/**
 * A failure notice from the run's failure topic: its event is the notice's `eventId`, or else
 * the one whose client id the quoted request carries (a request refused before it had an id).
 */
export function failureReceiptOf(message: Message, eventIdOfClientId: (clientId: string) => string | undefined): FailureReceipt {
  let notice: { reason?: unknown; eventId?: unknown; event?: { id?: unknown } };
  try {
    notice = JSON.parse(message.Body ?? '') as typeof notice;
  } catch {
    notice = {};
  }
  const clientId = typeof notice.event?.id === 'string' ? notice.event.id : undefined;
  return {
    eventId: typeof notice.eventId === 'string' ? notice.eventId : clientId === undefined ? undefined : eventIdOfClientId(clientId),
    reason: typeof notice.reason === 'string' ? notice.reason : 'not a failure notice',
    messageId: message.MessageId ?? '',
  };
}

/** Delete requests in flight at once. */
const DELETE_CONCURRENCY = 4;

/**
 * Receives with several long polls at once and stamps each message with the time its receive
 * returned. Deletes go out in batches of 10 from their own workers, so a receive never waits
 * for one.
 */
export function startConsumer(
  sqs: SQSClient,
  queueUrl: string,
  pollers: number,
  onMessage: (message: Message, receivedAt: number) => void,
): Consumer {
  const abort = new AbortController();
  const stats = { receives: 0, emptyReceives: 0, receiveErrors: 0, deleteErrors: 0 };
  const toDelete: string[] = [];
  const deleters = new Set<Promise<void>>();

  const deleteWorker = async (): Promise<void> => {
    while (toDelete.length > 0) {
      const handles = toDelete.splice(0, 10);
      try {
        const result = await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: handles.map((handle, i) => ({ Id: `d${i}`, ReceiptHandle: handle })),
          }),
        );
        stats.deleteErrors += result.Failed?.length ?? 0;
      } catch {
        // An undeleted message only comes back after the visibility timeout, as a counted redelivery.
        stats.deleteErrors += handles.length;
      }
    }
  };
  const flushDeletes = (): void => {
    while (deleters.size < DELETE_CONCURRENCY && deleters.size * 10 < toDelete.length) {
      const worker = deleteWorker().finally(() => deleters.delete(worker));
      deleters.add(worker);
    }
  };

  const poll = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: SQS_BATCH_ENTRIES,
            WaitTimeSeconds: SQS_MAX_WAIT_SECONDS,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['SentTimestamp'],
          }),
          { abortSignal: abort.signal },
        );
        const receivedAt = Date.now();
        stats.receives += 1;
        if (Messages.length === 0) stats.emptyReceives += 1;
        for (const message of Messages) {
          onMessage(message, receivedAt);
          if (message.ReceiptHandle) toDelete.push(message.ReceiptHandle);
        }
        flushDeletes();
      } catch {
        if (abort.signal.aborted) return;
        stats.receiveErrors += 1;
        await sleep(200);
      }
    }
  };
  const loops = Array.from({ length: pollers }, poll);

  return {
    async stop() {
      abort.abort();
      await Promise.allSettled(loops);
      while (toDelete.length > 0 || deleters.size > 0) {
        flushDeletes();
        await Promise.all(deleters);
      }
      return { ...stats };
    },
  };
}
