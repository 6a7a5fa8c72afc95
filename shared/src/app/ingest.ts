import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import {
  changeRefusal,
  createdByOtherRequest,
  EVENT_STATE,
  eventOf,
  placedOnDelayQueueBy,
  requestFieldsDiffering,
  type EventRecord,
} from '../domain/lifecycle.js';
import { quotaExceeded } from '../domain/quotas.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import { type Refusal, refusalOf } from '../domain/refusals.js';
import { noticeId, resumeJobId } from '../domain/table-keys.js';
import type { Tenant } from '../domain/tenants.js';
import { type FailedRecord, type FailureLog, failRecords, processBatch } from './batch.js';
import { type PendingNotice, type Send, sendNotices, sendToDelayQueue } from './ingest-sends.js';
import { startBulkCancel } from './bulk-cancel.js';
import { resumeTenant } from './resume.js';
import { reportFailure } from './failures.js';
import { admitTogether } from './ingest-admission.js';
import { keepRefusals } from './ingest-refusals.js';
import { type IngestPlanContext, type Intent, type PlannedMessage, planIngest, topicsNamedBy, unwrapBatch } from './ingest-plan.js';
import { batchTenants } from './batch-tenants.js';
import type { BulkCancelJobs } from './ports/bulk-cancel.js';
import type { RefusalLog } from './ports/errors-and-refusals.js';
import type { ChangeRefused, CreateOutcome, EventStore, NewEvent } from './ports/event-store.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { ChangesQueue, DelayQueue } from './ports/queues.js';
import type { SeriesStore } from './ports/series-store.js';
import type { Pause, TenantDirectory, TenantPauses } from './ports/tenants.js';
import { cancelSeriesById, changeSeriesById, createSeries, seriesChangeRefusal } from './series-ingest.js';
import { isSeriesId, seriesId } from '../domain/table-keys.js';

/**
 * Ingest, in two steps: a pure plan of what each input message asks (planIngest, in
 * ingest-plan.ts), then its application to the store and the delay queue (ingestBatch, at the end).
 */

// ---- Applying it: the store, the delay queue, the refusals ---------------------------------------

export interface IngestDeps {
  readonly config: IngestPlanContext['config'] & Pick<SchedulerConfig, 'emitterLeadMs' | 'changeCutoffSeconds' | 'loaderLookaheadSeconds'>;
  readonly tenants: TenantDirectory;
  readonly store: Pick<
    EventStore,
    'admit' | 'createMany' | 'holdPlaces' | 'settlePlaces' | 'requeue' | 'storedPayload' | 'cancel' | 'reschedule' | 'read'
  >;
  /** The recurring series' records: created, taken at once, changed, cancelled. */
  readonly series: Pick<SeriesStore, 'create' | 'read' | 'payload' | 'advance' | 'change' | 'cancel'>;
  readonly delayQueue: Pick<DelayQueue, 'send' | 'sendNotice' | 'sendNotices'>;
  /** Where a cancel by label starts its job. */
  readonly jobs: Pick<BulkCancelJobs, 'create' | 'get'>;
  readonly pauses: Pick<TenantPauses, 'pause' | 'resume' | 'lastChange'>;
  readonly changesQueue: ChangesQueue;
  /** Where a tenant's latest refusals are kept, for its operator and client to find. */
  readonly refusals: RefusalLog;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where the last error of each failed record is kept, for the dead-letter tools; none by default. */
  readonly failureLog?: FailureLog;
  /** New delay-queue copy tokens; random by default. */
  readonly newToken?: () => string;
}

/** One planned message being applied, with where its sends go. */
interface Applying {
  readonly deps: IngestDeps;
  readonly planned: PlannedMessage & { readonly tenant: Tenant };
  readonly now: number;
  readonly sends: Send[];
  /** The batch's failure notices, handed to the emitter together once every record is done. */
  readonly notices: PendingNotice[];
  /** The batch's refusals, kept once its accepted events are on their way. */
  readonly refused: Refusal[];
}

/**
 * Refuses an input: logged always, and (via the emitter) on the failure topic when it is the
 * tenant's own, else on the tenant's dead-letter topic if it has one.
 */
async function refuse(applying: Applying, error: EventRejectedError, eventId?: string): Promise<void> {
  const { deps, planned } = applying;
  deps.metrics.count('EventsRejected', 1, error.reason);
  applying.refused.push(
    refusalOf(planned.tenant.id, { input: planned.input, inputMessageId: planned.message.inputMessageId }, error, applying.now, eventId),
  );
  const notice = failureNotice(error.reason, error.message, planned.input, applying.now, { eventId, details: error.details });
  // Once per input message, however often it is delivered.
  const notified = noticeId(planned.message.inputMessageId);
  const destination = { failureTopic: planned.failureTopic, deadLetterTopic: planned.tenant.deadLetterTopic };
  // Sent with the batch's others (see sendNotices): a flood of refusals costs SQS a request for ten, not one each.
  await reportFailure(
    deps,
    async (to, body) => {
      applying.notices.push({ record: planned.record, noticeId: notified, tenant: planned.tenant.id, destination: to, notice: body });
    },
    notice,
    destination,
  );
}

/**
 * Sends again an event this input message placed on the delay queue, while the event is still
 * queued as it left it (see placedOnDelayQueueBy): a redelivered message finds its own work done,
 * but cannot know whether its send went out. The new copy's token makes the emitter drop the
 * earlier copy, if there was one. False when the event has moved on.
 */
async function sendAgain(applying: Applying, record: EventRecord, event: () => ScheduledEvent | Promise<ScheduledEvent>): Promise<boolean> {
  const { deps, planned, now } = applying;
  const placedBy = planned.message.inputMessageId;
  if (placedOnDelayQueueBy(record) !== placedBy) return false;
  const queuedBy = (deps.newToken ?? randomUUID)();
  if (!(await deps.store.requeue(record.id, { placedBy, version: record.version, queuedBy, now }))) return false;
  applying.sends.push({ record: planned.record, event: await event(), queuedBy });
  return true;
}

/** What happens to a schedule request once the store has admitted it, or not. */
async function settleCreate(applying: Applying, entry: NewEvent, outcome: CreateOutcome): Promise<void> {
  const { deps, planned } = applying;
  const { event } = entry;
  const tenant = planned.tenant;
  switch (outcome.outcome) {
    case 'created':
      deps.metrics.count('EventsIngested');
      if (entry.placement.state === EVENT_STATE.queued) applying.sends.push({ record: planned.record, event, queuedBy: entry.queuedBy });
      else deps.metrics.count('EventsStored');
      return;
    case 'duplicate': {
      const { existing } = outcome;
      if (outcome.placeKept)
        deps.logger.warn(
          { eventId: event.id, tenant: tenant.id },
          'duplicate input: its place in the open-events quota could not be given back; the count stays high until reconciled',
        );
      // The first request with an id wins: another one with the same id changes nothing, and says so.
      if (createdByOtherRequest(existing, entry.requestHash)) {
        const differing = requestFieldsDiffering(existing, event);
        const error = new EventRejectedError(
          REASON.IDEMPOTENCY_KEY_REUSED,
          `event ${event.id} was scheduled by another request with the same id; this one differs in ${differing.join(', ')}; the first one stands`,
          { field: 'id', eventId: event.id, differing },
        );
        return refuse(applying, error, event.id);
      }
      // This very input created it, and may have failed to send it.
      if (await sendAgain(applying, existing, () => event)) return;
      deps.metrics.count('DuplicatesSuppressed');
      deps.logger.info({ eventId: event.id, tenant: tenant.id }, 'duplicate input suppressed');
      return;
    }
    case 'unknown':
      throw new TransientError(`recording ${event.id} did not complete; retrying`);
    case 'quota-exceeded':
      await refuse(applying, quotaExceeded(tenant.id, outcome.quota, entry.quotas), event.id);
  }
}

/** The field that named the event or series in a change, as the client wrote it. */
function namingField(applying: Applying): 'event_id' | 'id' {
  const { input } = applying.planned;
  return typeof input === 'object' && input !== null && 'event_id' in input ? 'event_id' : 'id';
}

/**
 * A change whose id names no event of the tenant's but may name its series (`s-…`, or the
 * series of the client's id): a cancel cancels the series, a reschedule is refused. False when
 * it names no series either, to be refused as for an event.
 */
async function changeOfSeries(applying: Applying, eventId: string, action: 'cancel' | 'reschedule'): Promise<boolean> {
  const { deps, planned } = applying;
  const id = isSeriesId(eventId) ? eventId : seriesId(eventId);
  const field = namingField(applying);
  const outcome =
    action === 'cancel'
      ? await cancelSeriesById(deps, id, planned.tenant.id, changeRequest(applying), field)
      : ((await seriesChangeRefusal(deps, id, planned.tenant.id, field)) ?? 'none');
  if (outcome instanceof EventRejectedError) await refuse(applying, outcome, id);
  return outcome !== 'none';
}

async function refuseChange(applying: Applying, eventId: string, refused: ChangeRefused, action: 'cancel' | 'reschedule'): Promise<void> {
  const { current } = refused;
  const { deps, planned } = applying;
  if (current === undefined && (await changeOfSeries(applying, eventId, action))) return;
  const { inputMessageId, publishedAt } = planned.message;
  // A redelivered change finds its own work done; a reschedule's send to the delay queue may have failed.
  if (current?.state === EVENT_STATE.cancelled && current.cancelledBy === inputMessageId) return;
  if (action === 'reschedule' && current?.tenant === planned.tenant.id && current.lastChangeBy === inputMessageId) {
    if (await sendAgain(applying, current, async () => eventOf(current, await deps.store.storedPayload(current)))) {
      deps.logger.info(
        { eventId, inputMessageId, version: current.version },
        'reschedule delivered again: its event sent to the delay queue again',
      );
    }
    return;
  }
  if (
    action === 'reschedule' &&
    current?.tenant === planned.tenant.id &&
    current.lastChangeAt !== undefined &&
    current.lastChangeAt > publishedAt
  ) {
    deps.metrics.count('DuplicatesSuppressed');
    deps.logger.info(
      { eventId, inputMessageId, publishedAt, lastChangeAt: current.lastChangeAt },
      'reschedule superseded by one published later; dropped',
    );
    return;
  }
  await refuseAsFound(applying, eventId, current, action);
}

/** Refuses a change for what its event's record says (none: not found), judged by the clock now. */
async function refuseAsFound(
  applying: Applying,
  eventId: string,
  current: EventRecord | undefined,
  action: 'cancel' | 'reschedule',
): Promise<void> {
  const { deps, planned } = applying;
  // Judged by the clock now: later than the store's write, which checked the cutoff as it was made.
  const refusal = changeRefusal(current, {
    tenant: planned.tenant.id,
    action,
    now: deps.clock.now(),
    cutoffMs: deps.config.changeCutoffSeconds * 1000,
  });
  if (refusal === undefined) throw new TransientError(`${action} of ${eventId} raced with another change; retrying`);
  const field = namingField(applying);
  await refuse(
    applying,
    new EventRejectedError(refusal.reason, `cannot ${action} ${eventId}: ${refusal.explanation}`, { field, ...refusal.details }),
    eventId,
  );
}

/** A tenant's pause or resume that arrived after one its client published later: dropped, as a superseded reschedule is. */
function superseded(applying: Applying, action: 'pause' | 'resume'): void {
  const { inputMessageId, publishedAt } = applying.planned.message;
  applying.deps.metrics.count('DuplicatesSuppressed');
  applying.deps.logger.info(
    { tenant: applying.planned.tenant.id, inputMessageId, publishedAt },
    `${action} delivered again, or superseded by a pause or resume published later; dropped`,
  );
}

/** A tenant's resume cannot lift its operator's pause: it is told who paused it, since when and why. */
function pausedByOperator(tenant: string, pause: Pause): EventRejectedError {
  const since = new Date(pause.pausedAt).toISOString();
  return new EventRejectedError(
    REASON.PAUSED_BY_OPERATOR,
    `tenant "${tenant}" stays paused: its operator paused it (since ${since}${pause.note ? `: ${pause.note}` : ''}), and only the operator resumes it`,
    { pausedAt: since, note: pause.note ?? null },
  );
}

function changeScope(applying: Applying) {
  return { tenant: applying.planned.tenant.id, cutoffMs: applying.deps.config.changeCutoffSeconds * 1000 };
}

function changeRequest(applying: Applying) {
  return { by: applying.planned.message.inputMessageId, publishedAt: applying.planned.message.publishedAt };
}

async function applyIntent(
  applying: Applying,
  intent: Exclude<Intent, { kind: 'unowned' }>,
  created: Promise<CreateOutcome> | undefined,
): Promise<void> {
  const { deps, planned, now } = applying;
  const tenant = planned.tenant.id;
  switch (intent.kind) {
    case 'refuse':
      return refuse(applying, intent.error);
    case 'create':
      if (created === undefined) throw new Error(`${intent.entry.event.id} was never handed to the store`);
      return settleCreate(applying, intent.entry, await created);
    case 'create-series': {
      const refusal = await createSeries(deps, intent.entry);
      return refusal === undefined ? undefined : refuse(applying, refusal, intent.entry.series.id);
    }
    case 'cancel': {
      const result = await deps.store.cancel(intent.eventId, changeScope(applying), {
        ...changeRequest(applying),
        expiresAt: expiresAtFor(now, deps.config.retentionSeconds),
      });
      if (result.outcome === 'refused') return refuseChange(applying, intent.eventId, result, 'cancel');
      deps.metrics.count('EventsCancelled');
      deps.logger.info({ eventId: intent.eventId, tenant }, 'event cancelled');
      return;
    }
    case 'pause': {
      const author = { owner: 'tenant', request: changeRequest(applying) } as const;
      if (await deps.pauses.pause(tenant, author, { pausedAt: now, note: intent.note }))
        deps.logger.info({ tenant, note: intent.note, inputMessageId: planned.message.inputMessageId }, 'tenant paused');
      else superseded(applying, 'pause');
      return;
    }
    case 'resume': {
      // Named after the input message: delivered again, it makes the same job.
      const author = { owner: 'tenant', request: changeRequest(applying) } as const;
      const { applied, ended, stillPaused } = await resumeTenant(deps, tenant, author, resumeJobId(planned.message.inputMessageId), now);
      if (!applied) return superseded(applying, 'resume');
      if (stillPaused?.owner === 'operator') return refuse(applying, pausedByOperator(tenant, stillPaused));
      deps.logger.info({ tenant, pausedAt: ended?.pausedAt }, 'tenant resumed: its held events are being sent');
      return;
    }
    case 'reschedule': {
      const result = await deps.store.reschedule(intent.eventId, changeScope(applying), {
        ...changeRequest(applying),
        dueAt: intent.dueAt,
        placement: intent.placement,
        queuedBy: intent.queuedBy,
        expiresAt: expiresAtFor(intent.dueAt, deps.config.retentionSeconds),
      });
      if (result.outcome === 'refused') return refuseChange(applying, intent.eventId, result, 'reschedule');
      deps.metrics.count('EventsRescheduled');
      const { event } = result;
      if (event === undefined) {
        deps.logger.info(
          { eventId: intent.eventId, tenant, dueAt: intent.dueAt },
          'event rescheduled: its delay-queue copy is carried on when it reaches the emitter',
        );
        return;
      }
      deps.logger.info({ eventId: intent.eventId, tenant, dueAt: intent.dueAt, version: event.version }, 'event rescheduled');
      if (intent.placement.state === EVENT_STATE.queued) applying.sends.push({ record: planned.record, event, queuedBy: intent.queuedBy });
      return;
    }
    case 'change-series': {
      const refusal = await changeSeriesById(deps, intent.eventId, tenant, intent.change, changeRequest(applying), namingField(applying));
      return refusal === undefined ? undefined : refuse(applying, refusal, intent.eventId);
    }
    case 'bulk-cancel':
      await startBulkCancel(deps, intent.job);
  }
}

/** Logs an input that belongs to no tenant: there is nobody to tell. */
function refuseUnowned(deps: IngestDeps, planned: PlannedMessage, reason: Extract<Intent, { kind: 'unowned' }>['reason']): void {
  deps.metrics.count('EventsRejected', 1, reason);
  deps.metrics.count('EventsFailed', 1, reason);
  deps.logger.warn(
    { reason, topicArn: planned.message.topicArn, inputMessageId: planned.message.inputMessageId },
    'input refused: no tenant takes it',
  );
}

/**
 * Takes each input message as its tenant's (known by the topic it came through), in two
 * steps: a pure plan turns the batch into per-message intents (planIngest), then this applies
 * them (records, cancels, reschedules, refusals) and sends the batch's near-path events to the
 * delay queue together. Only infrastructure failures fail a record (to be retried); a bad
 * message never fails its batch.
 */
export async function ingestBatch(deps: IngestDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const now = deps.clock.now();
  const inputs = unwrapBatch(records);
  const topicArns = new Set(inputs.flatMap(({ message }) => (message.topicArn === undefined ? [] : [message.topicArn])));
  const tenants = await batchTenants(
    deps.tenants,
    { topicArns: [...topicArns] },
    inputs,
    ({ message }, found) => (message.topicArn === undefined ? undefined : found.forTopic(message.topicArn)),
    ({ message }) => topicsNamedBy(message),
  );
  const plan = planIngest({ config: deps.config, tenants, now, newToken: deps.newToken ?? randomUUID }, inputs);
  const planned = new Map(plan.map((entry) => [entry.record, entry]));
  const { created, controls, namesNothing } = admitTogether(deps, plan, now);
  const sends: Send[] = [];
  const notices: PendingNotice[] = [];
  const refused: Refusal[] = [];
  const response = await processBatch(records, deps, async (record) => {
    const entry = planned.get(record) as PlannedMessage;
    const { intent, tenant } = entry;
    if (intent.kind === 'unowned' || tenant === undefined)
      return refuseUnowned(deps, entry, intent.kind === 'unowned' ? intent.reason : REASON.UNKNOWN_TENANT);
    const applying = { deps, planned: { ...entry, tenant }, now, sends, notices, refused };
    // A control request over its tenant's maxControlPerSecond does nothing but say so.
    const overQuota = await controls.get(record);
    if (overQuota !== undefined) return refuse(applying, overQuota, 'eventId' in intent ? intent.eventId : undefined);
    // A cancel or reschedule of nothing its tenant has: refused as the write would be, without it.
    if ((intent.kind === 'cancel' || intent.kind === 'reschedule') && (await namesNothing.get(record)))
      return refuseAsFound(applying, intent.eventId, undefined, intent.kind);
    return applyIntent(applying, intent, created.get(record));
  });

  if (sends.length > 0) {
    const reasons = await sendToDelayQueue(deps, sends);
    deps.metrics.count('EventsDelayed', sends.length - reasons.size);
    // Failed as processBatch fails a record: logged, its error kept for the dead-letter tools, retried.
    const failed = sends.flatMap(({ record, event }): FailedRecord[] => {
      const reason = reasons.get(event.id);
      return reason === undefined
        ? []
        : [{ record, reason: new TransientError(`event ${event.id} could not be sent to the delay queue (${reason})`) }];
    });
    response.batchItemFailures.push(...(await failRecords(failed, deps)));
  }
  const failedAlready = new Set(response.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier));
  response.batchItemFailures.push(...(await sendNotices(deps, notices, failedAlready)));
  await keepRefusals(deps, refused, now);
  deps.metrics.flush();
  return response;
}
