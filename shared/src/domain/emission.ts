import type { ScheduledEvent } from './event.js';
import type { NoticeDestination } from './failure.js';
import { EVENT_STATE, isOpen, type EventRecord } from './lifecycle.js';
import { SQS_MAX_DELAY_SECONDS } from './limits.js';
import { EventRejectedError, REASON, type ReasonCode } from './reasons.js';
import { mayPublishTo, type Tenant } from './tenants.js';

/** How an emission ended. */
export type EmissionEnd =
  | { readonly state: 'emitted'; readonly at: number }
  | { readonly state: 'failed'; readonly at: number; readonly reason: ReasonCode };

/** An emission's end, to record on its event. */
export interface EmissionEnding {
  readonly event: Pick<ScheduledEvent, 'id' | 'tenant' | 'version' | 'dueAt'>;
  readonly end: EmissionEnd;
  /** TTL of the record from now on, epoch seconds. */
  readonly expiresAt: number;
  /**
   * The delivery that published it (one per receive of a delay-queue message): a write retried
   * after its answer was lost finds its own end, where a second delivery finds another's.
   */
  readonly endedBy: string;
  /** The tenant-index key its record gets with it, if any (see tenantIndexKeyAt): so that a failed event is always listed. */
  readonly listedUnder?: string | undefined;
}

/**
 * What the emitter does with one delay-queue copy of an event, by what its record says now;
 * `carry`: the event was rescheduled while this copy alone held its payload, which the emitter
 * carries on to the new due time (see EventRecord.carriedBy); `unrecorded`: there is no record
 * (see unrecordedCopyDecision).
 */
export type EmissionDecision = 'emit' | 'already-ended' | 'stale' | 'carry' | 'unrecorded';

/**
 * Decided by a read when the copy arrives, before its due time: a copy is emitted only while
 * its event is queued as this version and this copy (a resend carries a new token, a
 * reschedule a new version). Changes close before the emitter reads (see changeRefusal), so
 * the read is the last word.
 */
export function emissionDecision(
  record: EventRecord | undefined,
  copy: { readonly event: Pick<ScheduledEvent, 'version'>; readonly queuedBy?: string | undefined },
): EmissionDecision {
  if (record === undefined) return 'unrecorded';
  if (record.state === EVENT_STATE.emitted || record.state === EVENT_STATE.failed) return 'already-ended';
  if (isOpen(record.state) && copy.queuedBy !== undefined && record.carriedBy === copy.queuedBy) return 'carry';
  if (record.state !== EVENT_STATE.queued || record.version !== copy.event.version || record.queuedBy !== copy.queuedBy) return 'stale';
  return 'emit';
}

/**
 * The earliest an event's record may be gone, by the due time a copy of it carries. A copy is
 * sent after its record is written, never more than SQS_MAX_DELAY_SECONDS before its due time
 * (the near-path window and the loader's lookahead are capped there, whatever the settings were
 * then), and the event ends after it is sent (no copy of an ended event is sent); the record is
 * kept `retentionSeconds` after its end, or while open after its due time. So until this time
 * every record an event ever had still exists, however long the copy waited in a queue or a
 * dead-letter queue, and however often it was redriven (each redrive a new SQS message, its age
 * new to SQS, so no queue's retention bounds it).
 */
export function recordKeptFrom(dueAt: number, retentionSeconds: number): number {
  return dueAt + (retentionSeconds - SQS_MAX_DELAY_SECONDS) * 1000;
}

/**
 * A copy with no record is emitted only while its record, had it ever been written, would still
 * be kept (recordKeptFrom): then it never was (a table restored from an older backup, a message
 * the scheduler did not send), and emitting it loses nothing and repeats nothing. From then on,
 * the record may have expired after the event was emitted or cancelled: the copy, typically one
 * redriven from a dead-letter queue long after, is dropped (`RECORD_EXPIRED`), never emitted again.
 */
export function unrecordedCopyDecision(
  copy: { readonly event: Pick<ScheduledEvent, 'dueAt'> },
  now: number,
  retentionSeconds: number,
): 'emit' | 'record-expired' {
  return now < recordKeptFrom(copy.event.dueAt, retentionSeconds) ? 'emit' : 'record-expired';
}

/**
 * Why an event may not be published now, by the registry as it stands at the due time (ingest
 * checked the registry of its day): its tenant was removed, or it may no longer use the target,
 * an account since registered as another tenant's or taken out of its `targetAccounts`.
 */
export function emissionRefusal(
  tenant: Tenant | undefined,
  event: Pick<ScheduledEvent, 'tenant' | 'target'>,
): EventRejectedError | undefined {
  if (tenant === undefined)
    return new EventRejectedError(REASON.UNKNOWN_TENANT, `tenant "${event.tenant}" is no longer registered`, { tenant: event.tenant });
  if (!mayPublishTo(tenant, event.target)) {
    return new EventRejectedError(REASON.TARGET_NOT_ALLOWED, `tenant "${tenant.id}" may no longer target ${event.target}`, {
      field: 'target',
    });
  }
  return undefined;
}

/**
 * Where a tenant's notice (of a failed emission, or one ingest handed over) may go now: its
 * failure topic only while the tenant may still use it, else the tenant's dead-letter topic;
 * nowhere but the logs for a tenant no longer registered.
 */
export function noticeDestination(tenant: Tenant | undefined, failureTopic: string | undefined): NoticeDestination {
  if (tenant === undefined) return {};
  return {
    failureTopic: failureTopic !== undefined && mayPublishTo(tenant, failureTopic) ? failureTopic : undefined,
    deadLetterTopic: tenant.deadLetterTopic,
  };
}
