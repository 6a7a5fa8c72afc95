import type { ScheduledEvent } from './event.js';
import type { NoticeDestination } from './failure.js';
import { EVENT_STATE, isOpen, type EventRecord } from './lifecycle.js';
import { EventRejectedError, REASON, type ReasonCode } from './reasons.js';
import { mayPublishTo, type Tenant } from './tenants.js';

/** How an emission ended. */
export type EmissionEnd =
  | { readonly state: 'emitted'; readonly at: number }
  | { readonly state: 'failed'; readonly at: number; readonly reason: ReasonCode };

/** An emission's end, to record on its event. */
export interface EmissionEnding {
  readonly event: Pick<ScheduledEvent, 'id' | 'tenant' | 'version'>;
  readonly end: EmissionEnd;
  /** TTL of the record from now on, epoch seconds. */
  readonly expiresAt: number;
  /**
   * The delivery that published it (one per receive of a delay-queue message): a write retried
   * after its answer was lost finds its own end, where a second delivery finds another's.
   */
  readonly endedBy: string;
}

/**
 * What the emitter does with one delay-queue copy of an event, by what its record says now;
 * `carry`: the event was rescheduled while this copy alone held its payload, which the emitter
 * carries on to the new due time (see EventRecord.carriedBy).
 */
export type EmissionDecision = 'emit' | 'already-ended' | 'stale' | 'carry';

/**
 * Decided by a read when the copy arrives, before its due time: a copy is emitted only while
 * its event is queued as this version and this copy (a resend carries a new token, a
 * reschedule a new version). Changes close before the emitter reads (see changeRefusal), so
 * the read is the last word. An event with no record at all is emitted: nothing is lost.
 */
export function emissionDecision(
  record: EventRecord | undefined,
  copy: { readonly event: Pick<ScheduledEvent, 'version'>; readonly queuedBy?: string | undefined },
): EmissionDecision {
  if (record === undefined) return 'emit';
  if (record.state === EVENT_STATE.emitted || record.state === EVENT_STATE.failed) return 'already-ended';
  if (isOpen(record.state) && copy.queuedBy !== undefined && record.carriedBy === copy.queuedBy) return 'carry';
  if (record.state !== EVENT_STATE.queued || record.version !== copy.event.version || record.queuedBy !== copy.queuedBy) return 'stale';
  return 'emit';
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
