import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { waitUntil } from '../domain/delay.js';
import { emissionDecision } from '../domain/emission.js';
import { emissionAttributes, expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { decodeDelayQueueMessage, type DelayQueueMessage } from '../domain/messages.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import { processBatch, receiveCount } from './batch.js';
import { publishNotice, reportFailure } from './failures.js';
import type { Clock, EmissionEnding, EventStore, Logger, SchedulerMetrics, TenantDirectory, TopicPublisher } from './ports.js';

export interface EmitterDeps {
  readonly config: Pick<SchedulerConfig, 'emitMaxAttempts' | 'emitClaimLeaseSeconds' | 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'read' | 'endEmissions' | 'claimNotice' | 'releaseNotice' | 'markNoticeSent'>;
  readonly publisher: TopicPublisher;
  /** Where a failed emission's notice goes when its event has no failure topic, or that refuses it. */
  readonly tenants: Pick<TenantDirectory, 'tenant'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** An emission whose end is still to be recorded, with the delay-queue message that carried it. */
interface PendingEnd {
  readonly messageId: string;
  readonly ending: EmissionEnding;
}

/** One batch's work: its event records, read together, and the ends to record together. */
interface BatchContext {
  readonly deps: EmitterDeps;
  readonly records: Promise<ReadonlyMap<string, EventRecord>>;
  readonly ends: PendingEnd[];
}

/** Publishes a failure notice once, however often its message is delivered (notices are rare: a claim is cheap there). */
async function sendNotice(deps: EmitterDeps, message: Extract<DelayQueueMessage, { kind: 'notice' }>): Promise<void> {
  const now = deps.clock.now();
  const claim = { owner: randomUUID(), now, leaseUntil: now + deps.config.emitClaimLeaseSeconds * 1000 };
  const outcome = await deps.store.claimNotice(message.noticeId, claim, expiresAtFor(now, deps.config.retentionSeconds));
  if (outcome === 'busy') throw new TransientError(`notice ${message.noticeId} is being published by another delivery; checking again later`);
  if (outcome === 'ended') {
    deps.metrics.count('DuplicatesSuppressed');
    return;
  }
  try {
    await publishNotice(deps)(message, message.notice);
  } catch (error) {
    await deps.store.releaseNotice(message.noticeId, claim.owner);
    throw error;
  }
  await deps.store.markNoticeSent(message.noticeId, deps.clock.now());
}

/** Emits one copy of an event, if its record still says so; its end joins the batch's. */
async function emitOne(context: BatchContext, record: SQSRecord, message: Extract<DelayQueueMessage, { kind: 'event' }>): Promise<void> {
  const { deps } = context;
  const { clock, logger, metrics } = deps;
  const { event } = message;
  const stored = (await context.records).get(event.id);
  switch (emissionDecision(stored, message)) {
    case 'already-ended':
      metrics.count('DuplicatesSuppressed');
      logger.info({ eventId: event.id }, 'already emitted; duplicate suppressed');
      return;
    case 'stale':
      metrics.count('StaleMessagesDropped');
      logger.info({ eventId: event.id, version: event.version }, 'cancelled, rescheduled or sent again since this copy was queued; dropped');
      return;
    case 'emit':
      if (stored === undefined) logger.warn({ eventId: event.id }, 'no record of this event; emitting it all the same');
  }
  await waitUntil(clock, event.dueAt);
  const end = await publish(deps, record, event);
  if (end !== undefined && stored !== undefined) context.ends.push({ messageId: record.messageId, ending: end });
}

/** Publishes to the target: the event's end, or a thrown error for SQS to retry. */
async function publish(deps: EmitterDeps, record: SQSRecord, event: ScheduledEvent): Promise<EmissionEnding | undefined> {
  const { clock, logger, metrics } = deps;
  try {
    await deps.publisher.publish(event.target, event.payload, emissionAttributes(event));
  } catch (error) {
    const attempt = receiveCount(record);
    const final = error instanceof EventRejectedError || attempt >= deps.config.emitMaxAttempts;
    if (!final) throw error;
    const reason = error instanceof EventRejectedError ? error.reason : REASON.PUBLISH_FAILED;
    const message =
      error instanceof EventRejectedError ? error.message : `publishing to the target failed ${attempt} times: ${String(error)}`;
    const failedAt = clock.now();
    const notice = failureNotice(reason, message, event, failedAt, { eventId: event.id, details: { attempt } });
    const destination = { failureTopic: event.failureTopic, deadLetterTopic: deps.tenants.tenant(event.tenant)?.deadLetterTopic };
    await reportFailure(deps, publishNotice(deps), notice, destination);
    return { event, end: { state: 'failed', at: failedAt, reason }, expiresAt: expiresAtFor(failedAt, deps.config.retentionSeconds) };
  }
  const emittedAt = clock.now();
  const lateness = emittedAt - event.dueAt;
  metrics.count('EventsEmitted');
  metrics.latenessMs(lateness);
  logger.debug({ eventId: event.id, latenessMs: lateness }, 'emitted');
  return { event, end: { state: 'emitted', at: emittedAt }, expiresAt: expiresAtFor(emittedAt, deps.config.retentionSeconds) };
}

/**
 * Records the batch's ends after its publishes, in batched conditional writes. An end that
 * finds its event already ended means two copies were emitted at once: counted and logged. An
 * end that cannot be recorded keeps its message, so the event cannot be changed as if open.
 */
async function recordEnds(deps: EmitterDeps, ends: readonly PendingEnd[], response: SQSBatchResponse): Promise<void> {
  if (ends.length === 0) return;
  try {
    const { alreadyEnded } = await deps.store.endEmissions(ends.map(({ ending }) => ending));
    for (const { event } of alreadyEnded) {
      deps.metrics.count('DuplicateEmissions');
      deps.logger.warn({ eventId: event.id, version: event.version }, 'emitted, but the event had already ended: two copies were emitted at once');
    }
  } catch (error) {
    deps.logger.error({ err: error, eventIds: ends.map(({ ending }) => ending.event.id) }, 'emitted, but could not record it; the messages are kept');
    for (const { messageId } of ends) response.batchItemFailures.push({ itemIdentifier: messageId });
  }
}

/**
 * Emits each delayed event at its exact due time. The batch's records are read once, when it
 * arrives (before its events are due): a copy of an event already emitted, cancelled,
 * rescheduled or sent again is dropped. The rest wait out the remainder, are published, and
 * their ends are recorded together afterwards, so nothing but the publish happens at the due
 * time. A failed publish is retried through SQS until `emitMaxAttempts`, then reported on the
 * failure topic. Also publishes the failure notices ingest hands over.
 */
export async function emitBatch(deps: EmitterDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const messages = new Map<SQSRecord, DelayQueueMessage | Error>();
  for (const record of records) {
    try {
      messages.set(record, decodeDelayQueueMessage(record.body));
    } catch (error) {
      messages.set(record, error as Error);
    }
  }
  const eventIds = [...messages.values()].flatMap((message) => (!(message instanceof Error) && message.kind === 'event' ? [message.event.id] : []));
  const reading = eventIds.length > 0 ? deps.store.read(eventIds) : Promise.resolve(new Map<string, EventRecord>());
  // Each event's handler awaits the read; one rejection is reported per record, not unhandled.
  reading.catch(() => {});
  const context: BatchContext = { deps, records: reading, ends: [] };
  const response = await processBatch(records, deps.logger, async (record) => {
    const message = messages.get(record);
    if (message === undefined || message instanceof Error) throw message ?? new TypeError('not a delay-queue message');
    return message.kind === 'event' ? emitOne(context, record, message) : sendNotice(deps, message);
  });
  await recordEnds(deps, context.ends, response);
  deps.metrics.flush();
  return response;
}
