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
import type { Clock, EmissionClaim, EmissionEnding, EventStore, Logger, SchedulerMetrics, TopicPublisher } from './ports.js';

export interface EmitterDeps {
  readonly config: Pick<SchedulerConfig, 'emitMaxAttempts' | 'emitClaimLeaseSeconds' | 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'claimEmission' | 'releaseEmission' | 'endEmissions' | 'claimNotice' | 'markNoticeSent'>;
  readonly publisher: TopicPublisher;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

async function handleMessage(deps: EmitterDeps, record: SQSRecord, endings: EmissionEnding[]): Promise<void> {
  const message = decodeDelayQueueMessage(record.body);
  if (message.kind === 'event') {
    await emitOne(deps, record, message.event, endings);
    return;
  }
  const now = deps.clock.now();
  const claim = newClaim(deps, now);
  const outcome = await deps.store.claimNotice(message.noticeId, claim, expiresAtFor(now, deps.config.retentionSeconds));
  if (outcome !== 'claimed') return skip(deps, message.noticeId, outcome);
  try {
    await publishNotice(deps)(message.failureTopic, message.notice);
  } catch (error) {
    await deps.store.releaseEmission(message.noticeId, claim.owner);
    throw error;
  }
  await deps.store.markNoticeSent(message.noticeId, deps.clock.now());
}

/** A claim for one attempt, held until the lease past the due time. */
function newClaim(deps: EmitterDeps, dueAt: number): EmissionClaim {
  const now = deps.clock.now();
  return {
    owner: randomUUID(),
    now,
    leaseUntil: Math.max(now, dueAt) + deps.config.emitClaimLeaseSeconds * 1000,
  };
}

/**
 * What a delivery does when it cannot claim: 'busy' throws, so this delivery is retried later
 * (the holder may still fail); an ended or stale one is dropped.
 */
function skip(deps: EmitterDeps, id: string, outcome: 'ended' | 'stale' | 'busy'): void {
  if (outcome === 'busy') throw new TransientError(`${id} is being emitted by another delivery; checking again later`);
  if (outcome === 'ended') {
    deps.metrics.count('DuplicatesSuppressed');
    deps.logger.info({ eventId: id }, 'already emitted; duplicate suppressed');
    return;
  }
  deps.metrics.count('StaleMessagesDropped');
  deps.logger.info({ eventId: id }, 'cancelled or rescheduled since it was queued; dropped');
}

/** Emits one event; its end is added to `endings`, recorded for the whole batch at once. */
async function emitOne(deps: EmitterDeps, record: SQSRecord, event: ScheduledEvent, endings: EmissionEnding[]): Promise<void> {
  const { store, clock, logger, metrics } = deps;

  // The claim is made while the event waits out its last second, so it costs no lateness.
  const claim = newClaim(deps, event.dueAt);
  const outcome = await store.claimEmission(event, claim);
  if (outcome !== 'claimed') return skip(deps, event.id, outcome);
  await clock.sleep(remainingWaitMs(event.dueAt, clock.now()));

  try {
    await deps.publisher.publish(event.target, event.payload, emissionAttributes(event));
  } catch (error) {
    const attempt = receiveCount(record);
    const final = error instanceof EventRejectedError || attempt >= deps.config.emitMaxAttempts;
    if (!final) {
      await store.releaseEmission(event.id, claim.owner);
      throw error;
    }
    const reason = error instanceof EventRejectedError ? error.reason : REASON.PUBLISH_FAILED;
    const message =
      error instanceof EventRejectedError ? error.message : `publishing to the target failed ${attempt} times: ${String(error)}`;
    const failedAt = clock.now();
    const notice = failureNotice(reason, message, event, failedAt, { eventId: event.id, details: { attempt } });
    await reportFailure(deps, publishNotice(deps), notice, event.failureTopic);
    endings.push({ event, end: { state: 'failed', at: failedAt, reason }, expiresAt: expiresAtFor(failedAt, deps.config.retentionSeconds) });
    return;
  }
  const emittedAt = clock.now();
  const lateness = emittedAt - event.dueAt;
  metrics.count('EventsEmitted');
  metrics.latenessMs(lateness);
  logger.debug({ eventId: event.id, latenessMs: lateness }, 'emitted');
  endings.push({ event, end: { state: 'emitted', at: emittedAt }, expiresAt: expiresAtFor(emittedAt, deps.config.retentionSeconds) });
}

/**
 * Records the batch's ends (each tenant's open-events counter is written once for the lot). If
 * that fails, the claims still hold off other deliveries until their leases end, and failing the
 * records would only publish them again: it is logged instead.
 */
async function recordEnds(deps: EmitterDeps, endings: readonly EmissionEnding[]): Promise<void> {
  if (endings.length === 0) return;
  await deps.store.endEmissions(endings).catch((error: unknown) => {
    deps.logger.error({ err: error, eventIds: endings.map(({ event }) => event.id) }, 'emitted, but could not record it');
  });
}

/**
 * Emits each delayed event at its exact due time: claims its queued version (so a second
 * delivery of the same event waits, then finds it emitted, and a cancelled or rescheduled
 * version is dropped), waits out the remainder, publishes to the target, then
 * records it as emitted. A failed publish is retried through SQS until `emitMaxAttempts`, then
 * reported on the failure topic. Also publishes the failure notices ingest hands over.
 */
export async function emitBatch(deps: EmitterDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const endings: EmissionEnding[] = [];
  const response = await processBatch(records, deps.logger, (record) => handleMessage(deps, record, endings));
  await recordEnds(deps, endings);
  deps.metrics.flush();
  return response;
}
