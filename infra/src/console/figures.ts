import { latenessBinLabel, type EndCounts, type EventRecord } from '@adhoc-scheduler/shared';
import type { LifecycleStep, Overview } from './backend.js';

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

/** An event's steps so far, in the order they happened, from the times its record keeps. */
export function lifecycleSteps(event: EventRecord): LifecycleStep[] {
  const steps: LifecycleStep[] = [
    {
      step: 'scheduled',
      at: event.createdAt,
      detail: event.inputMessageId === undefined ? undefined : `by input message ${event.inputMessageId}`,
    },
  ];
  const add = (step: string, at: number | undefined, detail?: string) => {
    if (at !== undefined) steps.push({ step, at, detail });
  };
  add('rescheduled', event.rescheduledAt, `to ${new Date(event.dueAt).toISOString()} (version ${event.version})`);
  add(
    'queued',
    event.queuedAt,
    event.loadedBy === undefined ? 'sent to the delay queue at ingest' : 'taken from the table by the loader into the delay queue',
  );
  add('held', event.heldAt, 'its tenant was paused when it came due: sent once the tenant is resumed');
  add('emitted', event.emittedAt, `${Math.max(0, (event.emittedAt ?? 0) - event.dueAt)} ms after its due time`);
  add('failed', event.failedAt, event.reason);
  add('cancelled', event.cancelledAt, event.cancelledBy === undefined ? undefined : `by input message ${event.cancelledBy}`);
  return steps.sort((a, b) => a.at - b.at);
}
