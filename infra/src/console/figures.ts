import { EVENT_STATE, type EventRecord } from '@adhoc-scheduler/shared';
import type { Overview } from './backend.js';

const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** The timeline of the next hour, in slots of five minutes. */
export const TIMELINE_SLOT_MS = 5 * MINUTE_MS;

/** Upper bounds of the lateness histogram's bins, in ms; the last bin takes the rest. */
const LATENESS_BINS_MS = [10, 50, 100, 250, 500, 1000, 5000] as const;

function latenessLabel(index: number): string {
  const upper = LATENESS_BINS_MS[index];
  const lower = index === 0 ? 0 : (LATENESS_BINS_MS[index - 1] as number);
  const ms = (value: number) => (value >= 1000 ? `${value / 1000} s` : `${value} ms`);
  return upper === undefined ? `${ms(lower)} or more` : `${ms(lower)} to ${ms(upper)}`;
}

/** The overview's figures from a tenant's open events due in the next hour and its events due in the last. */
export function overviewFigures(
  now: number,
  dueNextHour: readonly EventRecord[],
  dueLastHour: readonly EventRecord[],
): Pick<Overview, 'dueNextHour' | 'emittedLastHour' | 'failedLastHour' | 'lateness'> {
  const slots = Array.from({ length: HOUR_MS / TIMELINE_SLOT_MS }, (_, index) => ({ from: now + index * TIMELINE_SLOT_MS, count: 0 }));
  for (const event of dueNextHour) {
    const slot = slots[Math.floor((event.dueAt - now) / TIMELINE_SLOT_MS)];
    if (slot) slot.count++;
  }
  const bins = Array.from({ length: LATENESS_BINS_MS.length + 1 }, (_, index) => ({ label: latenessLabel(index), count: 0 }));
  let emitted = 0;
  let failed = 0;
  for (const event of dueLastHour) {
    if (event.state === EVENT_STATE.failed) failed++;
    if (event.state !== EVENT_STATE.emitted || event.emittedAt === undefined) continue;
    emitted++;
    const late = Math.max(0, event.emittedAt - event.dueAt);
    const index = LATENESS_BINS_MS.findIndex((upper) => late < upper);
    const bin = bins[index === -1 ? LATENESS_BINS_MS.length : index];
    if (bin) bin.count++;
  }
  return { dueNextHour: slots, emittedLastHour: emitted, failedLastHour: failed, lateness: bins };
}
