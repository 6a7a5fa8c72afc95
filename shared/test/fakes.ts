import type { LastError, LastErrors, RefusalLog } from '../src/app/ports/errors-and-refusals.js';
import type { Clock, Logger, MetricName, SchedulerMetrics } from '../src/app/ports/process.js';
import type {
  ChangesQueue,
  DelayedSend,
  DelayedSendFailure,
  DelayQueue,
  LoadingQueue,
  NoticeSend,
  NoticeSendFailure,
  TopicPublisher,
} from '../src/app/ports/queues.js';
import type { EmissionEnding } from '../src/domain/emission.js';
import type { FailureNotice, NoticeDestination } from '../src/domain/failure.js';
import { encodeDelayQueueMessage, type ChangeJob, type DelayQueueMessage, type LoadingChunk } from '../src/domain/messages.js';
import { TransientError } from '../src/domain/reasons.js';
import { REFUSALS_KEPT, type RecentRefusals, type Refusal, type TenantRefusals } from '../src/domain/refusals.js';

/**
 * The in-memory fakes of the ports beside the table's (see memory-event-store.ts): the clock, the
 * logger, the metrics, the queues, the topics, the failed records' last errors and the refusal log. One each, shared by every unit test, which inspects what
 * they were asked and tells them when to refuse.
 */

/** A clock that moves only when slept on or set; its timers may fire up to `earlyMs` before they are due (never less than 1 ms in). */
export class FakeClock implements Clock {
  /** Every sleep asked for, in order. */
  readonly sleeps: number[] = [];

  constructor(
    private at: number,
    private readonly earlyMs = 0,
  ) {}

  now = (): number => this.at;

  sleep = async (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.at += this.earlyMs === 0 ? ms : Math.max(1, ms - this.earlyMs);
  };

  /** Moves the clock to `to`, never back. */
  set(to: number): void {
    this.at = Math.max(this.at, to);
  }
}

/** A line logged, as the logger was asked to write it: its fields as given (an error as the Error itself). */
export interface LoggedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: object;
  readonly message: string;
}

/** The functions' logger: keeps every line logged, at every level, in order. */
export class RecordingLogger implements Logger {
  readonly lines: LoggedLine[] = [];

  debug = (fields: object, message: string): void => this.log('debug', fields, message);
  info = (fields: object, message: string): void => this.log('info', fields, message);
  warn = (fields: object, message: string): void => this.log('warn', fields, message);
  error = (fields: object, message: string): void => this.log('error', fields, message);

  /** The lines logged at any of `levels`, in order. */
  at(...levels: LoggedLine['level'][]): LoggedLine[] {
    return this.lines.filter((line) => levels.includes(line.level));
  }

  private log(level: LoggedLine['level'], fields: object, message: string): void {
    this.lines.push({ level, fields, message });
  }
}

/** Counts every metric by name, and keeps each lateness and loader backlog recorded, and the counts at each flush. */
export class RecordingMetrics implements SchedulerMetrics {
  readonly counts: Partial<Record<MetricName, number>> = {};
  /** Each emission's lateness, in ms, in the order recorded: what the lateness alarm reads. */
  readonly lateness: number[] = [];
  /** Each loader tick's backlog, in seconds, in the order recorded: what the loader alarm reads. */
  readonly backlogSeconds: number[] = [];
  /** The counts as they stood at each flush, in order: what was written out (EMF on Lambda). */
  readonly flushed: Partial<Record<MetricName, number>>[] = [];

  /** Times the metrics were written out: what was counted before the last flush is what CloudWatch has. */
  get flushes(): number {
    return this.flushed.length;
  }

  count(name: MetricName, value = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + value;
  }

  latenessMs(value: number): void {
    this.lateness.push(value);
  }
  loaderBacklogSeconds(value: number): void {
    this.backlogSeconds.push(value);
  }
  flush(): void {
    this.flushed.push({ ...this.counts });
  }
}

/** A message as SQS holds it on the delay queue. */
export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: number;
  readonly visibleAt: number;
  readonly receives: number;
}

/** The delay queue: what was sent to it, each message as SQS holds it (due when its delay is over), and the put-offs asked for. */
export class MemoryDelayQueue implements DelayQueue {
  /** Every message sent, in the order sent, for a consumer to take (and put back). */
  readonly messages: QueuedMessage[] = [];
  /** The events sent, as asked. */
  readonly sent: DelayedSend[] = [];
  /** The failure notices handed over. */
  readonly notices: ({ readonly noticeId: string; readonly tenant: string; readonly notice: FailureNotice } & NoticeDestination)[] = [];
  /** The ends handed over, one entry a message. */
  readonly handedOver: EmissionEnding[][] = [];
  /** The put-offs asked for, in order (see retryLater). */
  readonly retries: { readonly receiptHandle: string; readonly delaySeconds: number }[] = [];
  /** Calls of `send` to refuse whole, as SQS refuses a batch, before taking them again. */
  refuseSends = 0;
  /** Refuses ends handed over, as SQS does when it is down. */
  refuseHandOvers = false;
  private messagesSent = 0;

  /** `clock` says when each message is sent, and so when it is due. */
  constructor(private readonly clock: Pick<Clock, 'now'> = { now: () => 0 }) {}

  async send(items: readonly DelayedSend[]): Promise<readonly DelayedSendFailure[]> {
    if (this.refuseSends > 0) {
      this.refuseSends -= 1;
      return items.map(({ event }) => ({ eventId: event.id, reason: 'refused by the test' }));
    }
    this.sent.push(...items);
    for (const { event, queuedBy, delaySeconds } of items) this.hold({ kind: 'event', event, queuedBy }, delaySeconds);
    return [];
  }

  async sendNotice(noticeId: string, tenant: string, destination: NoticeDestination, notice: FailureNotice): Promise<void> {
    this.notices.push({ noticeId, tenant, ...destination, notice });
    this.hold({ kind: 'notice', noticeId, tenant, ...destination, notice }, 0);
  }

  /** Calls of `sendNotices` to refuse whole, as SQS refuses a batch. */
  refuseNoticeSends = 0;
  /** Calls of `sendNotices`, each with how many notices it carried. */
  readonly noticeSends: number[] = [];

  async sendNotices(items: readonly NoticeSend[]): Promise<readonly NoticeSendFailure[]> {
    this.noticeSends.push(items.length);
    if (this.refuseNoticeSends > 0) {
      this.refuseNoticeSends -= 1;
      return items.map(({ noticeId }) => ({ noticeId, reason: 'refused by the test' }));
    }
    for (const { noticeId, tenant, destination, notice } of items) await this.sendNotice(noticeId, tenant, destination, notice);
    return [];
  }

  async sendEnds(ends: readonly EmissionEnding[]): Promise<void> {
    if (this.refuseHandOvers) throw new TransientError('SQS down');
    this.handedOver.push([...ends]);
    this.hold({ kind: 'ends', ends }, 0);
  }

  async retryLater(receiptHandle: string, delaySeconds: number): Promise<void> {
    this.retries.push({ receiptHandle, delaySeconds });
  }

  /** The delay last asked for a message received with this receipt handle, if any. */
  putOff(receiptHandle: string): number | undefined {
    return this.retries.findLast((retry) => retry.receiptHandle === receiptHandle)?.delaySeconds;
  }

  private hold(message: DelayQueueMessage, delaySeconds: number): void {
    const now = this.clock.now();
    this.messagesSent += 1;
    this.messages.push({
      messageId: `delay-${this.messagesSent}`,
      body: encodeDelayQueueMessage(message),
      sentAt: now,
      visibleAt: now + delaySeconds * 1000,
      receives: 0,
    });
  }
}

/** The loading queue: the chunks sent to it. */
export class RecordingLoadingQueue implements LoadingQueue {
  readonly sent: LoadingChunk[] = [];
  /** From this call of `send` on (0: the first), SQS refuses. */
  refuseFromCall = Number.POSITIVE_INFINITY;
  private calls = 0;

  async send(chunks: readonly LoadingChunk[]): Promise<void> {
    if (this.calls++ >= this.refuseFromCall) throw new TransientError('SQS down');
    this.sent.push(...chunks);
  }
}

/** The changes queue: a bulk cancel's pages (`sent`) and a resume's (`sentJobs`, with their delays), in order. */
export class RecordingChangesQueue implements ChangesQueue {
  readonly sent: { readonly jobId: string; readonly from: string }[] = [];
  readonly sentJobs: { readonly job: ChangeJob; readonly delaySeconds: number }[] = [];
  /** Calls of `sendPage` to refuse, as SQS does when it is down, before taking them again. */
  refuseSends = 0;

  async sendPage(jobId: string, from: string): Promise<void> {
    if (this.refuseSends > 0) {
      this.refuseSends -= 1;
      throw new TransientError('SQS down');
    }
    this.sent.push({ jobId, from });
  }

  async send(job: ChangeJob, delaySeconds: number): Promise<void> {
    this.sentJobs.push({ job, delaySeconds });
  }
}

/** A publish, as the publisher was asked to make it, and when. */
export interface Publish {
  readonly topic: string;
  readonly message: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly at: number;
}

/** SNS: the publishes that went through; `refusal` says, for each publish asked, what SNS answers instead (undefined: it takes it). */
export class RecordingPublisher implements TopicPublisher {
  readonly published: Publish[] = [];

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    private readonly refusal: (publish: Publish) => Error | undefined = () => undefined,
  ) {}

  async publish(topic: string, message: string, attributes: Readonly<Record<string, string>> = {}): Promise<void> {
    const publish = { topic, message, attributes, at: this.clock.now() };
    const error = this.refusal(publish);
    if (error) throw error;
    this.published.push(publish);
  }
}

/** The last errors of failed records, by message id, as the table keeps them (a later one replaces an earlier). */
export class MemoryLastErrors implements LastErrors {
  readonly errors = new Map<string, LastError>();
  /** Refuses every write, as DynamoDB does when it is down. */
  refuseWrites = false;

  async write(errors: readonly LastError[]): Promise<void> {
    if (this.refuseWrites) throw new TransientError('DynamoDB down');
    for (const error of errors) this.errors.set(error.messageId, error);
  }

  async read(messageIds: readonly string[]): Promise<ReadonlyMap<string, LastError>> {
    return new Map(messageIds.flatMap((id) => (this.errors.has(id) ? [[id, this.errors.get(id) as LastError] as const] : [])));
  }
}

/** A tenant's latest refusals, as the refusal log keeps them: a ring of REFUSALS_KEPT.perTenant a tenant, newest first. */
export class MemoryRefusalLog implements RefusalLog {
  readonly kept = new Map<string, Refusal[]>();
  readonly notKept = new Map<string, number>();
  readonly refused = new Map<string, number>();
  /** Every keep call, as the adapter would write it: one batch, its expiry. */
  readonly writes: { readonly batch: readonly TenantRefusals[]; readonly expiresAt: number }[] = [];
  /** Refuses every write, as DynamoDB does when it is down. */
  refuseWrites = false;

  async keep(batch: readonly TenantRefusals[], expiresAt: number): Promise<void> {
    if (this.refuseWrites) throw new TransientError('DynamoDB down');
    this.writes.push({ batch, expiresAt });
    for (const { tenant, kept, notKept } of batch) {
      this.kept.set(
        tenant,
        [...kept]
          .reverse()
          .concat(this.kept.get(tenant) ?? [])
          .slice(0, REFUSALS_KEPT.perTenant),
      );
      this.notKept.set(tenant, (this.notKept.get(tenant) ?? 0) + notKept);
      this.refused.set(tenant, (this.refused.get(tenant) ?? 0) + kept.length + notKept);
    }
  }

  async recent(tenant: string): Promise<RecentRefusals> {
    return { refusals: this.kept.get(tenant) ?? [], refused: this.refused.get(tenant) ?? 0, notKept: this.notKept.get(tenant) ?? 0 };
  }
}
