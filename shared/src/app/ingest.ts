import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { bucketShardKeyFor } from '../domain/buckets.js';
import { delaySecondsFor } from '../domain/delay.js';
import { expiresAtFor, type ScheduledEvent } from '../domain/event.js';
import { failureNotice } from '../domain/failure.js';
import { changeRefusal, EVENT_STATE, type EventRecord } from '../domain/lifecycle.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import type { Tenant } from '../domain/tenants.js';
import { parseInputMessage, type InputRequest, type ParseResult } from '../domain/validation.js';
import { processBatch } from './batch.js';
import { reportFailure } from './failures.js';
import type {
  ChangeRefused,
  Clock,
  CreateOutcome,
  DelayQueue,
  EventStore,
  Logger,
  NewEvent,
  Placement,
  SchedulerMetrics,
  TenantDirectory,
} from './ports.js';

export interface IngestDeps {
  readonly config: Pick<SchedulerConfig, 'nearPathWindowSeconds' | 'emitterLeadMs' | 'bucketSeconds' | 'shardCount' | 'retentionSeconds'>;
  readonly tenants: TenantDirectory;
  readonly store: EventStore;
  readonly delayQueue: DelayQueue;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
}

/** One input message as the ingest queue holds it: SNS's envelope says which topic it came through. */
export interface InputMessage {
  readonly text: string;
  readonly inputMessageId: string;
  /** The input topic, from SNS's envelope; undefined when the message was not delivered by SNS. */
  readonly topicArn: string | undefined;
}

export function unwrapInput(record: SQSRecord): InputMessage {
  try {
    const envelope = JSON.parse(record.body) as { Type?: unknown; Message?: unknown; MessageId?: unknown; TopicArn?: unknown };
    if (
      envelope.Type === 'Notification' &&
      typeof envelope.Message === 'string' &&
      typeof envelope.MessageId === 'string' &&
      typeof envelope.TopicArn === 'string'
    ) {
      return { text: envelope.Message, inputMessageId: envelope.MessageId, topicArn: envelope.TopicArn };
    }
  } catch {
    // Not an envelope: it has no tenant, and is refused as such.
  }
  return { text: record.body, inputMessageId: record.messageId, topicArn: undefined };
}

/** What one input message needs from the rest of the batch: its event sent to the delay queue. */
interface NearPathSend {
  readonly record: SQSRecord;
  readonly event: ScheduledEvent;
}

/** One input message being handled: its tenant, and where its refusals go. */
interface Intake {
  readonly deps: IngestDeps;
  readonly record: SQSRecord;
  readonly message: InputMessage;
  readonly tenant: Tenant;
  readonly failureTopic: string | undefined;
  readonly input: unknown;
  readonly now: number;
  readonly sends: NearPathSend[];
}

/** Refuses an input: logged always, and on the failure topic when it is the tenant's own (via the emitter). */
async function refuse(intake: Intake, error: EventRejectedError, eventId?: string): Promise<void> {
  const { deps, message, tenant } = intake;
  deps.metrics.count('EventsRejected', 1, error.reason);
  const notice = failureNotice(error.reason, error.message, intake.input, intake.now, { eventId, details: error.details });
  // Once per input message, however often it is delivered.
  const noticeId = `n-${message.inputMessageId}`;
  await reportFailure(deps, (topic, body) => deps.delayQueue.sendNotice(noticeId, tenant.id, topic, body), notice, intake.failureTopic);
}

function placementFor(deps: IngestDeps, id: string, dueAt: number, now: number): Placement {
  if (dueAt < now + deps.config.nearPathWindowSeconds * 1000) return { state: EVENT_STATE.queued };
  return { state: EVENT_STATE.scheduled, bucketShard: bucketShardKeyFor(id, dueAt, deps.config) };
}

/** What happens to a schedule request once the store has admitted it, or not. */
async function settle(intake: Intake, event: ScheduledEvent, placement: Placement, outcome: CreateOutcome): Promise<void> {
  const { deps, tenant, message } = intake;
  const { quotas } = tenant;
  switch (outcome.outcome) {
    case 'created':
      deps.metrics.count('EventsIngested');
      if (placement.state === EVENT_STATE.queued) intake.sends.push({ record: intake.record, event });
      else deps.metrics.count('EventsStored');
      return;
    case 'duplicate':
      if (isOwnUnsentEvent(outcome.existing, message.inputMessageId)) {
        // This message created it, then failed to queue it: send it now (the emitter suppresses a second copy).
        intake.sends.push({ record: intake.record, event: outcome.existing });
        return;
      }
      deps.metrics.count('DuplicatesSuppressed');
      deps.logger.info({ eventId: event.id, tenant: tenant.id }, 'duplicate input suppressed');
      return;
    case 'quota-exceeded':
      await refuse(
        intake,
        new EventRejectedError(REASON.QUOTA_EXCEEDED, `tenant "${tenant.id}" is at its ${outcome.quota} quota (${quotas[outcome.quota]})`, {
          quota: outcome.quota,
          limit: quotas[outcome.quota],
        }),
        event.id,
      );
  }
}

/** A queued event created by this very input message (a redelivery after a failed send). */
function isOwnUnsentEvent(existing: EventRecord | undefined, inputMessageId: string): existing is EventRecord {
  return existing?.inputMessageId === inputMessageId && existing.state === EVENT_STATE.queued;
}

async function refuseChange(intake: Intake, eventId: string, refused: ChangeRefused, action: string): Promise<void> {
  const { current } = refused;
  // A redelivered cancel finds its own work done.
  if (current?.state === EVENT_STATE.cancelled && current.cancelledBy === intake.message.inputMessageId) return;
  const refusal = changeRefusal(current, intake.tenant.id, intake.deps.clock.now());
  if (refusal === undefined) throw new TransientError(`${action} of ${eventId} raced with another change; retrying`);
  await refuse(intake, new EventRejectedError(refusal.reason, `cannot ${action} ${eventId}: ${refusal.reason}`, refusal.details), eventId);
}

async function cancel(intake: Intake, eventId: string): Promise<void> {
  const { deps, tenant, now } = intake;
  const result = await deps.store.cancel(eventId, tenant.id, {
    by: intake.message.inputMessageId,
    now,
    expiresAt: expiresAtFor(now, deps.config.retentionSeconds),
  });
  if (result.outcome === 'refused') return refuseChange(intake, eventId, result, 'cancel');
  deps.metrics.count('EventsCancelled');
  deps.logger.info({ eventId, tenant: tenant.id }, 'event cancelled');
}

async function reschedule(intake: Intake, eventId: string, dueAt: number): Promise<void> {
  const { deps, tenant, now } = intake;
  const placement = placementFor(deps, eventId, dueAt, now);
  const result = await deps.store.reschedule(eventId, tenant.id, {
    dueAt,
    placement,
    now,
    expiresAt: expiresAtFor(dueAt, deps.config.retentionSeconds),
  });
  if (result.outcome === 'refused') return refuseChange(intake, eventId, result, 'reschedule');
  deps.metrics.count('EventsRescheduled');
  deps.logger.info({ eventId, tenant: tenant.id, dueAt, version: result.event.version }, 'event rescheduled');
  if (placement.state === EVENT_STATE.queued) intake.sends.push({ record: intake.record, event: result.event });
}

async function handle(intake: Intake, request: InputRequest, admission: Admission | undefined): Promise<void> {
  switch (request.kind) {
    case 'schedule':
      // Every schedule request of the batch was handed to the store before (admitTogether).
      if (admission === undefined) throw new Error(`${request.event.id} was never admitted`);
      return settle(intake, request.event, admission.placement, await admission.outcome);
    case 'cancel':
      return cancel(intake, request.eventId);
    case 'reschedule':
      return reschedule(intake, request.eventId, request.dueAt);
  }
}

/** One input message as read: whose it is and what it asks for (undefined tenant: nobody's). */
interface ReadInput {
  readonly record: SQSRecord;
  readonly message: InputMessage;
  readonly tenant: Tenant | undefined;
  readonly parsed: ParseResult | undefined;
}

function read(deps: IngestDeps, record: SQSRecord): ReadInput {
  const message = unwrapInput(record);
  const tenant = message.topicArn === undefined ? undefined : deps.tenants.forTopic(message.topicArn);
  const parsed = tenant?.enabled ? parseInputMessage(message.text, message.inputMessageId, tenant) : undefined;
  return { record, message, tenant, parsed };
}

/** A schedule request on its way into the store: where it goes, and what the store said. */
interface Admission {
  readonly placement: Placement;
  readonly outcome: Promise<CreateOutcome>;
}

/**
 * Hands each tenant's new events of the batch to the store together, so its quota counters
 * are written once per batch rather than once per event (they are single items, and a busy
 * tenant's would otherwise be its bottleneck).
 */
function admitTogether(deps: IngestDeps, inputs: readonly ReadInput[], now: number): Map<SQSRecord, Admission> {
  const byTenant = new Map<Tenant, { record: SQSRecord; entry: NewEvent }[]>();
  const admissions = new Map<SQSRecord, Admission>();
  for (const { record, message, tenant, parsed } of inputs) {
    if (tenant === undefined || !parsed?.accepted || parsed.request.kind !== 'schedule') continue;
    const { event, clientId } = parsed.request;
    const entry: NewEvent = {
      event,
      clientId,
      inputMessageId: message.inputMessageId,
      placement: placementFor(deps, event.id, event.dueAt, now),
      quotas: tenant.quotas,
      now,
      expiresAt: expiresAtFor(event.dueAt, deps.config.retentionSeconds),
    };
    byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), { record, entry }]);
  }
  for (const requests of byTenant.values()) {
    const outcomes = deps.store.createMany(requests.map(({ entry }) => entry));
    requests.forEach(({ record, entry }, index) => {
      admissions.set(record, { placement: entry.placement, outcome: outcomes.then((all) => all[index] as CreateOutcome) });
    });
  }
  return admissions;
}

/** Logs an input that belongs to no tenant: there is nobody to tell. */
function refuseUnowned(deps: IngestDeps, message: InputMessage, reason: typeof REASON.UNKNOWN_TENANT | typeof REASON.TENANT_DISABLED): void {
  deps.metrics.count('EventsRejected', 1, reason);
  deps.metrics.count('EventsFailed', 1, reason);
  deps.logger.warn({ reason, topicArn: message.topicArn, inputMessageId: message.inputMessageId }, 'input refused: no tenant takes it');
}

/**
 * Takes each input message as its tenant's (known by the topic it came through): validates
 * it, and schedules, cancels or reschedules. Events due within the near-path window go to the
 * delay queue, later ones are stored for the loader. Only infrastructure failures fail a
 * record (to be retried); a bad message never fails its batch.
 */
export async function ingestBatch(deps: IngestDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const sends: NearPathSend[] = [];
  const now = deps.clock.now();
  const inputs = new Map(records.map((record) => [record, read(deps, record)]));
  const admissions = admitTogether(deps, [...inputs.values()], now);
  const response = await processBatch(records, deps.logger, async (record) => {
    const { message, tenant, parsed } = inputs.get(record) as ReadInput;
    if (tenant === undefined) return refuseUnowned(deps, message, REASON.UNKNOWN_TENANT);
    if (parsed === undefined) return refuseUnowned(deps, message, REASON.TENANT_DISABLED);
    const intake = { deps, record, message, tenant, failureTopic: parsed.failureTopic, input: parsed.input, now, sends };
    return parsed.accepted ? handle(intake, parsed.request, admissions.get(record)) : refuse(intake, parsed.error);
  });

  if (sends.length > 0) {
    const sendTime = deps.clock.now();
    const failures = await deps.delayQueue.send(
      sends.map(({ event }) => ({ event, delaySeconds: delaySecondsFor(event.dueAt, sendTime, deps.config.emitterLeadMs) })),
    );
    deps.metrics.count('EventsDelayed', sends.length - failures.length);
    const reasons = new Map(failures.map((failure) => [failure.eventId, failure.reason]));
    for (const { record, event } of sends) {
      const reason = reasons.get(event.id);
      if (reason === undefined) continue;
      deps.logger.error({ eventId: event.id, reason, messageId: record.messageId }, 'delay queue send failed; the record will be retried');
      response.batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  deps.metrics.flush();
  return response;
}

