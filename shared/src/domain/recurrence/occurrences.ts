import { cronInstants } from './dst-walk.js';
import type { RecurrenceSpec } from './spec.js';

const MINUTE_MS = 60_000;

/**
 * Where a series stands: look for occurrences strictly after `after`, `fired` of them having
 * come at or before it (what `count` is measured against).
 *
 * The caller keeps it: the series record holds its last occurrence and how many have come,
 * and passes them on. Counting them again from `start` would cost as many steps as there were
 * occurrences, at every call, and would count by the expression in force, not by the ones that
 * ran before a replacement. `cursorAt` counts from `start` where no record is at hand.
 */
export interface SeriesCursor {
  readonly after: number;
  readonly fired: number;
}

/** The cursor of a series before its first occurrence. */
export function firstCursor(spec: RecurrenceSpec): SeriesCursor {
  return { after: spec.start - 1, fired: 0 };
}

/** rate(): every period of elapsed time from the start's minute, offset added: no wall clock, so no daylight saving. */
function* rateInstants(spec: RecurrenceSpec, periodMs: number, after: number): Generator<number> {
  const base = Math.floor(spec.start / MINUTE_MS) * MINUTE_MS + spec.offsetMs;
  const from = Math.max(spec.start - 1, after);
  for (let k = Math.max(0, Math.floor((from - base) / periodMs) + 1); ; k++) yield base + k * periodMs;
}

/** The series' occurrences strictly after `after`, from `start` and before `end`, in order; `count` aside. */
function* occurrencesAfter(spec: RecurrenceSpec, after: number): Generator<number> {
  const { expression } = spec;
  const instants =
    expression.kind === 'rate'
      ? rateInstants(spec, expression.periodMs, after)
      : offsetBy(spec.offsetMs, cronInstants(expression.pattern, spec.timezone, spec.dst, Math.max(spec.start - 1, after) - spec.offsetMs));
  for (const instant of instants) {
    if (spec.end !== undefined && instant >= spec.end) return;
    yield instant;
  }
}

function* offsetBy(offsetMs: number, instants: Iterable<number>): Generator<number> {
  for (const instant of instants) yield instant + offsetMs;
}

/**
 * The occurrences (epoch ms, UTC) strictly after the cursor, in order, as many as `count` leaves:
 * each computed when it is asked for, so a walk that stops at a horizon computes no more.
 */
export function* occurrencesFrom(spec: RecurrenceSpec, cursor: SeriesCursor): Generator<number> {
  let left = spec.count === undefined ? Number.POSITIVE_INFINITY : spec.count - cursor.fired;
  if (left <= 0) return;
  for (const instant of occurrencesAfter(spec, cursor.after)) {
    yield instant;
    left--;
    if (left <= 0) return;
  }
}

/** The next `n` occurrences (epoch ms, UTC) strictly after the cursor, fewer when the series ends sooner. */
export function nextOccurrences(spec: RecurrenceSpec, cursor: SeriesCursor, n: number): number[] {
  const found: number[] = [];
  if (n <= 0) return found;
  for (const instant of occurrencesFrom(spec, cursor)) {
    found.push(instant);
    if (found.length >= n) break;
  }
  return found;
}

/**
 * The cursor at `instant`, counting the occurrences from `start` to it (at most `count`): as
 * many steps as occurrences, so for a series without a record to keep its cursor.
 */
export function cursorAt(spec: RecurrenceSpec, instant: number): SeriesCursor {
  let fired = 0;
  for (const occurrence of occurrencesAfter(spec, spec.start - 1)) {
    if (occurrence > instant || fired === spec.count) break;
    fired++;
  }
  return { after: instant, fired };
}
