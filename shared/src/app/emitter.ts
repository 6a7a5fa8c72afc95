import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { remainingWaitMs } from '../domain/delay.js';
import { emissionAttributes, expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import { decodeDelayQueueMessage } from '../domain/messages.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import { processBatch, receiveCount } from './batch.js';
import { publishNotice, reportFailure } from './failures.js';
import type { Clock, EventStore, Logger, SchedulerMetrics, TopicPublisher } from './ports.js';

export interface EmitterDeps {
  readonly config: Pick<SchedulerConfig, 'emitMaxAttempts' | 'emitClaimLeaseSeconds' | 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'claimEmission' | 'releaseEmission' | 'markEmitted'>;
  readonly publisher: TopicPublisher;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

async function handleMessage(deps: EmitterDeps, record: SQSRecord): Promise<void> {
  const message = decodeDelayQueueMessage(record.body);
  if (message.kind === 'event') {
    await emitOne(deps, record, message.event);
    return;
  }
  const now = deps.clock.now();
  const owner = await claimOrSkip(deps, message.noticeId, now);
  if (owner === undefined) return;
  try {
    await publishNotice(deps)(message.failureTopic, message.notice);
  } catch (error) {
    await deps.store.releaseEmission(message.noticeId, owner);
    throw error;
  }
  await deps.store.markEmitted(message.noticeId, deps.clock.now());
}

/**
 * Claims the emission of `id` for this attempt. Undefined when it was already emitted (a
 * duplicate, dropped); throws when another attempt holds it, so this one is retried later.
 */
async function claimOrSkip(deps: EmitterDeps, id: string, dueAt: number): Promise<string | undefined> {
  const owner = randomUUID();
  const now = deps.clock.now();
  const claim = await deps.store.claimEmission(id, {
    owner,
    now,
    leaseUntil: Math.max(now, dueAt) + deps.config.emitClaimLeaseSeconds * 1000,
    expiresAt: expiresAtFor(dueAt, deps.config.retentionSeconds),
  });
  if (claim === 'busy') throw new TransientError(`${id} is being emitted by another delivery; checking again later`);
  if (claim === 'emitted') {
    deps.metrics.count('DuplicatesSuppressed');
    deps.logger.info({ eventId: id }, 'already emitted; duplicate suppressed');
    return undefined;
  }
  return owner;
}

async function emitOne(deps: EmitterDeps, record: SQSRecord, event: ScheduledEvent): Promise<void> {
  const { store, clock, logger, metrics } = deps;

  // The claim is made while the event waits out its last second, so it costs no lateness.
  const owner = await claimOrSkip(deps, event.id, event.dueAt);
  if (owner === undefined) return;
  await clock.sleep(remainingWaitMs(event.dueAt, clock.now()));

  try {
    await deps.publisher.publish(event.target, event.payload, emissionAttributes(event));
  } catch (error) {
    const attempt = receiveCount(record);
    const final = error instanceof EventRejectedError || attempt >= deps.config.emitMaxAttempts;
    if (!final) {
      await store.releaseEmission(event.id, owner);
      throw error;
    }
    const reason = error instanceof EventRejectedError ? error.reason : REASON.PUBLISH_FAILED;
    const message =
      error instanceof EventRejectedError ? error.message : `publishing to the target failed ${attempt} times: ${String(error)}`;
    const notice = failureNotice(reason, message, event, clock.now(), { eventId: event.id, details: { attempt } });
    await reportFailure(deps, publishNotice(deps), notice, event.failureTopic);
    await store.markEmitted(event.id, clock.now());
    return;
  }
  const emittedAt = clock.now();
  const lateness = emittedAt - event.dueAt;
  metrics.count('EventsEmitted');
  metrics.latenessMs(lateness);
  logger.debug({ eventId: event.id, latenessMs: lateness }, 'emitted');
  // Bookkeeping after the publish: if it fails, the claim still holds off other deliveries,
  // and failing the record would only publish it again.
  await store.markEmitted(event.id, emittedAt).catch((error: unknown) => {
    logger.warn({ err: error, eventId: event.id }, 'emitted, but could not record it');
  });
}

/**
 * Emits each delayed event at its exact due time: claims it (so a second delivery of the same
 * event waits, then finds it emitted), waits out the remainder, publishes to the target, then
 * records it as emitted. A failed publish is retried through SQS until `emitMaxAttempts`, then
 * reported on the failure topic. Also publishes the failure notices ingest hands over.
 */
export async function emitBatch(deps: EmitterDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps.logger, (record) => handleMessage(deps, record));
  deps.metrics.flush();
  return response;
}
