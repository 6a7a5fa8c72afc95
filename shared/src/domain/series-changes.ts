import type { SeriesCursor } from './recurrence/occurrences.js';
import { nextOccurrences } from './recurrence/occurrences.js';
import type { RecurrenceSpec } from './recurrence/spec.js';
import { materialisedAfter, type SeriesRecord } from './series.js';
import type { SeriesDefinition } from './series-request.js';

/**
 * A client's change of one series: pause, resume, or the replacement of its definition (its
 * expression and the fields that go with it) or its payload. Each is ordered by its publish time,
 * as a tenant's pause is: one published before the last applied changes nothing. A change that
 * stops what was materialised (a pause, a replacement) cancels the occurrences due after the
 * change cutoff and moves the series to a new revision, whose occurrences have ids of their own.
 */
export type SeriesChange =
  | { readonly kind: 'pause'; readonly note: string | undefined }
  | { readonly kind: 'resume' }
  | { readonly kind: 'replace'; readonly definition: SeriesDefinition | undefined; readonly payload: string | undefined };

/** What a change writes to the series' record. */
export interface SeriesRevision {
  readonly spec: RecurrenceSpec;
  readonly catchUpMs: number;
  readonly cursor: SeriesCursor;
  readonly revision: number;
  /** Set while paused: the series is then out of the tenant index. */
  readonly pausedAt: number | undefined;
  /** Where the loader finds it while not paused: its next occurrence (a past time when it has none: its next take completes it). */
  readonly dueAt: number | undefined;
  /** A new payload, when the change gives one. */
  readonly payload: string | undefined;
}

/** Whether a change published at `publishedAt` by `by` follows the last one applied (a tie by another message follows too, as tenant pauses do). */
export function followsLastChange(
  series: Pick<SeriesRecord, 'lastChangeAt' | 'lastChangeBy'>,
  change: { publishedAt: number; by: string },
): boolean {
  const { lastChangeAt, lastChangeBy } = series;
  return (
    lastChangeAt === undefined || lastChangeAt < change.publishedAt || (lastChangeAt === change.publishedAt && lastChangeBy !== change.by)
  );
}

/** Whether a change cancels what the series materialised: a pause of a running series, or a replacement. */
export function cancelsMaterialised(series: Pick<SeriesRecord, 'pausedAt'>, change: SeriesChange): boolean {
  return change.kind === 'replace' || (change.kind === 'pause' && series.pausedAt === undefined);
}

/** Occurrences computed a step at a time, as materialisation does. */
const STEP = 32;

/**
 * A cursor moved on to `instant` (occurrences due at or before it are passed over): those it
 * passes count towards `count`; a series without `count` keeps its number (cursorAt's rule for a
 * series that starts before its request was published).
 */
export function cursorMovedTo(spec: RecurrenceSpec, cursor: SeriesCursor, instant: number): SeriesCursor {
  if (cursor.after >= instant) return cursor;
  if (spec.count === undefined) return { after: instant, fired: cursor.fired };
  let fired = cursor.fired;
  let after = cursor.after;
  for (;;) {
    const step = nextOccurrences(spec, { after, fired }, STEP);
    for (const dueAt of step) {
      if (dueAt > instant) return { after: instant, fired };
      fired++;
      after = dueAt;
    }
    if (step.length < STEP) return { after: instant, fired };
  }
}

/** The cursor back at `keptUntil`: the occurrences materialised after it were cancelled, and are owed again by a new revision. */
export function rewoundCursor(series: Pick<SeriesRecord, 'spec' | 'cursor'>, keptUntil: number): SeriesCursor {
  if (series.cursor.after <= keptUntil) return series.cursor;
  return { after: keptUntil, fired: series.cursor.fired - materialisedAfter(series, keptUntil).length };
}

/**
 * What a change makes of a series, once the occurrences it cancels are cancelled: those due up to
 * `keptUntil` (the change cutoff, or the last one the cutoff kept) stand, and the series goes on
 * after them. A pause takes it out of the index; a resume goes on with the first occurrence after
 * the resume was published (none of those due while paused is owed); a replacement goes on with
 * its new definition (counted from its own `start`) or payload. A pause of a paused series, or a
 * resume of a running one, changes nothing but the order of changes.
 */
export function revisedSeries(series: SeriesRecord, change: SeriesChange, at: { publishedAt: number; keptUntil: number }): SeriesRevision {
  const revision = (series.revision ?? 1) + (cancelsMaterialised(series, change) ? 1 : 0);
  const same = {
    spec: series.spec,
    catchUpMs: series.catchUpMs,
    cursor: series.cursor,
    revision,
    pausedAt: series.pausedAt,
    payload: undefined,
  };
  switch (change.kind) {
    case 'pause':
      if (series.pausedAt !== undefined) return { ...same, dueAt: undefined };
      return { ...same, cursor: rewoundCursor(series, at.keptUntil), pausedAt: at.publishedAt, dueAt: undefined };
    case 'resume': {
      if (series.pausedAt === undefined) return { ...same, dueAt: series.dueAt };
      const cursor = cursorMovedTo(series.spec, series.cursor, at.publishedAt - 1);
      return { ...same, cursor, pausedAt: undefined, dueAt: nextDue(series.spec, cursor) };
    }
    case 'replace': {
      const { definition } = change;
      const spec = definition?.spec ?? series.spec;
      const cursor = definition === undefined ? rewoundCursor(series, at.keptUntil) : cursorMovedTo(spec, definition.cursor, at.keptUntil);
      return {
        ...same,
        spec,
        catchUpMs: definition?.catchUpMs ?? series.catchUpMs,
        cursor,
        payload: change.payload,
        dueAt: series.pausedAt === undefined ? nextDue(spec, cursor) : undefined,
      };
    }
  }
}

function nextDue(spec: RecurrenceSpec, cursor: SeriesCursor): number {
  return nextOccurrences(spec, cursor, 1)[0] ?? cursor.after;
}
