import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { bucketShardKeyFor } from '../domain/buckets.js';
import { delaySecondsFor } from '../domain/delay.js';
import { expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import { validateScheduleRequest } from '../domain/validation.js';
import { processBatch } from './batch.js';
import { reportFailure } from './failures.js';
import type { Clock, DelayQueue, EventStore, Logger, SchedulerMetrics } from './ports.js';

export interface IngestDeps {
  readonly config: Pick<
    SchedulerConfig,
    'nearPathWindowSeconds' | 'emitterLeadMs' | 'bucketSeconds' | 'shardCount' | 'retentionSeconds'
  >;
  readonly store: EventStore;
  readonly delayQueue: DelayQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** The input topic's message as it reaches the ingest queue: SNS's envelope, or the raw text. */
export function unwrapInput(record: SQSRecord): { readonly text: string; readonly inputMessageId: string } {
  try {
    const envelope = JSON.parse(record.body) as { Type?: unknown; Message?: unknown; MessageId?: unknown };
    if (envelope.Type === 'Notification' && typeof envelope.Message === 'string' && typeof envelope.MessageId === 'string') {
      return { text: envelope.Message, inputMessageId: envelope.MessageId };
    }
  } catch {
    // Not an envelope: raw delivery, validated as it is.
  }
  return { text: record.body, inputMessageId: record.messageId };
}

/**
 * Validates each input, reports the invalid ones, sends events due within the near-path
 * window to the delay queue and stores the later ones. Only infrastructure failures fail a
 * record (to be retried); a bad message never fails its batch.
 */
export async function ingestBatch(deps: IngestDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const { config, clock, logger, metrics } = deps;
  const now = clock.now();
  const windowEnd = now + config.nearPathWindowSeconds * 1000;
  const nearPath: { record: SQSRecord; event: ScheduledEvent }[] = [];

  const response = await processBatch(records, logger, async (record) => {
    const { text, inputMessageId } = unwrapInput(record);
    const result = validateScheduleRequest(text, inputMessageId);
    if (!result.accepted) {
      metrics.count('EventsRejected', 1, result.error.reason);
      const notice = failureNotice(result.error.reason, result.error.message, result.input, now, { details: result.error.details });
      // The emitter publishes it (clients need to trust one role only), once per input message.
      const noticeId = `n-${inputMessageId}`;
      await reportFailure(deps, (topic, body) => deps.delayQueue.sendNotice(noticeId, topic, body), notice, result.failureTopic);
      return;
    }
    const { event } = result;
    metrics.count('EventsIngested');
    if (event.dueAt < windowEnd) {
      nearPath.push({ record, event });
      return;
    }
    const outcome = await deps.store.storePending(event, bucketShardKeyFor(event.id, event.dueAt, config), expiresAtFor(event.dueAt, config.retentionSeconds));
    if (outcome === 'duplicate') {
      metrics.count('DuplicatesSuppressed');
      logger.info({ eventId: event.id }, 'duplicate input suppressed');
    } else {
      metrics.count('EventsStored');
      logger.debug({ eventId: event.id, dueAt: event.dueAt }, 'event stored');
    }
  });

  if (nearPath.length > 0) {
    const sendTime = clock.now();
    const failures = await deps.delayQueue.send(
      nearPath.map(({ event }) => ({ event, delaySeconds: delaySecondsFor(event.dueAt, sendTime, config.emitterLeadMs) })),
    );
    metrics.count('EventsDelayed', nearPath.length - failures.length);
    const reasons = new Map(failures.map((failure) => [failure.eventId, failure.reason]));
    for (const { record, event } of nearPath) {
      const reason = reasons.get(event.id);
      if (reason === undefined) continue;
      logger.error({ eventId: event.id, reason, messageId: record.messageId }, 'delay queue send failed; the record will be retried');
      response.batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  metrics.flush();
  return response;
}
