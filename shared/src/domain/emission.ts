import type { ScheduledEvent } from './event.js';
import { EVENT_STATE, type EventRecord } from './lifecycle.js';
import type { ReasonCode } from './reasons.js';

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

/** What the emitter does with one delay-queue copy of an event, by what its record says now. */
export type EmissionDecision = 'emit' | 'already-ended' | 'stale';

/**
 * Decided by a read when the copy arrives, before its due time: a copy is emitted only while
 * its event is queued as this version and this copy (a resend carries a new token, a
 * reschedule a new version). Changes close before the emitter reads (see changeRefusal), so
 * the read is the last word. An event with no record at all is emitted: nothing is lost.
 */
export function emissionDecision(record: EventRecord | undefined, copy: { readonly event: Pick<ScheduledEvent, 'version'>; readonly queuedBy?: string | undefined }): EmissionDecision {
  if (record === undefined) return 'emit';
  if (record.state === EVENT_STATE.emitted || record.state === EVENT_STATE.failed) return 'already-ended';
  if (record.state !== EVENT_STATE.queued || record.version !== copy.event.version || record.queuedBy !== copy.queuedBy) return 'stale';
  return 'emit';
}
