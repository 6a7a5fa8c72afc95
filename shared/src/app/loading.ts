import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { delaySecondsFor } from '../domain/delay.js';
import { SQS_MAX_DELAY_SECONDS } from '../domain/limits.js';
import { decodeLoadingChunk } from '../domain/messages.js';
import { TransientError } from '../domain/reasons.js';
import { processBatch } from './batch.js';
import type { Clock, DelayQueue, EventStore, Logger, SchedulerMetrics } from './ports.js';

export interface LoadingDeps {
  readonly config: Pick<SchedulerConfig, 'emitterLeadMs'>;
  readonly store: Pick<EventStore, 'takeForLoading'>;
  readonly delayQueue: DelayQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/**
 * Moves one chunk of stored events into the delay queue. The chunk's records are read in one
 * batch and taken by this loading message with batched conditional writes, so a second
 * message with the same ids sends nothing, nor does a cancelled one. The same message
 * redelivered (after a crash or a failed send) takes its events again with a new copy token
 * and sends them again: an earlier copy is then dropped by the emitter.
 */
export async function loadChunks(deps: LoadingDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps.logger, async (record) => {
    const { ids } = decodeLoadingChunk(record.body);
    const queuedBy = randomUUID();
    const now = deps.clock.now();
    // Only what an SQS delay can reach: an event moved further out since the loader saw it stays stored.
    const events = await deps.store.takeForLoading(ids, { owner: record.messageId, queuedBy, now, horizonMs: now + SQS_MAX_DELAY_SECONDS * 1000 });
    const skipped = ids.length - events.length;
    if (skipped > 0) deps.metrics.count('DuplicatesSuppressed', skipped);
    if (events.length === 0) return;
    const sendTime = deps.clock.now();
    const failures = await deps.delayQueue.send(
      events.map((event) => ({ event, queuedBy, delaySeconds: delaySecondsFor(event.dueAt, sendTime, deps.config.emitterLeadMs) })),
    );
    deps.metrics.count('EventsDelayed', events.length - failures.length);
    if (failures.length > 0) {
      throw new TransientError(`${failures.length} of ${events.length} events could not be sent to the delay queue (${failures[0]?.reason})`);
    }
    deps.logger.debug({ sent: events.length, skipped }, 'chunk loaded');
  });
  deps.metrics.flush();
  return response;
}
