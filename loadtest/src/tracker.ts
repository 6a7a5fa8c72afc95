import * as hdr from 'hdr-histogram-js';
import type { FirstDelivery } from './stages.js';

/** One message as the consumer received it. */
export interface Receipt {
  /** The `scheduler-event-id` attribute; undefined when the message had none. */
  readonly eventId: string | undefined;
  /** The `scheduler-scheduled-at` attribute, epoch ms; undefined when missing or not a date. */
  readonly scheduledAt: number | undefined;
  /** The `scheduler-published-at` attribute, epoch ms: the emitter's clock as it published; undefined when missing. */
  readonly publishedAt: number | undefined;
  /** Wall clock when ReceiveMessage returned it, epoch ms. */
  readonly receivedAt: number;
  /** When the consumer's queue took it (its SentTimestamp), epoch ms; undefined when the receive did not say. */
  readonly queuedAt: number | undefined;
  /** SQS message id: the same id again is a redelivery by the consumer queue, not a second emission. */
  readonly messageId: string;
}

export interface DeliveryCounts {
  /** Events the run asked the scheduler for (published successfully). */
  readonly expected: number;
  /** Events whose publish failed after retries: not expected, not missing. */
  readonly publishFailed: number;
  /** Distinct expected events received at least once. */
  readonly delivered: number;
  readonly missing: number;
  /** Extra emissions of an event already received (a different SNS message for the same event). */
  readonly duplicated: number;
  /** Events received before their scheduled time. */
  readonly early: number;
  /**
   * Events published before their scheduled time, by the emitter's own publish time (any of their
   * deliveries): early where it happens, which the receive time, always later, cannot show.
   */
  readonly earlyPublished: number;
  /** Events received later than the late threshold (warm-up events aside). */
  readonly late: number;
  /** Events sent first to warm the pipeline up: in every count above, not in the lateness figures. */
  readonly warmup: number;
  /** Messages that are not events of this run (no or unknown id). */
  readonly unexpected: number;
  /** Events whose `scheduler-scheduled-at` differs from the time the run asked for. */
  readonly wrongScheduledAt: number;
  /** The consumer queue handing out the same message again (a harness artifact, not the scheduler's). */
  readonly consumerRedeliveries: number;
  /** Events reported on the run's failure topic and never delivered: accounted for, not missing. */
  readonly failed: number;
  /** The same by reason code. */
  readonly failedByReason: Readonly<Record<string, number>>;
  /** Events delivered and also reported failed (a publish whose answer was lost on the last attempt). */
  readonly deliveredAndFailed: number;
}

/** A failure notice as the run's failure-topic consumer received it. */
export interface FailureReceipt {
  /** The notice's `eventId`, or the event id of the request it quotes; undefined when neither is known. */
  readonly eventId: string | undefined;
  readonly reason: string;
  readonly messageId: string;
}

export interface LatenessSummary {
  /** First delivery of each event: receive time minus scheduled time. */
  readonly count: number;
  readonly min: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly 'p99.9': number;
  readonly max: number;
}

/** HDR histogram range: 1 ms resolution from 0 to a day, 3 significant digits. */
const HISTOGRAM_HIGHEST_MS = 24 * 3600 * 1000;

/** A lateness distribution: an HDR histogram for the percentiles, the exact min, max and mean, and each ms value's count. */
class LatenessRecorder {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HISTOGRAM_HIGHEST_MS,
    numberOfSignificantValueDigits: 3,
  });
  /** Exact distribution (ms to count) for the plots; small, as lateness spans few distinct ms values. */
  readonly counts = new Map<number, number>();
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;
  private sum = 0;

  record(lateness: number): void {
    this.min = Math.min(this.min, lateness);
    this.max = Math.max(this.max, lateness);
    this.sum += lateness;
    // Early ones are counted apart; the histogram holds them at 0.
    this.histogram.recordValue(Math.min(Math.max(0, lateness), HISTOGRAM_HIGHEST_MS));
    this.counts.set(lateness, (this.counts.get(lateness) ?? 0) + 1);
  }

  /** Undefined until something was recorded. */
  summary(): LatenessSummary | undefined {
    const count = this.histogram.totalCount;
    if (count === 0) return undefined;
    // The histogram keeps 3 significant digits: above 2 s a percentile may round past the exact max.
    const at = (percentile: number): number => Math.min(this.max, this.histogram.getValueAtPercentile(percentile));
    return {
      count,
      min: this.min,
      mean: Math.round((this.sum / count) * 10) / 10,
      p50: at(50),
      p90: at(90),
      p99: at(99),
      'p99.9': at(99.9),
      // Exact, where the histogram's own max is rounded to its precision.
      max: this.max,
    };
  }
}

/**
 * Matches what the consumer receives against what the run scheduled: lateness of each event's
 * first delivery (in an HDR histogram), and the events missing, duplicated, early or unknown.
 * An event reported on the failure topic instead of delivered is failed, not missing.
 */
export class DeliveryTracker {
  private readonly expectedDue = new Map<string, number>();
  /** Events that warm the pipeline up: checked like the others, left out of the lateness figures. */
  private readonly warmup = new Set<string>();
  private readonly seenMessages = new Set<string>();
  private readonly deliveries = new Map<string, number>();
  private readonly firstReceivedAt = new Map<string, number>();
  /** When each event's first delivery reached the consumer's queue (its SentTimestamp), where the receive said. */
  private readonly firstQueuedAt = new Map<string, number>();
  /** The emitter's publish time (`scheduler-published-at`) of each event's first delivery, where it carried one. */
  private readonly firstPublishedAt = new Map<string, number>();
  /** The first reason reported for each event on the failure topic. */
  private readonly failures = new Map<string, string>();
  /** Receive time minus scheduled time, each measured event's first delivery. */
  private readonly received = new LatenessRecorder();
  /** The emitter's own publish time (`scheduler-published-at`) minus the scheduled time, for the same deliveries. */
  private readonly published = new LatenessRecorder();
  private publishFailures = 0;
  private duplicated = 0;
  private readonly earlyEvents = new Set<string>();
  private readonly earlyPublishedEvents = new Set<string>();
  private late = 0;
  private unexpected = 0;
  private wrongScheduledAt = 0;
  private consumerRedeliveries = 0;

  constructor(private readonly lateThresholdMs: number) {}

  expect(eventId: string, dueAt: number, options: { readonly warmup?: boolean } = {}): void {
    this.expectedDue.set(eventId, dueAt);
    if (options.warmup) this.warmup.add(eventId);
  }

  /** The run could not publish this event: it is no longer expected. */
  publishFailed(eventId: string): void {
    if (this.expectedDue.delete(eventId)) this.publishFailures += 1;
  }

  record(receipt: Receipt): void {
    if (this.redelivered(receipt.messageId)) return;
    const due = receipt.eventId === undefined ? undefined : this.expectedDue.get(receipt.eventId);
    if (receipt.eventId === undefined || due === undefined) {
      this.unexpected += 1;
      return;
    }
    if (receipt.publishedAt !== undefined && receipt.publishedAt < (receipt.scheduledAt ?? due))
      this.earlyPublishedEvents.add(receipt.eventId);
    const previous = this.deliveries.get(receipt.eventId) ?? 0;
    this.deliveries.set(receipt.eventId, previous + 1);
    if (previous > 0) {
      this.duplicated += 1;
      return;
    }
    this.firstReceivedAt.set(receipt.eventId, receipt.receivedAt);
    if (receipt.queuedAt !== undefined) this.firstQueuedAt.set(receipt.eventId, receipt.queuedAt);
    if (receipt.publishedAt !== undefined) this.firstPublishedAt.set(receipt.eventId, receipt.publishedAt);
    if (receipt.scheduledAt !== due) this.wrongScheduledAt += 1;
    // Measured against the attribute, as any consumer would; a mismatch is counted above.
    const scheduled = receipt.scheduledAt ?? due;
    const lateness = receipt.receivedAt - scheduled;
    if (lateness < 0) this.earlyEvents.add(receipt.eventId);
    if (this.warmup.has(receipt.eventId)) return;
    if (lateness > this.lateThresholdMs) this.late += 1;
    this.received.record(lateness);
    if (receipt.publishedAt !== undefined) this.published.record(receipt.publishedAt - scheduled);
  }

  /** A failure notice from the run's failure topic. */
  recordFailure(notice: FailureReceipt): void {
    if (this.redelivered(notice.messageId)) return;
    if (notice.eventId === undefined || !this.expectedDue.has(notice.eventId)) {
      this.unexpected += 1;
      return;
    }
    if (!this.failures.has(notice.eventId)) this.failures.set(notice.eventId, notice.reason);
  }

  private redelivered(messageId: string): boolean {
    if (!this.seenMessages.has(messageId)) {
      this.seenMessages.add(messageId);
      return false;
    }
    this.consumerRedeliveries += 1;
    return true;
  }

  /** Distinct expected events received so far. */
  get delivered(): number {
    return this.deliveries.size;
  }

  /** Expected events delivered or reported failed: the rest are missing. */
  get accountedFor(): number {
    return this.deliveries.size + this.failedOnly().length;
  }

  /** Events reported failed and never delivered, with the reason. */
  failedOnly(): { readonly eventId: string; readonly reason: string }[] {
    return [...this.failures].filter(([id]) => !this.deliveries.has(id)).map(([eventId, reason]) => ({ eventId, reason }));
  }

  get expected(): number {
    return this.expectedDue.size;
  }

  get lateCount(): number {
    return this.late;
  }

  counts(): DeliveryCounts {
    const failed = this.failedOnly();
    const failedByReason: Record<string, number> = {};
    for (const { reason } of failed) failedByReason[reason] = (failedByReason[reason] ?? 0) + 1;
    return {
      expected: this.expectedDue.size,
      publishFailed: this.publishFailures,
      delivered: this.deliveries.size,
      missing: this.expectedDue.size - this.deliveries.size - failed.length,
      duplicated: this.duplicated,
      early: this.earlyEvents.size,
      earlyPublished: this.earlyPublishedEvents.size,
      late: this.late,
      warmup: this.warmup.size,
      unexpected: this.unexpected,
      wrongScheduledAt: this.wrongScheduledAt,
      consumerRedeliveries: this.consumerRedeliveries,
      failed: failed.length,
      failedByReason,
      deliveredAndFailed: this.failures.size - failed.length,
    };
  }

  /** Undefined until something was delivered. */
  lateness(): LatenessSummary | undefined {
    return this.received.summary();
  }

  /**
   * How late the emitter published, by its own clock (`scheduler-published-at`), for the same
   * deliveries: what of the lateness arose before the publish call; the rest is SNS's delivery
   * and the consumer's receive. Undefined when no delivery carried the attribute.
   */
  publishLateness(): LatenessSummary | undefined {
    return this.published.summary();
  }

  /** [lateness ms, events] pairs, ascending: the data of the histogram plots. */
  distribution(): [number, number][] {
    return [...this.received.counts.entries()].sort((a, b) => a[0] - b[0]);
  }

  /** Each measured event's due time, and when its first delivery reached the consumer's queue and the consumer (epoch ms), by event id. */
  firstDeliveries(): Map<string, FirstDelivery> {
    const result = new Map<string, FirstDelivery>();
    for (const [id, receivedAt] of this.firstReceivedAt) {
      if (!this.warmup.has(id))
        result.set(id, { dueAt: this.expectedDue.get(id) ?? receivedAt, receivedAt, queuedAt: this.firstQueuedAt.get(id) });
    }
    return result;
  }

  /** Ids still missing: neither delivered nor reported failed (at most `limit`). */
  missingIds(limit: number): string[] {
    const missing: string[] = [];
    for (const id of this.expectedDue.keys()) {
      if (missing.length >= limit) break;
      if (!this.deliveries.has(id) && !this.failures.has(id)) missing.push(id);
    }
    return missing;
  }

  /** Ids of events delivered before their scheduled time. */
  earlyIds(): string[] {
    return [...this.earlyEvents];
  }

  /** When an event was first received, epoch ms; undefined if never. */
  firstReceived(eventId: string): number | undefined {
    return this.firstReceivedAt.get(eventId);
  }

  /** The emitter's publish time of an event's first delivery, epoch ms; undefined if never delivered, or without the attribute. */
  firstPublished(eventId: string): number | undefined {
    return this.firstPublishedAt.get(eventId);
  }

  /** How many times an event was delivered (consumer redeliveries of one message not counted). */
  deliveriesOf(eventId: string): number {
    return this.deliveries.get(eventId) ?? 0;
  }
}
