import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { shardOf } from '../domain/sharding.js';
import { heldShardKey } from '../domain/table-keys.js';
import { delaySecondsFor, waitUntil } from '../domain/delay.js';
import { emissionDecision, emissionRefusal, noticeDestination, unrecordedCopyDecision, type EmissionEnding } from '../domain/emission.js';
import { emissionAttributes, expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice, requestQuote } from '../domain/failure.js';
import { EVENT_STATE, eventOf, type EventRecord } from '../domain/lifecycle.js';
import { decodeDelayQueueMessage, type DelayQueueMessage, type NoticeMessage } from '../domain/messages.js';
import { placementFor } from '../domain/placement.js';
import { EventRejectedError, REASON, TransientError, type ReasonCode } from '../domain/reasons.js';
import { tenantIndexKeyAt } from '../domain/tenant-index.js';
import { endsRetryDelaySeconds, publishAgeSeconds, retryDelaySeconds } from '../domain/retry.js';
import { type FailureLog, processBatch, receiveCount, sentAt } from './batch.js';
import { countPlaces, type EndWriter, recordEndings, releasePlaces } from './end-writer.js';
import { publishNotice, reportFailure } from './failures.js';
import type { NoticePace } from './notice-pace.js';
import type { PublishWindow } from './publish-window.js';
import type { NoticeMarks } from './ports/emitter-records.js';
import type { Carry, EventStore } from './ports/event-store.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { DelayQueue, TopicPublisher } from './ports/queues.js';
import type { Pause, TenantDirectory, TenantLookup, TenantPauses } from './ports/tenants.js';
import { delayQueueTenants } from './batch-tenants.js';

/**
 * The emitter: it publishes each delayed event at its due time (emitBatch, below), and records
 * its end with the others of its process (EndWriter), as many answered publishes unrecorded at
 * once as its PublishWindow allows. One end writer and one window serve every batch of a process.
 */

export interface EmitterDeps {
  readonly config: Pick<
    SchedulerConfig,
    | 'emitMaxAgeSeconds'
    | 'retentionSeconds'
    | 'endsRetryMaxSeconds'
    | 'emitterLeadMs'
    | 'nearPathWindowSeconds'
    | 'bucketSeconds'
    | 'shardCount'
    | 'indexQueuedEvents'
  >;
  readonly store: Pick<EventStore, 'read' | 'endEmissions' | 'releasePlaces' | 'countEnds' | 'carry' | 'hold'>;
  /** This process's view of tenants' pauses (see PausedTenants): a paused tenant's events are held, not published. */
  readonly pausedTenants: Pick<PausedTenants, 'of'>;
  readonly notices: NoticeMarks;
  /** This process's writer of ends (see EndWriter): shared by its batches, so a spike's ends go in large writes. */
  readonly endWriter: Pick<EndWriter, 'record'>;
  readonly delayQueue: Pick<DelayQueue, 'send' | 'sendEnds' | 'retryLater'>;
  readonly publisher: TopicPublisher;
  /** This process's bound on publishes answered and not yet recorded (see emitterMaxUnrecordedEnds). */
  readonly publishWindow: PublishWindow;
  /** This process's pace of failure notices: packs one at a time (see NOTICE_PACKS_AT_ONCE). */
  readonly noticePace: Pick<NoticePace, 'run'>;
  /** The registry as it stands: checked again at each publish, and where a failed emission's notice may go. */
  readonly tenants: TenantDirectory;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where the last error of each failed record is kept, for the dead-letter tools; none by default. */
  readonly failureLog?: FailureLog;
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
  /** The pauses of the batch's tenants, read with the records. */
  readonly pauses: Promise<ReadonlyMap<string, Pause>>;
  /** The batch's tenants as registered now, read with the records. */
  readonly tenants: Promise<TenantLookup>;
  readonly freed: Map<string, number>;
  readonly kept: string[];
}

/**
 * Publishes failure notices (a pack of one tenant's, or one alone) where each one's tenant may be
 * told by the registry as it stands (ingest chose by the registry of its day), each once however
 * often its message is delivered: decided by reading, as events are. The notices' sent marks are
 * read together first; those found marked are duplicates suppressed, the others published and then
 * marked. A process sends its packs one at a time, tenants taking turns (see NoticePace), so a
 * later copy in the same process finds the first's mark; two copies in flight at once in two
 * processes may both publish: the second mark finds the first and is counted (DuplicateEmissions),
 * not suppressed. One publish at most a delivery: a failure topic that refuses a notice is not
 * followed by the dead-letter topic (see publishNotice). A pack is retried whole when one of its
 * notices fails: those it published are found marked then.
 */
function sendNotices(context: BatchContext, notices: readonly NoticeMessage[]): Promise<void> {
  // A pack is one tenant's; a notice queued before notices named their tenant waits as no tenant's.
  return context.deps.noticePace.run(notices[0]?.tenant ?? '', () => sendNoticesNow(context, notices));
}

async function sendNoticesNow(context: BatchContext, notices: readonly NoticeMessage[]): Promise<void> {
  const { deps } = context;
  const sent = await deps.notices.sent(notices.map(({ noticeId }) => noticeId));
  const outcomes = await Promise.allSettled(
    notices.map(async (message) => {
      if (!sent.has(message.noticeId)) return sendNotice(context, message);
      deps.metrics.count('DuplicatesSuppressed');
    }),
  );
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

async function sendNotice(context: BatchContext, message: NoticeMessage): Promise<void> {
  const { deps } = context;
  const destination =
    message.tenant === undefined ? message : noticeDestination((await context.tenants).tenant(message.tenant), message.failureTopic);
  if (destination.failureTopic === undefined && destination.deadLetterTopic === undefined) {
    deps.logger.warn(
      { noticeId: message.noticeId, tenant: message.tenant, reason: message.notice.reason },
      'notice not published: its tenant may no longer be told where ingest chose',
    );
    return;
  }
  await publishNotice(deps, { once: true })(destination, message.notice);
  const now = deps.clock.now();
  if ((await deps.notices.markSent(message.noticeId, now, expiresAtFor(now, deps.config.retentionSeconds))) === 'marked-before') {
    deps.metrics.count('DuplicateEmissions');
    deps.logger.warn({ noticeId: message.noticeId }, 'notice published by two deliveries at once');
  }
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
    case 'carry':
      return carryOn(deps, stored as EventRecord, message);
    case 'unrecorded':
      if (unrecordedCopyDecision(message, clock.now(), deps.config.retentionSeconds) === 'record-expired') {
        metrics.count('StaleMessagesDropped', 1, REASON.RECORD_EXPIRED);
        logger.warn(
          { eventId: event.id, reason: REASON.RECORD_EXPIRED },
          'no record of this event, and it may have expired after the event ended; dropped',
        );
        return;
      }
      // Nothing to hold it by: it waits for the resume as a failed delivery, retried.
      if ((await context.pauses).has(event.tenant)) throw new TransientError(`no record of ${event.id}, and its tenant is paused`);
      logger.warn({ eventId: event.id }, 'no record of this event; emitting it all the same');
  }
  if (stored !== undefined && message.queuedBy !== undefined && (await context.pauses).has(event.tenant)) {
    if (await holdOne(deps, stored, message)) return;
  }
  // Read with the batch's records, before the due time: nothing but the publish waits on the due second.
  const tenants = await context.tenants;
  await waitUntil(clock, event.dueAt);
  await deps.publishWindow.take();
  try {
    const published = await publish(deps, tenants, event, sentAt(record));
    if (stored === undefined) return;
    const ending = listedEnding(deps.config, published, stored);
    const { outcome, freesPlace } = await deps.endWriter.record(ending);
    if (freesPlace) countPlaces(context.freed, [ending]);
    if (outcome === 'kept') context.kept.push(record.messageId);
  } finally {
    deps.publishWindow.giveBack();
  }
}

/** An end with the tenant-index key its record gets with it (see tenantIndexKeyAt): a failed event is always listed. */
function listedEnding(
  config: Pick<SchedulerConfig, 'shardCount' | 'indexQueuedEvents'>,
  ending: EmissionEnding,
  record: EventRecord,
): EmissionEnding {
  if (ending.end.state !== 'failed') return ending;
  const listedUnder = tenantIndexKeyAt(
    'failed',
    { tenant: record.tenant, shard: shardOf(record.id, config), payloadIn: record.payloadKept === 'queue' ? 'queue' : 'table' },
    config.indexQueuedEvents,
  );
  return listedUnder === undefined ? ending : { ...ending, listedUnder };
}

/**
 * Holds an event that came due while its tenant is paused, instead of publishing it: its payload
 * into the table, its state `held` (see EVENT_STATE.held) until a resume sends it. True when
 * held; false when the pause has ended since it was read (the event is published as usual).
 */
async function holdOne(deps: EmitterDeps, record: EventRecord, copy: Extract<DelayQueueMessage, { kind: 'event' }>): Promise<boolean> {
  const { event } = copy;
  const now = deps.clock.now();
  const outcome = await deps.store.hold(record, copy.queuedBy as string, {
    payload: event.payload,
    heldKey: heldShardKey(event.tenant, shardOf(event.id, deps.config)),
    now,
  });
  if (outcome === 'not-paused') return false;
  // Cancelled, rescheduled or held by another delivery since the read: the next delivery decides anew.
  if (outcome === 'changed') throw new TransientError(`${event.id} changed while it was being held; deciding again later`);
  deps.metrics.count('EventsHeld');
  deps.logger.info(
    { eventId: event.id, tenant: event.tenant, dueAt: event.dueAt },
    'due while its tenant is paused: held until it resumes',
  );
  return true;
}

/**
 * The pauses of tenants as this process last read them, each kept for a second
 * (PAUSE_CACHE_MS): one read per tenant and second, however many batches ask. A pause takes
 * effect on the events that reach the emitter once it is read; the hold itself checks the pause
 * in its write, so no event is held once a resume has ended it.
 */
export class PausedTenants {
  /** Each tenant's pause as last read, or being read: the batches of one second share one read. */
  private readonly known = new Map<string, { readonly pause: Promise<Pause | undefined>; readonly readAt: number }>();

  constructor(
    private readonly pauses: Pick<TenantPauses, 'paused'>,
    private readonly clock: Pick<Clock, 'now'>,
  ) {}

  async of(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>> {
    const now = this.clock.now();
    const distinct = [...new Set(tenants)];
    const stale = distinct.filter((tenant) => {
      const known = this.known.get(tenant);
      return known === undefined || now - known.readAt >= PAUSE_CACHE_MS;
    });
    if (stale.length > 0) {
      const read = this.pauses.paused(stale);
      for (const tenant of stale) {
        const pause = read.then((found) => found.get(tenant));
        // A failed read is read again by the next batch; this one's handlers report it.
        pause.catch(() => {
          if (this.known.get(tenant)?.pause === pause) this.known.delete(tenant);
        });
        this.known.set(tenant, { pause, readAt: now });
      }
    }
    const read = await Promise.all(distinct.map(async (tenant) => [tenant, await this.known.get(tenant)?.pause] as const));
    return new Map(read.flatMap(([tenant, pause]) => (pause === undefined ? [] : [[tenant, pause]])));
  }
}

/** How long a process keeps a tenant's pause state before reading it again. */
const PAUSE_CACHE_MS = 1000;

/** Attempts at carrying a copy on while reschedules land in between, before its message is left to be retried. */
const CARRY_ATTEMPTS = 3;

/**
 * Carries on the payload of an event rescheduled while this copy alone held it (see
 * EventRecord.carriedBy), at once, whatever the new due time: a new copy of the current version
 * to the delay queue when the new due time is within the near-path window (it waits as every
 * copy does, so never early), or else into the table for the loader. The record then names the
 * new copy, or the table, instead of this one, if it still names this one at the version read:
 * a delivery that dies between the two carries again, and the copy it sent first is dropped as
 * stale. An event moved earlier than this copy's due time is carried only now: late.
 */
async function carryOn(deps: EmitterDeps, read: EventRecord, copy: Extract<DelayQueueMessage, { kind: 'event' }>): Promise<void> {
  const { clock, config, logger, metrics } = deps;
  const from = copy.queuedBy as string;
  const { payload } = copy.event;
  let record: EventRecord | undefined = read;
  for (let attempt = 1; record !== undefined && emissionDecision(record, copy) === 'carry'; attempt++) {
    if (attempt > CARRY_ATTEMPTS) throw new TransientError(`${record.id} kept being changed while its copy was carried on; retrying`);
    const now = clock.now();
    const placement = placementFor(config, record.id, record.dueAt, now);
    let onward: Carry;
    if (placement.state === EVENT_STATE.queued) {
      const queuedBy = randomUUID();
      const event = eventOf(record, payload);
      const [failure] = await deps.delayQueue.send([
        { event, queuedBy, delaySeconds: delaySecondsFor(event.dueAt, now, config.emitterLeadMs) },
      ]);
      if (failure !== undefined) throw new TransientError(`carrying ${record.id} on to the delay queue failed: ${failure.reason}`);
      onward = { to: 'queue', queuedBy };
    } else {
      onward = {
        to: 'table',
        payload,
        tenantShard: tenantIndexKeyAt(
          'carried',
          { tenant: record.tenant, shard: placement.shard, payloadIn: 'table' },
          config.indexQueuedEvents,
        ),
      };
    }
    if (await deps.store.carry(record, from, onward, now)) {
      metrics.count('EventsCarried');
      logger.info({ eventId: record.id, version: record.version, dueAt: record.dueAt, to: onward.to }, 'rescheduled event carried on');
      return;
    }
    record = (await deps.store.read([record.id])).get(record.id);
  }
  metrics.count('StaleMessagesDropped');
  logger.info({ eventId: copy.event.id }, 'carried on by another delivery, or cancelled, since this copy was read; dropped');
}

/**
 * Publishes to the target: the event's end, or a thrown TransientError for a retry. The target
 * is checked against the registry as it stands first (a tenant removed since, or a target it may
 * no longer use, fails the event without a publish). A topic that cannot take it fails the event
 * at once; any other failure is retried until the copy has been due `emitMaxAgeSeconds` (see
 * publishAgeSeconds: a copy sent after its due time counts from its send).
 */
async function publish(deps: EmitterDeps, tenants: TenantLookup, event: ScheduledEvent, copySentAt: number): Promise<EmissionEnding> {
  const { clock, logger, metrics, config } = deps;
  const endedBy = randomUUID();
  // What the end needs of its event, no more: ends are journaled and handed over 100 to a message, payloads never with them.
  const ended = { id: event.id, tenant: event.tenant, version: event.version, dueAt: event.dueAt };
  const tenant = tenants.tenant(event.tenant);
  const fail = async (reason: ReasonCode, message: string, details: Readonly<Record<string, unknown>>): Promise<EmissionEnding> => {
    const failedAt = clock.now();
    const notice = failureNotice(reason, message, requestQuote(event), failedAt, { eventId: event.id, details });
    await reportFailure(deps, publishNotice(deps), notice, noticeDestination(tenant, event.failureTopic));
    return {
      event: ended,
      end: { state: 'failed', at: failedAt, reason },
      expiresAt: expiresAtFor(failedAt, config.retentionSeconds),
      endedBy,
    };
  };
  const refusal = emissionRefusal(tenant, event);
  if (refusal !== undefined) return fail(refusal.reason, refusal.message, refusal.details);
  try {
    await deps.publisher.publish(event.target, event.payload, emissionAttributes(event, clock.now()));
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
  return { event: ended, end: { state: 'emitted', at: emittedAt }, expiresAt: expiresAtFor(emittedAt, config.retentionSeconds), endedBy };
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
  const tenants = [...messages.values()].flatMap((message) =>
    !(message instanceof Error) && message.kind === 'event' ? [message.event.tenant] : [],
  );
  const pauses = tenants.length > 0 ? deps.pausedTenants.of(tenants) : Promise.resolve(new Map<string, Pause>());
  const registered = delayQueueTenants(deps.tenants, [...messages.values()]);
  // Each event's handler awaits the reads; one rejection is reported per record, not unhandled.
  reading.catch(() => {});
  pauses.catch(() => {});
  registered.catch(() => {});
  const context: BatchContext = { deps, records: reading, pauses, tenants: registered, freed: new Map(), kept: [] };
  const response = await processBatch(records, deps, async (record) => {
    const message = messages.get(record);
    // Its own retries: see recordHandedOver.
    if (message !== undefined && !(message instanceof Error) && message.kind === 'ends') return recordHandedOver(deps, record, message);
    try {
      if (message === undefined || message instanceof Error) throw message ?? new TypeError('not a delay-queue message');
      if (message.kind === 'event') return await emitOne(context, record, message);
      if (message.kind === 'notices') return await sendNotices(context, message.notices);
      return await sendNotices(context, [message]);
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
