import * as hdr from 'hdr-histogram-js';
import type { EmissionTrace } from './service/probe.js';

/** Percentiles of one stage's durations, ms; negative values count in `negative` and as 0 in the percentiles. */
export interface StageSummary {
  readonly count: number;
  readonly negative: number;
  readonly min: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * Where lateness arose, per stage of an event's way out (ms; from traces inside the local
 * service). Every time is the wall clock of the one machine, read in the service and in the
 * harness, so they compare. Lateness = publishStartLateness + publishStartToConsumer.
 */
export interface StageBreakdown {
  /** Due time minus the event's first send to the delay queue: how far ahead ingest (or loading) placed it (negative: late). */
  readonly queuedBeforeDue: StageSummary;
  /** Due time minus when the emitter received the event: how early the delay queue handed it over (negative: late). */
  readonly receivedBeforeDue: StageSummary;
  /** Publish start minus due time: the emitter's own lateness. */
  readonly publishStartLateness: StageSummary;
  /** How long the SNS Publish (or PublishBatch) call took. */
  readonly publishCall: StageSummary;
  /**
   * Consumer receive minus publish start: the publish, SNS to the consumer's queue, and its long
   * poll. From the start, not the end, of the call: the emulator delivers to the queue before it
   * answers, so a consumer often has the message before the call returns.
   */
  readonly publishStartToConsumer: StageSummary;
  /**
   * The consumer's queue's SentTimestamp minus the publish start: SNS's fan-out to the queue, in
   * the emulator. With queueToConsumer it splits publishStartToConsumer.
   */
  readonly publishStartToQueue: StageSummary;
  /** Consumer receive minus the queue's SentTimestamp: the long poll's answer and the harness's own event loop. */
  readonly queueToConsumer: StageSummary;
  /** The events that arrived most late, most late first, with their stages: whether they bunch up in time, and where they lost it. */
  readonly mostLate: readonly LateEvent[];
}

export interface LateEvent {
  readonly dueAt: string;
  readonly latenessMs: number;
  readonly queuedBeforeDueMs: number | undefined;
  readonly receivedBeforeDueMs: number | undefined;
  readonly publishStartLatenessMs: number | undefined;
  readonly publishCallMs: number | undefined;
  readonly publishStartToConsumerMs: number | undefined;
  readonly publishStartToQueueMs: number | undefined;
  readonly queueToConsumerMs: number | undefined;
}

/** One event's first delivery: its due time, and when its consumer's queue took it and the consumer received it (epoch ms). */
export interface FirstDelivery {
  readonly dueAt: number;
  readonly receivedAt: number;
  /** The queue's SentTimestamp; undefined when the receive did not carry it. */
  readonly queuedAt: number | undefined;
}

const MOST_LATE_SHOWN = 10;

const HIGHEST_MS = 24 * 3600 * 1000;

export function summarize(values: readonly number[]): StageSummary {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_MS, numberOfSignificantValueDigits: 3 });
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let negative = 0;
  for (const value of values) {
    if (value < 0) negative += 1;
    histogram.recordValue(Math.min(HIGHEST_MS, Math.max(0, value)));
    min = Math.min(min, value);
    max = Math.max(max, value);
  }
  if (values.length === 0) return { count: 0, negative: 0, min: Number.NaN, p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
  return { count: values.length, negative, min, p50: histogram.getValueAtPercentile(50), p99: histogram.getValueAtPercentile(99), max };
}

export function stageBreakdown(
  deliveries: ReadonlyMap<string, FirstDelivery>,
  traces: Readonly<Record<string, EmissionTrace>>,
): StageBreakdown {
  const queuedBeforeDue: number[] = [];
  const receivedBeforeDue: number[] = [];
  const publishStartLateness: number[] = [];
  const publishCall: number[] = [];
  const publishStartToConsumer: number[] = [];
  const publishStartToQueue: number[] = [];
  const queueToConsumer: number[] = [];
  for (const [id, delivery] of deliveries) {
    const trace = traces[id];
    if (!trace) continue;
    if (trace.queuedAt !== undefined) queuedBeforeDue.push(delivery.dueAt - trace.queuedAt);
    receivedBeforeDue.push(delivery.dueAt - trace.receivedAt);
    if (trace.publishStartedAt === undefined || trace.publishEndedAt === undefined) continue;
    publishStartLateness.push(trace.publishStartedAt - delivery.dueAt);
    publishCall.push(trace.publishEndedAt - trace.publishStartedAt);
    publishStartToConsumer.push(delivery.receivedAt - trace.publishStartedAt);
    if (delivery.queuedAt === undefined) continue;
    publishStartToQueue.push(delivery.queuedAt - trace.publishStartedAt);
    queueToConsumer.push(delivery.receivedAt - delivery.queuedAt);
  }
  const mostLate = [...deliveries.entries()]
    .sort(([, a], [, b]) => b.receivedAt - b.dueAt - (a.receivedAt - a.dueAt))
    .slice(0, MOST_LATE_SHOWN)
    .map(([id, delivery]): LateEvent => {
      const trace = traces[id];
      const started = trace?.publishStartedAt;
      const ended = trace?.publishEndedAt;
      const { queuedAt } = delivery;
      return {
        dueAt: new Date(delivery.dueAt).toISOString(),
        latenessMs: delivery.receivedAt - delivery.dueAt,
        queuedBeforeDueMs: trace?.queuedAt === undefined ? undefined : delivery.dueAt - trace.queuedAt,
        receivedBeforeDueMs: trace ? delivery.dueAt - trace.receivedAt : undefined,
        publishStartLatenessMs: started === undefined ? undefined : started - delivery.dueAt,
        publishCallMs: started === undefined || ended === undefined ? undefined : ended - started,
        publishStartToConsumerMs: started === undefined ? undefined : delivery.receivedAt - started,
        publishStartToQueueMs: started === undefined || queuedAt === undefined ? undefined : queuedAt - started,
        queueToConsumerMs: queuedAt === undefined ? undefined : delivery.receivedAt - queuedAt,
      };
    });
  return {
    mostLate,
    queuedBeforeDue: summarize(queuedBeforeDue),
    receivedBeforeDue: summarize(receivedBeforeDue),
    publishStartLateness: summarize(publishStartLateness),
    publishCall: summarize(publishCall),
    publishStartToConsumer: summarize(publishStartToConsumer),
    publishStartToQueue: summarize(publishStartToQueue),
    queueToConsumer: summarize(queueToConsumer),
  };
}
