import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { SQS_MAX_DELAY_SECONDS, type SchedulerConfig } from '../config.js';
import { delaySecondsFor } from '../domain/delay.js';
import type { ScheduledEvent } from '../domain/event.js';
import { decodeLoadingChunk } from '../domain/messages.js';
import { TransientError } from '../domain/reasons.js';
import { processBatch } from './batch.js';
import type { Clock, DelayQueue, EventStore, Logger, SchedulerMetrics } from './ports.js';

export interface LoadingDeps {
  readonly config: Pick<SchedulerConfig, 'emitterLeadMs'>;
  readonly store: EventStore;
  readonly delayQueue: DelayQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** Stored events read per chunk at once: enough to hide DynamoDB latency, few enough not to throttle. */
const TAKE_CONCURRENCY = 16;

async function takeAll(deps: LoadingDeps, ids: readonly string[], owner: string): Promise<ScheduledEvent[]> {
  const taken: ScheduledEvent[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      const now = deps.clock.now();
      // Only what an SQS delay can reach: an event moved further out since the loader saw it stays stored.
      const event = await deps.store.takeForLoading(id, owner, now, now + SQS_MAX_DELAY_SECONDS * 1000);
      if (event) taken.push(event);
    }
  };
  await Promise.all(Array.from({ length: Math.min(TAKE_CONCURRENCY, ids.length) }, worker));
  return taken;
}

/**
 * Moves one chunk of stored events into the delay queue. Each event is taken by this loading
 * message first, so a second message with the same ids sends nothing, nor does a cancelled one; the same message
 * redelivered (after a crash or a failed send) sends its events again, and the emitter
 * suppresses what was already emitted.
 */
export async function loadChunks(deps: LoadingDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps.logger, async (record) => {
    const { ids } = decodeLoadingChunk(record.body);
    const events = await takeAll(deps, ids, record.messageId);
    const skipped = ids.length - events.length;
    if (skipped > 0) deps.metrics.count('DuplicatesSuppressed', skipped);
    if (events.length === 0) return;
    const now = deps.clock.now();
    const failures = await deps.delayQueue.send(
      events.map((event) => ({ event, delaySeconds: delaySecondsFor(event.dueAt, now, deps.config.emitterLeadMs) })),
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
