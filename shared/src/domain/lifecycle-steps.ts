import type { EventRecord } from './lifecycle.js';

/** A step of an event's life: what happened, when, and who took it. */
export interface LifecycleStep {
  readonly step: string;
  readonly at: number;
  /** Who took the step: ingest, the loader, the emitter, a client's request, the resume job. */
  readonly by: string;
  readonly detail?: string | undefined;
}

/**
 * An event's steps so far, in the order they happened, each at its own time (the latest of its
 * kind: a second reschedule shows, the first does not). `event show` and the console both print
 * these, so they say the same.
 */
export function lifecycleSteps(record: EventRecord): LifecycleStep[] {
  const steps: LifecycleStep[] = [
    {
      step: 'created',
      at: record.createdAt,
      by: 'ingest',
      detail: record.inputMessageId === undefined ? undefined : `input message ${record.inputMessageId}`,
    },
  ];
  const add = (step: string, at: number | undefined, by: string, detail?: string) => {
    if (at !== undefined) steps.push({ step, at, by, detail });
  };
  // A record written before each step kept its time has only queuedAt, the latest send, of whichever actor.
  const olderRecord =
    record.loadedBy !== undefined && record.loadedAt === undefined && record.sweptAt === undefined && record.resumedAt === undefined;
  add('queued', record.queuedAt, olderRecord ? 'the loader' : 'ingest', 'sent to the delay queue');
  add('queued', record.resentAt, 'ingest', 'sent to the delay queue again: its input message came again');
  add('queued', record.loadedAt, 'the loader', 'taken from the table into the delay queue');
  add('queued', record.sweptAt, "the loader's sweep", 'sent to the delay queue again: its copy there was lost');
  add('rescheduled', record.rescheduledAt, rescheduledBy(record), `to ${new Date(record.dueAt).toISOString()} (version ${record.version})`);
  add('queued', record.carriedAt, 'the emitter carry', 'its copy came due at the old time: its payload sent on for the new one');
  add('scheduled', record.carriedToTableAt, 'the emitter carry', 'its copy came due at the old time: its payload stored for the loader');
  add('held', record.heldAt, 'the emitter', 'its tenant was paused when it came due: sent once the tenant is resumed');
  add('queued', record.resumedAt, 'the resume job', 'sent to the delay queue, its tenant resumed');
  add(
    'emitted',
    record.emittedAt,
    'the emitter',
    `its publish answered ${Math.max(0, (record.emittedAt ?? 0) - record.dueAt)} ms after its due time`,
  );
  add('failed', record.failedAt, 'the emitter', record.reason);
  add('cancelled', record.cancelledAt, record.cancelledBy === undefined ? 'a cancel' : `input message ${record.cancelledBy}`);
  // Stable: steps of the same millisecond stay in the order above, which is the order they can happen in.
  return steps.sort((a, b) => a.at - b.at);
}

function rescheduledBy(record: EventRecord): string {
  return record.lastChangeBy === undefined ? 'a reschedule' : `input message ${record.lastChangeBy}`;
}

/** When an event reached its state: its last step's time (the SINCE of a listing). */
export function reachedAt(record: EventRecord): number {
  return lifecycleSteps(record).at(-1)?.at ?? record.createdAt;
}
