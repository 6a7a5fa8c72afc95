import { parseDueDate, toIso } from '../dates.js';
import { parseScheduleExpression, type ScheduleExpression } from './expression.js';
import { firstCursor, nextOccurrences } from './occurrences.js';
import { RECURRENCE_REASON, type RecurrenceRefusal } from './reasons.js';
import { type DstRule, EVENTBRIDGE_DST_RULE, type RecurrenceSpec } from './spec.js';
import { canonicalZone } from './zone.js';

/** A recurring schedule's fields as a request carries them. */
export interface RecurrenceFields {
  readonly schedule?: unknown;
  readonly timezone?: unknown;
  readonly start?: unknown;
  readonly end?: unknown;
  readonly count?: unknown;
  readonly offset?: unknown;
  readonly dst?: unknown;
}

export type RecurrenceCheck =
  | { readonly ok: true; readonly spec: RecurrenceSpec }
  | { readonly ok: false; readonly refusal: RecurrenceRefusal };

/** Thrown inside the checker only, to leave it at the first refused field. */
class Refused extends Error {
  constructor(readonly refusal: RecurrenceRefusal) {
    super(refusal.message);
  }
}

function refuse(reason: RecurrenceRefusal['reason'], message: string, details: RecurrenceRefusal['details']): never {
  throw new Refused({ reason, message, details });
}

function expressionOf(schedule: unknown): ScheduleExpression {
  if (typeof schedule !== 'string')
    refuse(RECURRENCE_REASON.INVALID_SCHEDULE_EXPRESSION, 'schedule must be a rate(...) or cron(...) expression', {
      field: 'schedule',
      problem: 'not a string',
    });
  const check = parseScheduleExpression(schedule);
  if (!check.ok)
    refuse(RECURRENCE_REASON.INVALID_SCHEDULE_EXPRESSION, `schedule ${JSON.stringify(schedule)} is not valid: ${check.problem}`, {
      field: 'schedule',
      problem: check.problem,
    });
  return check.expression;
}

function zoneOf(timezone: unknown): string {
  if (timezone === undefined) return 'UTC';
  const zone = typeof timezone === 'string' ? canonicalZone(timezone) : undefined;
  if (zone === undefined)
    refuse(RECURRENCE_REASON.UNKNOWN_TIMEZONE, `timezone ${JSON.stringify(timezone)} is not an IANA time zone name`, { field: 'timezone' });
  return zone;
}

function dateOf(field: 'start' | 'end', text: unknown): number | undefined {
  if (text === undefined) return undefined;
  const at = typeof text === 'string' ? parseDueDate(text) : undefined;
  if (at === undefined) refuse(RECURRENCE_REASON.INVALID_DATE, `${field} ${JSON.stringify(text)} is not an ISO-8601 date-time`, { field });
  return at;
}

function countOf(count: unknown): number | undefined {
  if (count === undefined) return undefined;
  if (!(Number.isSafeInteger(count) && (count as number) >= 1))
    refuse(RECURRENCE_REASON.INVALID_COUNT, `count ${JSON.stringify(count)} is not a whole number of at least 1`, { field: 'count' });
  return count as number;
}

function offsetOf(offset: unknown): number {
  if (offset === undefined) return 0;
  if (!(Number.isInteger(offset) && (offset as number) >= 0 && (offset as number) <= 59_999)) {
    refuse(RECURRENCE_REASON.INVALID_OFFSET, `offset ${JSON.stringify(offset)} is not a whole number of milliseconds from 0 to 59999`, {
      field: 'offset',
    });
  }
  return offset as number;
}

function dstOf(dst: unknown): DstRule {
  if (dst === undefined) return EVENTBRIDGE_DST_RULE;
  const rule = typeof dst === 'object' && dst !== null && !Array.isArray(dst) ? (dst as Record<string, unknown>) : undefined;
  const { gap = EVENTBRIDGE_DST_RULE.gap, overlap = EVENTBRIDGE_DST_RULE.overlap, ...others } = rule ?? {};
  if (!rule || (gap !== 'skip' && gap !== 'shift') || (overlap !== 'first' && overlap !== 'both') || Object.keys(others).length > 0) {
    refuse(RECURRENCE_REASON.INVALID_DST_RULE, 'dst must be {"gap": "skip" or "shift", "overlap": "first" or "both"}', { field: 'dst' });
  }
  return { gap, overlap };
}

/** Refuses a series with nothing to fire: none from its start, none before its end, or none left after `now`. */
function checkFires(spec: RecurrenceSpec, now: number): void {
  const { end, ...unbounded } = spec;
  const [first] = nextOccurrences(unbounded, firstCursor(unbounded), 1);
  if (first === undefined) {
    refuse(RECURRENCE_REASON.SCHEDULE_NEVER_FIRES, `schedule ${spec.expression.text} has no occurrence from ${toIso(spec.start)}`, {
      field: 'schedule',
    });
  }
  if (end !== undefined && first >= end) {
    refuse(RECURRENCE_REASON.SCHEDULE_NEVER_FIRES, `the first occurrence, ${toIso(first)}, is not before end ${toIso(end)}`, {
      field: 'end',
      first: toIso(first),
    });
  }
  const [upcoming] = nextOccurrences(spec, { after: Math.max(spec.start, now) - 1, fired: 0 }, 1);
  if (upcoming === undefined) {
    const field = end === undefined ? 'schedule' : 'end';
    refuse(RECURRENCE_REASON.SCHEDULE_NEVER_FIRES, `no occurrence is left after ${toIso(now)}: change ${field}`, { field });
  }
}

/**
 * Checks a request's recurring fields, filling in the defaults (UTC, start now, offset 0,
 * EventBridge's daylight-saving rule), or says which field is refused and why. `now` is when
 * the request is accepted: the start of a series that names none.
 */
export function checkRecurrence(fields: RecurrenceFields, now: number): RecurrenceCheck {
  try {
    const expression = expressionOf(fields.schedule);
    const timezone = zoneOf(fields.timezone);
    const start = dateOf('start', fields.start) ?? now;
    const end = dateOf('end', fields.end);
    if (end !== undefined && end <= start) {
      refuse(RECURRENCE_REASON.END_BEFORE_START, `end ${toIso(end)} is not after start ${toIso(start)}`, {
        field: 'end',
        start: toIso(start),
        end: toIso(end),
      });
    }
    const count = countOf(fields.count);
    const spec: RecurrenceSpec = {
      expression,
      timezone,
      start,
      ...(end === undefined ? {} : { end }),
      ...(count === undefined ? {} : { count }),
      offsetMs: offsetOf(fields.offset),
      dst: dstOf(fields.dst),
    };
    checkFires(spec, now);
    return { ok: true, spec };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}
