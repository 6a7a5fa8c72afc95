import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageSystemAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { chunks, SQS_BATCH_ENTRIES, type Logger } from '@adhoc-scheduler/shared';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { VisibilityHeartbeat } from './visibility-heartbeat.js';

/**
 * Lambda's SQS event source, as the local runtime plays it: pollers that receive batches, hand
 * them to a handler as Lambda's records, delete what succeeded and leave the reported failures
 * to come back after the visibility timeout. One for each queue (sqs-poller.ts); the delay
 * queue's is fair by tenant (fair-queue-poller.ts), as the SQS fair queue it is on AWS. This
 * module holds what both share: the options, the records, one receive and one invocation.
 */

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
  /**
   * The queue's visibility timeout: how long a message handed out stays hidden unless the poller
   * extends it. Messages being handled are extended while their handler works (see
   * VisibilityHeartbeat), so this is how soon what a killed poller held comes back.
   */
  readonly visibilityTimeoutSeconds: number;
  /**
   * Longest the poller keeps a batch's messages hidden for its handler, as Lambda's function
   * timeout: a handler still at it after that is taken for hung (or timed out), and its messages
   * come back within the visibility timeout. DEFAULT_MAX_HOLD_SECONDS (Lambda's longest) by default.
   */
  readonly handlerTimeoutSeconds?: number | undefined;
  readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  readonly logger: Logger;
  readonly onInvocation?: ((durationMs: number, records: number) => void) | undefined;
}

export interface SqsPoller {
  stop(): Promise<void>;
}

/** The system attributes Lambda puts on a record (MessageGroupId on FIFO and fair queues). */
const RECORD_SYSTEM_ATTRIBUTES: MessageSystemAttributeName[] = [
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

type BatchInvocation = Pick<SqsPollerOptions, 'sqs' | 'queueUrl' | 'queueArn' | 'region' | 'handler' | 'logger' | 'onInvocation'> & {
  readonly heartbeat: VisibilityHeartbeat;
};

/** A message received, and until when SQS keeps it hidden as far as the poller knows (epoch ms, conservative). */
export interface Received {
  readonly message: Message;
  readonly visibleUntil: number;
}

/**
 * One invocation as Lambda's SQS event source makes it: the handler gets the messages as
 * records, what succeeded is deleted, and the reported failures (or the whole batch, if the
 * handler throws) are left to come back after the visibility timeout. While the handler works,
 * the heartbeat keeps its messages hidden.
 */
export async function invokeAndDelete(options: BatchInvocation, received: readonly Received[]): Promise<void> {
  const { sqs, queueUrl, logger, heartbeat } = options;
  const records = received.map(({ message }) => toRecord(message, options.queueArn, options.region));
  const held = received.map(({ message, visibleUntil }) => ({ receiptHandle: message.ReceiptHandle ?? '', visibleUntil }));
  heartbeat.hold(held);
  const started = performance.now();
  let failedIds: Set<string>;
  try {
    const response = await options.handler({ Records: records });
    failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  } catch (error) {
    logger.error({ err: error, queueUrl }, 'handler failed; the whole batch will be retried');
    failedIds = new Set(records.map((record) => record.messageId));
  } finally {
    heartbeat.release(held.map(({ receiptHandle }) => receiptHandle));
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

/** Keeps a poller's messages hidden while its handler works on them, up to the handler's timeout. */
export function heartbeatFor(options: SqsPollerOptions): VisibilityHeartbeat {
  const { sqs, queueUrl, logger, visibilityTimeoutSeconds, handlerTimeoutSeconds } = options;
  return new VisibilityHeartbeat({
    sqs,
    queueUrl,
    timeoutSeconds: visibilityTimeoutSeconds,
    logger,
    maxHoldSeconds: handlerTimeoutSeconds,
  }).start();
}

/** At most this long between SQS handing messages out and their answer arriving here. */
const TRANSFER_MARGIN_MS = 1000;

/**
 * When SQS handed out the messages of a receive requested at `requestedAt` and answered now: for
 * a long poll that waited, just before its answer arrived (less a margin for the transfer), never
 * before the request. Their visibility timeout runs from then.
 */
function handedOutAt(requestedAt: number, timeoutMs: number): number {
  return Math.max(requestedAt, Date.now() - Math.min(TRANSFER_MARGIN_MS, timeoutMs / 4));
}

/** Pause after a failed receive, so an unreachable queue is not hammered. */
export const RECEIVE_RETRY_MS = 500;

/**
 * One ReceiveMessage, with the attributes Lambda puts on a record: up to `count` messages (10 at
 * most), each with until when SQS keeps it hidden (from when it was handed out, see handedOutAt).
 */
export async function receiveMessages(
  options: Pick<SqsPollerOptions, 'sqs' | 'queueUrl' | 'visibilityTimeoutSeconds'>,
  request: { readonly count: number; readonly waitSeconds: number; readonly signal: AbortSignal },
): Promise<Received[]> {
  const timeoutMs = options.visibilityTimeoutSeconds * 1000;
  const requestedAt = Date.now();
  const { Messages = [] } = await options.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: options.queueUrl,
      MaxNumberOfMessages: Math.min(SQS_BATCH_ENTRIES, request.count),
      WaitTimeSeconds: request.waitSeconds,
      MessageSystemAttributeNames: RECORD_SYSTEM_ATTRIBUTES,
      MessageAttributeNames: ['All'],
    }),
    { abortSignal: request.signal },
  );
  const visibleUntil = handedOutAt(requestedAt, timeoutMs) + timeoutMs;
  return Messages.map((message) => ({ message, visibleUntil }));
}
