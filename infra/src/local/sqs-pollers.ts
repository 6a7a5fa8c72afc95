import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageSystemAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { chunks, decodeDelayQueueMessage, SQS_BATCH_ENTRIES, SQS_MAX_WAIT_SECONDS, type Logger } from '@adhoc-scheduler/shared';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { changeVisibilities, VisibilityHeartbeat } from './visibility-heartbeat.js';

/**
 * Lambda's SQS event source, as the local runtime plays it: pollers that receive batches, hand
 * them to a handler as Lambda's records, delete what succeeded and leave the reported failures
 * to come back after the visibility timeout. One for each queue; the delay queue's is fair by
 * tenant, as the SQS fair queue it is on AWS.
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
interface Received {
  readonly message: Message;
  readonly visibleUntil: number;
}

/**
 * One invocation as Lambda's SQS event source makes it: the handler gets the messages as
 * records, what succeeded is deleted, and the reported failures (or the whole batch, if the
 * handler throws) are left to come back after the visibility timeout. While the handler works,
 * the heartbeat keeps its messages hidden.
 */
async function invokeAndDelete(options: BatchInvocation, received: readonly Received[]): Promise<void> {
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
function heartbeatFor(options: SqsPollerOptions): VisibilityHeartbeat {
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

/** Receives made at once to fill a batch of more than 10 messages. */
const RECEIVES_IN_FLIGHT = 5;

/** Pause after a failed receive, so an unreachable queue is not hammered. */
const RECEIVE_RETRY_MS = 500;

/**
 * Drives a handler the way Lambda's SQS event source does: long-polls batches, invokes the
 * handler, deletes what succeeded and leaves the reported failures (or the whole batch, if
 * the handler throws) to come back after the visibility timeout. Unlike Lambda, whose queues'
 * visibility timeout exceeds the function's timeout, it keeps the messages of a batch hidden
 * only a short timeout at a time, extended while the handler works (VisibilityHeartbeat): a
 * killed service's messages come back that soon.
 */
export function startSqsPoller(options: SqsPollerOptions): SqsPoller {
  const abort = new AbortController();
  const { sqs, queueUrl, logger } = options;
  const timeoutMs = options.visibilityTimeoutSeconds * 1000;
  const heartbeat = heartbeatFor(options);

  const receive = async (count: number, waitSeconds: number): Promise<Received[]> => {
    const requestedAt = Date.now();
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
    const visibleUntil = handedOutAt(requestedAt, timeoutMs) + timeoutMs;
    return Messages.map((message) => ({ message, visibleUntil }));
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
    await invokeAndDelete({ ...options, heartbeat }, messages);
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
      await heartbeat.stop();
    },
  };
}

// ---- The delay queue's fair poller ------------------------------------------------------------

export interface FairQueuePollerOptions extends SqsPollerOptions {
  /** ReceiveMessage calls in flight at once. */
  readonly receivers?: number;
  /** Message bodies received ahead and not yet handed to the handler, at most (one receive may pass it). */
  readonly maxBufferedBytes?: number;
  /** A message's group when SQS returns no MessageGroupId (fauxqs keeps it on FIFO queues only). */
  readonly groupOf?: (message: Message) => string | undefined;
}

/** The group of a delay-queue message, from its body: the event's tenant (notices form one group). */
export function delayQueueGroupOf(message: Message): string | undefined {
  try {
    const decoded = decodeDelayQueueMessage(message.Body ?? '');
    return decoded.kind === 'event' ? decoded.event.tenant : undefined;
  } catch {
    return undefined; // Not a delay-queue message: the emitter reports it.
  }
}

/** Received messages waiting for a handler slot cost about this much beyond their body. */
const MESSAGE_OVERHEAD_BYTES = 1024;
const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
const DEFAULT_RECEIVERS = 8;
/** Messages without a MessageGroupId form one group. */
const NO_GROUP = '';

interface Waiting {
  readonly message: Message;
  readonly bytes: number;
  readonly receivedAt: number;
  /** Until when SQS keeps it hidden, as far as this poller knows (epoch ms, conservative). */
  visibleUntil: number;
}

interface Group {
  readonly id: string;
  /** In the order received. */
  waiting: Waiting[];
  /** Messages of this group in handler invocations now. */
  messagesInFlight: number;
  batchesInFlight: number;
}

/**
 * Drives a handler on a standard queue whose messages carry a MessageGroupId, the way an SQS
 * fair queue feeds Lambda: one group's backlog does not hold back another group's messages.
 *
 * fauxqs hands a standard queue's messages out in arrival order (and drops their
 * MessageGroupId: `groupOf` then names the group), so a quiet group's messages sit behind a
 * noisy group's backlog. This poller therefore receives ahead into a bounded buffer and builds
 * each batch from one group: the one with the fewest messages in handler invocations (then the
 * one waiting longest). A group alone takes up to 7 in 8 of the `concurrency` slots, so a group
 * that appears while another floods the queue finds a free slot at once; while several groups
 * have messages here, each takes new slots only up to 1 in 8. All invocations share this
 * process (and, locally, the cores with the emulators), where on AWS each has its own: a
 * noisy group holding many slots would slow every other group's invocations down.
 *
 * Waiting in the buffer stands in for waiting in the queue, so a buffered message is never left
 * to outlive its visibility timeout: once less than half of it remains, its visibility is
 * extended to the full timeout again, both while it waits and when it is handed to the handler
 * (so an invocation always starts with at least half the timeout, never a message SQS may
 * already be delivering again); the heartbeat then keeps it hidden while the handler works, as
 * `startSqsPoller`'s does. Delete and batchItemFailures are handled as by `startSqsPoller`.
 * On stop, the invocations running finish; what is still buffered comes back after its
 * visibility timeout, as the messages of an interrupted receive do. (Handing it back at once
 * would not help here: fauxqs keeps an aborted long poll waiting, and it takes the next messages.)
 */
export function startFairQueuePoller(options: FairQueuePollerOptions): SqsPoller {
  const { sqs, queueUrl, logger, concurrency } = options;
  const timeoutMs = options.visibilityTimeoutSeconds * 1000;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const windowMs = (options.batchingWindowSeconds ?? 0) * 1000;
  const sharedSlots = Math.max(1, Math.floor(concurrency / 8));
  const aloneSlots = Math.max(1, concurrency - sharedSlots);
  /** Receivers whose last receive came back full: the queue likely holds more than the buffer shows. */
  const receiversBehind = new Set<number>();
  const heartbeat = heartbeatFor(options);
  const abort = new AbortController();
  const groups = new Map<string, Group>();
  const running = new Set<Promise<void>>();
  let bufferedBytes = 0;
  let busySlots = 0;
  let roomWaiters: (() => void)[] = [];

  const wakeReceivers = (): void => {
    const waiters = roomWaiters;
    roomWaiters = [];
    for (const wake of waiters) wake();
  };
  const roomInBuffer = (): Promise<void> => new Promise((resolve) => roomWaiters.push(resolve));

  const removeWaiting = (group: Group, entries: readonly Waiting[]): void => {
    const leaving = new Set(entries);
    for (const entry of group.waiting) if (leaving.has(entry)) bufferedBytes -= entry.bytes;
    group.waiting = group.waiting.filter((entry) => !leaving.has(entry));
  };
  const forgetIfIdle = (group: Group): void => {
    if (group.waiting.length === 0 && group.batchesInFlight === 0) groups.delete(group.id);
  };

  /**
   * Sets the visibility of `entries` to `seconds` from now; returns those SQS did not take (their
   * receipt no longer holds: the message is, or will be, visible again).
   */
  const setVisibility = async (entries: readonly Waiting[], seconds: number): Promise<Waiting[]> => {
    const lost: Waiting[] = [];
    for (let from = 0; from < entries.length; from += SQS_BATCH_ENTRIES) {
      const chunk = entries.slice(from, from + SQS_BATCH_ENTRIES);
      const requestedAt = Date.now();
      try {
        const taken = await changeVisibilities(
          sqs,
          queueUrl,
          chunk.map((entry) => entry.message.ReceiptHandle),
          seconds,
        );
        chunk.forEach((entry, index) => {
          if (!taken[index]) lost.push(entry);
          else entry.visibleUntil = requestedAt + seconds * 1000;
        });
      } catch (error) {
        logger.warn({ err: error, queueUrl }, 'could not change the visibility of buffered messages');
        lost.push(...chunk);
      }
    }
    return lost;
  };

  const needsRefresh = (entry: Waiting, now: number): boolean => entry.visibleUntil - now < timeoutMs / 2;

  const invoke = async (batch: readonly Waiting[]): Promise<void> => {
    const now = Date.now();
    const stale = batch.filter((entry) => needsRefresh(entry, now));
    const lost = new Set(stale.length > 0 ? await setVisibility(stale, options.visibilityTimeoutSeconds) : []);
    const kept = batch.filter((entry) => !lost.has(entry) && entry.visibleUntil > Date.now());
    if (kept.length < batch.length)
      logger.warn(
        { queueUrl, messages: batch.length - kept.length },
        'messages outlived their visibility timeout before a handler was free; SQS delivers them again',
      );
    if (kept.length > 0) await invokeAndDelete({ ...options, heartbeat }, kept);
  };

  /**
   * The group the next free slot goes to: fewest messages in flight, then the longest wait. A
   * group alone here may hold all but `sharedSlots` of the slots; while another group has
   * messages here, or while the buffer may not yet show every group that has (the poller is
   * behind the queue), it gets a new slot only while it holds fewer than `sharedSlots`.
   */
  const nextGroup = (now: number): Group | undefined => {
    // A full buffer cannot show more: then it no longer waits to catch up.
    const catchingUp = receiversBehind.size > 0 && bufferedBytes < maxBufferedBytes;
    const slotsPerGroup = groups.size === 1 && !catchingUp ? aloneSlots : sharedSlots;
    let best: Group | undefined;
    for (const group of groups.values()) {
      const oldest = group.waiting[0];
      if (!oldest || group.batchesInFlight >= slotsPerGroup || !batchReady(group, now)) continue;
      if (
        !best ||
        group.messagesInFlight < best.messagesInFlight ||
        (group.messagesInFlight === best.messagesInFlight && oldest.receivedAt < (best.waiting[0]?.receivedAt ?? Number.POSITIVE_INFINITY))
      ) {
        best = group;
      }
    }
    return best;
  };

  /** Lambda's batching window: a group's batch goes once full, or once its oldest message has waited the window. */
  const batchReady = (group: Group, now: number): boolean =>
    group.waiting.length >= options.batchSize || now - (group.waiting[0]?.receivedAt ?? now) >= windowMs;
  let windowTimer: NodeJS.Timeout | undefined;
  const dispatchWhenWindowEnds = (): void => {
    if (windowTimer !== undefined || abort.signal.aborted) return;
    let first = Number.POSITIVE_INFINITY;
    for (const group of groups.values()) first = Math.min(first, (group.waiting[0]?.receivedAt ?? Number.POSITIVE_INFINITY) + windowMs);
    if (first === Number.POSITIVE_INFINITY) return;
    windowTimer = setTimeout(
      () => {
        windowTimer = undefined;
        dispatch();
      },
      Math.max(0, first - Date.now()),
    );
  };

  const dispatch = (): void => {
    while (!abort.signal.aborted && busySlots < concurrency) {
      const group = nextGroup(Date.now());
      if (!group) {
        dispatchWhenWindowEnds();
        return;
      }
      const batch = group.waiting.splice(0, options.batchSize);
      for (const entry of batch) bufferedBytes -= entry.bytes;
      busySlots += 1;
      group.batchesInFlight += 1;
      group.messagesInFlight += batch.length;
      const invocation = invoke(batch)
        .catch((error: unknown) =>
          logger.error({ err: error, queueUrl }, 'invocation failed; its messages come back after the visibility timeout'),
        )
        .finally(() => {
          running.delete(invocation);
          busySlots -= 1;
          group.batchesInFlight -= 1;
          group.messagesInFlight -= batch.length;
          forgetIfIdle(group);
          dispatch();
        });
      running.add(invocation);
      wakeReceivers();
    }
  };

  const buffer = (messages: readonly Message[], visibleUntil: number): void => {
    const receivedAt = Date.now();
    for (const message of messages) {
      const id = message.Attributes?.MessageGroupId ?? options.groupOf?.(message) ?? NO_GROUP;
      let group = groups.get(id);
      if (!group) {
        group = { id, waiting: [], messagesInFlight: 0, batchesInFlight: 0 };
        groups.set(id, group);
      }
      const bytes = (message.Body?.length ?? 0) + MESSAGE_OVERHEAD_BYTES;
      group.waiting.push({ message, bytes, receivedAt, visibleUntil });
      bufferedBytes += bytes;
    }
    dispatch();
  };

  const receive = async (receiver: number): Promise<void> => {
    while (!abort.signal.aborted) {
      // After a full receive, ask again without waiting: an empty or partial answer says the buffer has caught up.
      const behind = receiversBehind.has(receiver);
      if (bufferedBytes >= maxBufferedBytes) {
        await roomInBuffer();
        continue;
      }
      const requestedAt = Date.now();
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: SQS_BATCH_ENTRIES,
            WaitTimeSeconds: behind ? 0 : SQS_MAX_WAIT_SECONDS,
            MessageSystemAttributeNames: RECORD_SYSTEM_ATTRIBUTES,
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        const visibleUntil = handedOutAt(requestedAt, timeoutMs) + timeoutMs;
        if (Messages.length === SQS_BATCH_ENTRIES) receiversBehind.add(receiver);
        else receiversBehind.delete(receiver);
        buffer(Messages, visibleUntil);
      } catch (error) {
        if (abort.signal.aborted) return;
        logger.error({ err: error, queueUrl }, 'poll failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_RETRY_MS));
      }
    }
  };

  /** Keeps every buffered message hidden while it waits; drops any whose receipt no longer holds. */
  let refreshing = false;
  const refreshWaiting = async (): Promise<void> => {
    if (refreshing) return;
    refreshing = true;
    try {
      const now = Date.now();
      for (const group of [...groups.values()]) {
        const expired = group.waiting.filter((entry) => entry.visibleUntil <= now);
        if (expired.length > 0)
          logger.warn(
            { queueUrl, messages: expired.length },
            'buffered messages outlived their visibility timeout; SQS delivers them again',
          );
        const stale = group.waiting.filter((entry) => entry.visibleUntil > now && needsRefresh(entry, now));
        const lost = stale.length > 0 ? await setVisibility(stale, options.visibilityTimeoutSeconds) : [];
        // Those handed to the handler meanwhile were dealt with there.
        const waiting = new Set(group.waiting);
        const lostWaiting = lost.filter((entry) => waiting.has(entry));
        if (lostWaiting.length > 0)
          logger.warn({ queueUrl, messages: lostWaiting.length }, 'could not keep buffered messages hidden; SQS delivers them again');
        removeWaiting(group, [...expired, ...lostWaiting]);
        forgetIfIdle(group);
      }
      wakeReceivers();
    } finally {
      refreshing = false;
    }
  };
  const refresher = setInterval(() => void refreshWaiting(), Math.max(100, timeoutMs / 4));

  const receivers = Array.from({ length: options.receivers ?? Math.min(DEFAULT_RECEIVERS, concurrency) }, (_, receiver) =>
    receive(receiver),
  );

  return {
    async stop() {
      abort.abort();
      clearInterval(refresher);
      clearTimeout(windowTimer);
      wakeReceivers();
      await Promise.allSettled(receivers);
      while (running.size > 0) await Promise.allSettled([...running]);
      await heartbeat.stop();
    },
  };
}
