import type { Message } from '@aws-sdk/client-sqs';
import { SQS_BATCH_ENTRIES, SQS_MAX_WAIT_SECONDS } from '@adhoc-scheduler/shared';
import {
  heartbeatFor,
  invokeAndDelete,
  RECEIVE_RETRY_MS,
  receiveMessages,
  type Received,
  type SqsPoller,
  type SqsPollerOptions,
} from './sqs-event-source.js';
import { changeVisibilities, type VisibilityHeartbeat } from './visibility-heartbeat.js';

export interface FairQueuePollerOptions extends SqsPollerOptions {
  /** ReceiveMessage calls in flight at once while the queue has a backlog; one long poll while it has none. */
  readonly receivers?: number;
  /** Message bodies received ahead and not yet handed to the handler, at most (one receive may pass it). */
  readonly maxBufferedBytes?: number;
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
 * fauxqs, as patched here, hands a standard queue's ready messages out in turns by group, but a
 * delayed message becomes ready only at its time, and the emitter holds each batch until its
 * events are due: the slots, not the queue, are what a group's spike fills. This poller therefore
 * receives ahead into a bounded buffer (with all its receivers while the queue hands out full
 * receives, with one long poll while it does not) and builds each batch from one group: the one
 * with the fewest messages in handler invocations (then the one waiting longest). A group alone
 * takes up to 7 in 8 of the `concurrency` slots, so a group that appears while another floods the
 * queue finds a free slot at once; while several groups have messages here, each takes new slots
 * only up to 1 in 8. All invocations share this
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
  return new FairQueuePoller(options);
}

class FairQueuePoller implements SqsPoller {
  private readonly options: FairQueuePollerOptions;
  private readonly timeoutMs: number;
  private readonly maxBufferedBytes: number;
  private readonly windowMs: number;
  private readonly sharedSlots: number;
  private readonly aloneSlots: number;
  /** Receivers whose last receive came back full: the queue likely holds more than the buffer shows. */
  private readonly receiversBehind = new Set<number>();
  private readonly heartbeat: VisibilityHeartbeat;
  private readonly abort = new AbortController();
  private readonly groups = new Map<string, Group>();
  private readonly running = new Set<Promise<void>>();
  private bufferedBytes = 0;
  private busySlots = 0;
  private roomWaiters: (() => void)[] = [];
  /** Receivers but the first, parked while no receiver is behind (see receive). */
  private parkedReceivers: (() => void)[] = [];
  private windowTimer: NodeJS.Timeout | undefined;
  private refreshing = false;
  private readonly refresher: NodeJS.Timeout;
  private readonly receivers: Promise<void>[];

  constructor(options: FairQueuePollerOptions) {
    this.options = options;
    const { concurrency } = options;
    this.timeoutMs = options.visibilityTimeoutSeconds * 1000;
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.windowMs = (options.batchingWindowSeconds ?? 0) * 1000;
    this.sharedSlots = Math.max(1, Math.floor(concurrency / 8));
    this.aloneSlots = Math.max(1, concurrency - this.sharedSlots);
    this.heartbeat = heartbeatFor(options);
    this.refresher = setInterval(() => void this.refreshWaiting(), Math.max(100, this.timeoutMs / 4));
    this.receivers = Array.from({ length: options.receivers ?? Math.min(DEFAULT_RECEIVERS, concurrency) }, (_, receiver) =>
      this.receive(receiver),
    );
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearInterval(this.refresher);
    clearTimeout(this.windowTimer);
    this.wakeReceivers();
    this.wakeParkedReceivers();
    await Promise.allSettled(this.receivers);
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.heartbeat.stop();
  }

  private wakeParkedReceivers(): void {
    const parked = this.parkedReceivers;
    this.parkedReceivers = [];
    for (const wake of parked) wake();
  }

  private wakeReceivers(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }

  private roomInBuffer(): Promise<void> {
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private removeWaiting(group: Group, entries: readonly Waiting[]): void {
    const leaving = new Set(entries);
    for (const entry of group.waiting) if (leaving.has(entry)) this.bufferedBytes -= entry.bytes;
    group.waiting = group.waiting.filter((entry) => !leaving.has(entry));
  }

  private forgetIfIdle(group: Group): void {
    if (group.waiting.length === 0 && group.batchesInFlight === 0) this.groups.delete(group.id);
  }

  /**
   * Sets the visibility of `entries` to `seconds` from now; returns those SQS did not take (their
   * receipt no longer holds: the message is, or will be, visible again).
   */
  private async setVisibility(entries: readonly Waiting[], seconds: number): Promise<Waiting[]> {
    const { sqs, queueUrl, logger } = this.options;
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
  }

  private needsRefresh(entry: Waiting, now: number): boolean {
    return entry.visibleUntil - now < this.timeoutMs / 2;
  }

  private async invoke(batch: readonly Waiting[]): Promise<void> {
    const { queueUrl, logger, visibilityTimeoutSeconds } = this.options;
    const now = Date.now();
    const stale = batch.filter((entry) => this.needsRefresh(entry, now));
    const lost = new Set(stale.length > 0 ? await this.setVisibility(stale, visibilityTimeoutSeconds) : []);
    const kept = batch.filter((entry) => !lost.has(entry) && entry.visibleUntil > Date.now());
    if (kept.length < batch.length)
      logger.warn(
        { queueUrl, messages: batch.length - kept.length },
        'messages outlived their visibility timeout before a handler was free; SQS delivers them again',
      );
    if (kept.length > 0) await invokeAndDelete({ ...this.options, heartbeat: this.heartbeat }, kept);
  }

  /**
   * The group the next free slot goes to: fewest messages in flight, then the longest wait. A
   * group alone here may hold all but `sharedSlots` of the slots; while another group has
   * messages here, or while the buffer may not yet show every group that has (the poller is
   * behind the queue), it gets a new slot only while it holds fewer than `sharedSlots`.
   */
  private nextGroup(now: number): Group | undefined {
    // A full buffer cannot show more: then it no longer waits to catch up.
    const catchingUp = this.receiversBehind.size > 0 && this.bufferedBytes < this.maxBufferedBytes;
    const slotsPerGroup = this.groups.size === 1 && !catchingUp ? this.aloneSlots : this.sharedSlots;
    let best: Group | undefined;
    for (const group of this.groups.values()) {
      const oldest = group.waiting[0];
      if (!oldest || group.batchesInFlight >= slotsPerGroup || !this.batchReady(group, now)) continue;
      if (
        !best ||
        group.messagesInFlight < best.messagesInFlight ||
        (group.messagesInFlight === best.messagesInFlight && oldest.receivedAt < (best.waiting[0]?.receivedAt ?? Number.POSITIVE_INFINITY))
      ) {
        best = group;
      }
    }
    return best;
  }

  /** Lambda's batching window: a group's batch goes once full, or once its oldest message has waited the window. */
  private batchReady(group: Group, now: number): boolean {
    return group.waiting.length >= this.options.batchSize || now - (group.waiting[0]?.receivedAt ?? now) >= this.windowMs;
  }

  private dispatchWhenWindowEnds(): void {
    if (this.windowTimer !== undefined || this.abort.signal.aborted) return;
    let first = Number.POSITIVE_INFINITY;
    for (const group of this.groups.values())
      first = Math.min(first, (group.waiting[0]?.receivedAt ?? Number.POSITIVE_INFINITY) + this.windowMs);
    if (first === Number.POSITIVE_INFINITY) return;
    this.windowTimer = setTimeout(
      () => {
        this.windowTimer = undefined;
        this.dispatch();
      },
      Math.max(0, first - Date.now()),
    );
  }

  private dispatch(): void {
    const { queueUrl, logger, concurrency, batchSize } = this.options;
    while (!this.abort.signal.aborted && this.busySlots < concurrency) {
      const group = this.nextGroup(Date.now());
      if (!group) {
        this.dispatchWhenWindowEnds();
        return;
      }
      const batch = group.waiting.splice(0, batchSize);
      for (const entry of batch) this.bufferedBytes -= entry.bytes;
      this.busySlots += 1;
      group.batchesInFlight += 1;
      group.messagesInFlight += batch.length;
      const invocation = this.invoke(batch)
        .catch((error: unknown) =>
          logger.error({ err: error, queueUrl }, 'invocation failed; its messages come back after the visibility timeout'),
        )
        .finally(() => {
          this.running.delete(invocation);
          this.busySlots -= 1;
          group.batchesInFlight -= 1;
          group.messagesInFlight -= batch.length;
          this.forgetIfIdle(group);
          this.dispatch();
        });
      this.running.add(invocation);
      this.wakeReceivers();
    }
  }

  private buffer(received: readonly Received[]): void {
    const receivedAt = Date.now();
    for (const { message, visibleUntil } of received) {
      const id = message.Attributes?.MessageGroupId ?? NO_GROUP;
      let group = this.groups.get(id);
      if (!group) {
        group = { id, waiting: [], messagesInFlight: 0, batchesInFlight: 0 };
        this.groups.set(id, group);
      }
      const bytes = (message.Body?.length ?? 0) + MESSAGE_OVERHEAD_BYTES;
      group.waiting.push({ message, bytes, receivedAt, visibleUntil });
      this.bufferedBytes += bytes;
    }
    this.dispatch();
  }

  private async receive(receiver: number): Promise<void> {
    const { queueUrl, logger } = this.options;
    while (!this.abort.signal.aborted) {
      // After a full receive, ask again without waiting: an empty or partial answer says the buffer has caught up.
      const behind = this.receiversBehind.has(receiver);
      if (this.bufferedBytes >= this.maxBufferedBytes) {
        await this.roomInBuffer();
        continue;
      }
      // While no receive comes back full, the queue has no backlog and one long poll takes all it
      // hands out: fauxqs answers every waiting poll when a message arrives, so each more one would
      // only come back empty, a request for the service and fauxqs on the due second.
      if (receiver > 0 && this.receiversBehind.size === 0) {
        await new Promise<void>((resolve) => this.parkedReceivers.push(resolve));
        continue;
      }
      try {
        const received = await receiveMessages(this.options, {
          count: SQS_BATCH_ENTRIES,
          waitSeconds: behind ? 0 : SQS_MAX_WAIT_SECONDS,
          signal: this.abort.signal,
        });
        if (received.length === SQS_BATCH_ENTRIES) {
          this.receiversBehind.add(receiver);
          this.wakeParkedReceivers();
        } else this.receiversBehind.delete(receiver);
        this.buffer(received);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        logger.error({ err: error, queueUrl }, 'poll failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_RETRY_MS));
      }
    }
  }

  /** Keeps every buffered message hidden while it waits; drops any whose receipt no longer holds. */
  private async refreshWaiting(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    const { queueUrl, logger, visibilityTimeoutSeconds } = this.options;
    try {
      const now = Date.now();
      for (const group of [...this.groups.values()]) {
        const expired = group.waiting.filter((entry) => entry.visibleUntil <= now);
        if (expired.length > 0)
          logger.warn(
            { queueUrl, messages: expired.length },
            'buffered messages outlived their visibility timeout; SQS delivers them again',
          );
        const stale = group.waiting.filter((entry) => entry.visibleUntil > now && this.needsRefresh(entry, now));
        const lost = stale.length > 0 ? await this.setVisibility(stale, visibilityTimeoutSeconds) : [];
        // Those handed to the handler meanwhile were dealt with there.
        const waiting = new Set(group.waiting);
        const lostWaiting = lost.filter((entry) => waiting.has(entry));
        if (lostWaiting.length > 0)
          logger.warn({ queueUrl, messages: lostWaiting.length }, 'could not keep buffered messages hidden; SQS delivers them again');
        this.removeWaiting(group, [...expired, ...lostWaiting]);
        this.forgetIfIdle(group);
      }
      this.wakeReceivers();
    } finally {
      this.refreshing = false;
    }
  }
}
