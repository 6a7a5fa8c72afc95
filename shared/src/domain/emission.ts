import type { ScheduledEvent } from './event.js';
import { EVENT_STATE, type EventRecord } from './lifecycle.js';

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
