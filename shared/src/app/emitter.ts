import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { waitUntil } from '../domain/delay.js';
import { emissionDecision, emissionRefusal, noticeDestination, type EmissionEnding } from '../domain/emission.js';
import { emissionAttributes, expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { decodeDelayQueueMessage, type DelayQueueMessage } from '../domain/messages.js';
import { EventRejectedError, REASON, TransientError, type ReasonCode } from '../domain/reasons.js';
import { endsRetryDelaySeconds, publishAgeSeconds, retryDelaySeconds } from '../domain/retry.js';
import { processBatch, receiveCount, sentAt } from './batch.js';
import { countPlaces, recordEndings, releasePlaces, type EndWriter } from './end-writer.js';
import { publishNotice, reportFailure } from './failures.js';
import type { PublishWindow } from './publish-window.js';
import type { Clock, DelayQueue, EventStore, Logger, NoticeClaims, SchedulerMetrics, TenantDirectory, TopicPublisher } from './ports.js';

export interface EmitterDeps {
  readonly config: Pick<SchedulerConfig, 'emitMaxAgeSeconds' | 'emitClaimLeaseSeconds' | 'retentionSeconds' | 'endsRetryMaxSeconds'>;
  readonly store: Pick<EventStore, 'read' | 'endEmissions' | 'releasePlaces'>;
  readonly notices: NoticeClaims;
  /** This process's writer of ends (see EndWriter): shared by its batches, so a spike's ends go in large writes. */
  readonly endWriter: Pick<EndWriter, 'record'>;
  readonly delayQueue: Pick<DelayQueue, 'sendEnds' | 'retryLater'>;
  readonly publisher: TopicPublisher;
  /** This process's bound on publishes answered and not yet recorded (see emitterMaxUnrecordedEnds). */
  readonly publishWindow: PublishWindow;
  /** The registry as it stands: checked again at each publish, and where a failed emission's notice may go. */
  readonly tenants: Pick<TenantDirectory, 'tenant'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** In [0, 1): spreads retries out (see retryDelaySeconds); Math.random by default. */
  readonly random?: () => number;
}

/**
 * One batch's work: its event records, read together; the places its recorded ends free, per
 * tenant (freed together once the batch is done); and the messages to keep (their ends could
 * neither be recorded nor handed over).
 */
interface BatchContext {
  readonly deps: EmitterDeps;
  readonly records: Promise<ReadonlyMap<string, EventRecord>>;
  readonly freed: Map<string, number>;
  readonly kept: string[];
}

/**
 * Publishes a failure notice once, however often its message is delivered (notices are rare: a
 * claim is cheap there), where its tenant may be told by the registry as it stands: ingest chose
 * by the registry of its day.
 */
async function sendNotice(deps: EmitterDeps, message: Extract<DelayQueueMessage, { kind: 'notice' }>): Promise<void> {
  const destination = message.tenant === undefined ? message : noticeDestination(deps.tenants.tenant(message.tenant), message.failureTopic);
  if (destination.failureTopic === undefined && destination.deadLetterTopic === undefined) {
    deps.logger.warn(
      { noticeId: message.noticeId, tenant: message.tenant, reason: message.notice.reason },
      'notice not published: its tenant may no longer be told where ingest chose',
    );
    return;
  }
  const now = deps.clock.now();
  const claim = { owner: randomUUID(), now, leaseUntil: now + deps.config.emitClaimLeaseSeconds * 1000 };
  const outcome = await deps.notices.claim(message.noticeId, claim, expiresAtFor(now, deps.config.retentionSeconds));
  if (outcome === 'busy')
    throw new TransientError(`notice ${message.noticeId} is being published by another delivery; checking again later`);
  if (outcome === 'ended') {
    deps.metrics.count('DuplicatesSuppressed');
    return;
  }
  try {
    await publishNotice(deps)(destination, message.notice);
  } catch (error) {
    await deps.notices.release(message.noticeId, claim.owner);
    throw error;
  }
  await deps.notices.markSent(message.noticeId, deps.clock.now());
}

/** Emits one copy of an event, if its record still says so, and has its end recorded as soon as the publish answers. */
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
      logger.info(
        { eventId: event.id, version: event.version },
        'cancelled, rescheduled or sent again since this copy was queued; dropped',
      );
      return;
    case 'emit':
      if (stored === undefined) logger.warn({ eventId: event.id }, 'no record of this event; emitting it all the same');
  }
  await waitUntil(clock, event.dueAt);
  await deps.publishWindow.take();
  try {
    const ending = await publish(deps, event, sentAt(record));
    if (stored === undefined) return;
    const { outcome, freesPlace } = await deps.endWriter.record(ending);
    if (freesPlace) countPlaces(context.freed, [ending]);
    if (outcome === 'kept') context.kept.push(record.messageId);
  } finally {
    deps.publishWindow.giveBack();
  }
}

/**
 * Publishes to the target: the event's end, or a thrown TransientError for a retry. The target
 * is checked against the registry as it stands first (a tenant removed since, or a target it may
 * no longer use, fails the event without a publish). A topic that cannot take it fails the event
 * at once; any other failure is retried until the copy has been due `emitMaxAgeSeconds` (see
 * publishAgeSeconds: a copy sent after its due time counts from its send).
 */
async function publish(deps: EmitterDeps, event: ScheduledEvent, copySentAt: number): Promise<EmissionEnding> {
  const { clock, logger, metrics, config } = deps;
  const endedBy = randomUUID();
  const tenant = deps.tenants.tenant(event.tenant);
  const fail = async (reason: ReasonCode, message: string, details: Readonly<Record<string, unknown>>): Promise<EmissionEnding> => {
    const failedAt = clock.now();
    const notice = failureNotice(reason, message, event, failedAt, { eventId: event.id, details });
    await reportFailure(deps, publishNotice(deps), notice, noticeDestination(tenant, event.failureTopic));
    return { event, end: { state: 'failed', at: failedAt, reason }, expiresAt: expiresAtFor(failedAt, config.retentionSeconds), endedBy };
  };
  const refusal = emissionRefusal(tenant, event);
  if (refusal !== undefined) return fail(refusal.reason, refusal.message, refusal.details);
  try {
    await deps.publisher.publish(event.target, event.payload, emissionAttributes(event));
  } catch (error) {
    const ageSeconds = publishAgeSeconds(clock.now(), event.dueAt, copySentAt);
    if (error instanceof EventRejectedError) return fail(error.reason, error.message, { ageSeconds });
    if (ageSeconds < config.emitMaxAgeSeconds) {
      metrics.count('PublishRetries');
      throw error instanceof TransientError
        ? error
        : new TransientError(`publishing ${event.id} failed: ${String(error)}`, { cause: error });
    }
    return fail(
      REASON.PUBLISH_FAILED,
      `publishing to the target kept failing for ${ageSeconds} s after the copy was due: ${String(error)}`,
      { ageSeconds },
    );
  }
  const emittedAt = clock.now();
  const lateness = emittedAt - event.dueAt;
  metrics.count('EventsEmitted');
  metrics.latenessMs(lateness);
  logger.debug({ eventId: event.id, latenessMs: lateness }, 'emitted');
  return { event, end: { state: 'emitted', at: emittedAt }, expiresAt: expiresAtFor(emittedAt, config.retentionSeconds), endedBy };
}

/**
 * Records ends handed over by an earlier delivery. Until they are recorded the message comes
 * back at most `endsRetryMaxSeconds` apart, even when the emitter dies while handling it: its
 * visibility is cut to that before the write. A repaired copy of one of these events waits
 * longer than that in the delay queue (repairDelaySeconds), so by the time the emitter reads
 * its record, the end has been tried again and, if its write can succeed, recorded: the copy is
 * then dropped, not published a second time. (The end's condition is the event's state and
 * version, which a repair leaves as they are; only the copy token changes.)
 */
async function recordHandedOver(
  deps: EmitterDeps,
  record: SQSRecord,
  message: Extract<DelayQueueMessage, { kind: 'ends' }>,
): Promise<void> {
  const { endsRetryMaxSeconds } = deps.config;
  await putOff(deps, record, endsRetryMaxSeconds);
  try {
    const { unknown, applied } = await recordEndings(deps, message.ends);
    const freed = new Map<string, number>();
    countPlaces(freed, applied);
    await releasePlaces(deps, freed);
    if (unknown.length > 0) throw new TransientError(`${unknown.length} handed-over ends could not be recorded yet`);
  } catch (error) {
    await putOff(deps, record, endsRetryDelaySeconds(receiveCount(record), (deps.random ?? Math.random)(), endsRetryMaxSeconds));
    throw error;
  }
}

/** Makes a message come back after `delaySeconds` if it is not deleted before, instead of after the visibility timeout. */
async function putOff(deps: EmitterDeps, record: SQSRecord, delaySeconds: number): Promise<void> {
  try {
    await deps.delayQueue.retryLater(record.receiptHandle, delaySeconds);
  } catch (error) {
    // It still comes back, after the queue's visibility timeout.
    deps.logger.warn({ err: error, messageId: record.messageId }, 'could not delay the retry');
  }
}

/**
 * Emits each delayed event at its exact due time. The batch's records are read once, when it
 * arrives (before its events are due): a copy of an event already emitted, cancelled,
 * rescheduled or sent again is dropped. The rest wait out the remainder and are published:
 * nothing stands between an event's due time and its publish. Each end is recorded as soon as
 * its publish answers, with the ends answered at the same moment (see EndRecorder). A record
 * that fails is retried later, sooner at first, then up to 15 minutes apart; a publish is given
 * up (PUBLISH_FAILED) only `emitMaxAgeSeconds` after its copy was due, and at once when the
 * topic refuses. Also publishes the failure notices ingest hands over, and records the ends
 * handed over.
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
  const eventIds = [...messages.values()].flatMap((message) =>
    !(message instanceof Error) && message.kind === 'event' ? [message.event.id] : [],
  );
  const reading = eventIds.length > 0 ? deps.store.read(eventIds) : Promise.resolve(new Map<string, EventRecord>());
  // Each event's handler awaits the read; one rejection is reported per record, not unhandled.
  reading.catch(() => {});
  const context: BatchContext = { deps, records: reading, freed: new Map(), kept: [] };
  const response = await processBatch(records, deps.logger, async (record) => {
    const message = messages.get(record);
    // Its own retries: see recordHandedOver.
    if (message !== undefined && !(message instanceof Error) && message.kind === 'ends') return recordHandedOver(deps, record, message);
    try {
      if (message === undefined || message instanceof Error) throw message ?? new TypeError('not a delay-queue message');
      if (message.kind === 'event') return await emitOne(context, record, message);
      return await sendNotice(deps, message);
    } catch (error) {
      await putOff(deps, record, retryDelaySeconds(receiveCount(record), (deps.random ?? Math.random)()));
      throw error;
    }
  });
  for (const messageId of context.kept) response.batchItemFailures.push({ itemIdentifier: messageId });
  // Every end is settled by now: each event's handler waited for its own.
  await releasePlaces(deps, context.freed);
  deps.metrics.flush();
  return response;
}
