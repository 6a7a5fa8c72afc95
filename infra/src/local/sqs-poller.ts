import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageSystemAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { chunks, SQS_BATCH_ENTRIES, SQS_MAX_WAIT_SECONDS, type Logger } from '@adhoc-scheduler/shared';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

export interface SqsPollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /** Batches handled at once, as Lambda's concurrency for an SQS event source. */
  readonly concurrency: number;
  /** Messages in one invocation at most (more than SQS's 10 a receive only with a batching window, as on Lambda). */
  readonly batchSize: number;
  /** How long a poll keeps receiving to fill its batch, as Lambda's MaximumBatchingWindowInSeconds (none by default). */
  readonly batchingWindowSeconds?: number | undefined;
  readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  readonly logger: Logger;
  readonly onInvocation?: ((durationMs: number, records: number) => void) | undefined;
}

export interface SqsPoller {
  stop(): Promise<void>;
}

/** The system attributes Lambda puts on a record (MessageGroupId on FIFO and fair queues). */
export const RECORD_SYSTEM_ATTRIBUTES: MessageSystemAttributeName[] = [
  'ApproximateReceiveCount',
  'SentTimestamp',
  'SenderId',
  'ApproximateFirstReceiveTimestamp',
  'MessageGroupId',
];

/** What Lambda hands a function for one SQS message. */
function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '',
      SenderId: attributes.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
      ...(attributes.MessageGroupId === undefined ? {} : { MessageGroupId: attributes.MessageGroupId }),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { stringValue: value.StringValue, dataType: value.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

export type BatchInvocation = Pick<SqsPollerOptions, 'sqs' | 'queueUrl' | 'queueArn' | 'region' | 'handler' | 'logger' | 'onInvocation'>;

/**
 * One invocation as Lambda's SQS event source makes it: the handler gets the messages as
 * records, what succeeded is deleted, and the reported failures (or the whole batch, if the
 * handler throws) are left to come back after the visibility timeout.
 */
export async function invokeAndDelete(options: BatchInvocation, messages: readonly Message[]): Promise<void> {
  const { sqs, queueUrl, logger } = options;
  const records = messages.map((message) => toRecord(message, options.queueArn, options.region));
  const started = performance.now();
  let failedIds: Set<string>;
  try {
    const response = await options.handler({ Records: records });
    failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  } catch (error) {
    logger.error({ err: error, queueUrl }, 'handler failed; the whole batch will be retried');
    failedIds = new Set(records.map((record) => record.messageId));
  } finally {
    options.onInvocation?.(performance.now() - started, records.length);
  }
  const done = records.filter((record) => !failedIds.has(record.messageId));
  await Promise.all(
    chunks(done, SQS_BATCH_ENTRIES).map(async (chunk) => {
      const result = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((record, index) => ({ Id: `d${index}`, ReceiptHandle: record.receiptHandle })),
        }),
      );
      if (result.Failed?.length) logger.warn({ failed: result.Failed, queueUrl }, 'some processed messages could not be deleted');
    }),
  );
}

/** Receives made at once to fill a batch of more than 10 messages. */
const RECEIVES_IN_FLIGHT = 5;

/** Pause after a failed receive, so an unreachable queue is not hammered. */
export const RECEIVE_RETRY_MS = 500;

/**
 * Drives a handler the way Lambda's SQS event source does: long-polls batches, invokes the
 * handler, deletes what succeeded and leaves the reported failures (or the whole batch, if
 * the handler throws) to come back after the visibility timeout.
 */
export function startSqsPoller(options: SqsPollerOptions): SqsPoller {
  const abort = new AbortController();
  const { sqs, queueUrl, logger } = options;

  const receive = async (count: number, waitSeconds: number): Promise<Message[]> => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(SQS_BATCH_ENTRIES, count),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: RECORD_SYSTEM_ATTRIBUTES,
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return Messages;
  };

  const pollOnce = async (): Promise<void> => {
    const messages = await receive(options.batchSize, SQS_MAX_WAIT_SECONDS);
    if (messages.length === 0) return;
    // Lambda's batching window: keep receiving until the batch is full or the window is over;
    // several receives at once while the queue hands out full ones (a backlog), one otherwise.
    const windowEnds = performance.now() + (options.batchingWindowSeconds ?? 0) * 1000;
    let backlog = messages.length === SQS_BATCH_ENTRIES;
    while (messages.length < options.batchSize && performance.now() < windowEnds) {
      const missing = options.batchSize - messages.length;
      const inFlight = backlog ? Math.min(RECEIVES_IN_FLIGHT, Math.ceil(missing / SQS_BATCH_ENTRIES)) : 1;
      const receives = Array.from({ length: inFlight }, (_, index) =>
        receive(Math.min(SQS_BATCH_ENTRIES, missing - index * SQS_BATCH_ENTRIES), 1),
      );
      const received = await Promise.all(receives);
      backlog = received.every((batch) => batch.length === SQS_BATCH_ENTRIES);
      for (const batch of received) messages.push(...batch);
    }
    await invokeAndDelete(options, messages);
  };

  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        await pollOnce();
      } catch (error) {
        if (abort.signal.aborted) return;
        logger.error({ err: error, queueUrl }, 'poll failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_RETRY_MS));
      }
    }
  };
  const loops = Array.from({ length: options.concurrency }, loop);

  return {
    async stop() {
      abort.abort();
      await Promise.allSettled(loops);
    },
  };
}
