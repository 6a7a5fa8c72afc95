import type { EventRecord, EventState } from './lifecycle.js';
import { materialisedAfter, type Occurrence, type SeriesRecord } from './series.js';
import { occurrenceId } from './table-keys.js';

/**
 * A series' last occurrences, for operators: the due times it came to, computed again from its
 * calendar (a series keeps only its cursor, not what it made), and how each went, read from the
 * event each became (its id is the series' and the due time's, see occurrenceId).
 */

/** How far back the first look for past occurrences goes; each further look goes twice as far. */
const FIRST_LOOK_BACK_MS = 60 * 60_000;

/**
 * The last `n` occurrences of a series due at or before `now`, newest first: those its takes
 * reached (up to its cursor), as many as it counts (so none from before it was accepted, unless
 * `count` counted them). Looks back an hour, then twice as far each time, until it has `n` or
 * reaches the series' start: about as many steps as occurrences shown, however old the series.
 */
export function pastOccurrences(series: Pick<SeriesRecord, 'spec' | 'cursor'>, now: number, n: number): Occurrence[] {
  const { spec, cursor } = series;
  // Materialised and not yet due: counted by the cursor, but to come.
  const newest = cursor.fired - materialisedAfter(series, now).length;
  const wanted = Math.min(n, newest);
  if (wanted <= 0) return [];
  const until = Math.min(now, cursor.after);
  for (let lookBack = FIRST_LOOK_BACK_MS; ; lookBack *= 2) {
    const from = until - lookBack;
    const due = materialisedAfter(series, from).filter((dueAt) => dueAt <= until);
    if (due.length >= wanted || from < spec.start)
      return due
        .slice(-wanted)
        .reverse()
        .map((dueAt, index) => ({ dueAt, occurrence: newest - index }));
  }
}

/** A past occurrence and how it went; no event: expired, or never made (skipped by the catch-up window, refused over quota). */
export interface PastOccurrence extends Occurrence {
  readonly eventId: string;
  readonly event?: { readonly state: EventState; readonly dueAt: number; readonly emittedAt?: number | undefined };
  /** From its due time (the event's, should it have been rescheduled) to its publish's answer; only when emitted. */
  readonly latenessMs?: number;
}

/** The event ids of a series' occurrences: what to read for pastOccurrenceOutcomes. */
export function occurrenceEventIds(seriesId: string, occurrences: readonly Occurrence[]): string[] {
  return occurrences.map(({ dueAt }) => occurrenceId(seriesId, dueAt));
}

/** Each past occurrence with its event, as read (`events` by id), and its lateness once emitted. */
export function pastOccurrenceOutcomes(
  seriesId: string,
  occurrences: readonly Occurrence[],
  events: ReadonlyMap<string, EventRecord>,
): PastOccurrence[] {
  return occurrences.map((occurrence) => {
    const eventId = occurrenceId(seriesId, occurrence.dueAt);
    const record = events.get(eventId);
    if (record === undefined) return { ...occurrence, eventId };
    const { state, dueAt, emittedAt } = record;
    return {
      ...occurrence,
      eventId,
      event: { state, dueAt, emittedAt },
      ...(emittedAt === undefined ? {} : { latenessMs: emittedAt - dueAt }),
    };
  });
}
