import { latenessBinLabel, type EndCounts, type EventRecord } from '@adhoc-scheduler/shared';
import type { Overview } from './backend.js';

const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** The timeline of the next hour, in slots of five minutes. */
export const TIMELINE_SLOT_MS = 5 * MINUTE_MS;

/** The overview's timeline from a tenant's open events due in the next hour, and its figures of the last hour from its ends' counts. */
export function overviewFigures(
  now: number,
  dueNextHour: readonly EventRecord[],
  lastHour: EndCounts,
): Pick<Overview, 'dueNextHour' | 'emittedLastHour' | 'failedLastHour' | 'lateness'> {
  const slots = Array.from({ length: HOUR_MS / TIMELINE_SLOT_MS }, (_, index) => ({ from: now + index * TIMELINE_SLOT_MS, count: 0 }));
  for (const event of dueNextHour) {
    const slot = slots[Math.floor((event.dueAt - now) / TIMELINE_SLOT_MS)];
    if (slot) slot.count++;
  }
  return {
    dueNextHour: slots,
    emittedLastHour: lastHour.emitted,
    failedLastHour: lastHour.failed,
    lateness: lastHour.lateness.map((count, bin) => ({ label: latenessBinLabel(bin), count })),
  };
}
