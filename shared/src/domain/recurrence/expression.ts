import { cronerPattern, FieldError } from './cron-fields.js';
import { wallCalendar } from './wall-calendar.js';

/** A schedule expression EventBridge Scheduler would take, checked and ready to compute. */
export type ScheduleExpression =
  /** `rate(n unit)`: every `periodMs` of elapsed time from the series' start. */
  | { readonly kind: 'rate'; readonly text: string; readonly periodMs: number }
  /** `cron(...)`: the croner pattern (seconds first) of its wall-clock calendar. */
  | { readonly kind: 'cron'; readonly text: string; readonly pattern: string };

export type ExpressionCheck =
  | { readonly ok: true; readonly expression: ScheduleExpression }
  | { readonly ok: false; readonly problem: string };

const UNIT_MS: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Longest expression taken: a cron with every field a long list stays well under it. */
export const MAX_EXPRESSION_CHARS = 256;

/**
 * `rate(value unit)` as EventBridge writes it: a whole number of at least 1, and the unit
 * singular for 1 and plural otherwise (`rate(1 hour)`, `rate(5 minutes)`).
 */
function rate(value: string, unit: string, text: string): ExpressionCheck {
  const singular = unit.endsWith('s') ? unit.slice(0, -1) : unit;
  const unitMs = UNIT_MS[singular];
  const count = Number(value);
  if (unitMs === undefined) return { ok: false, problem: `rate: "${unit}" is not minute(s), hour(s) or day(s)` };
  if (!/^[1-9]\d*$/.test(value)) return { ok: false, problem: `rate: "${value}" is not a whole number of at least 1` };
  if ((count === 1) !== (unit === singular)) {
    return {
      ok: false,
      problem: `rate: write "${count === 1 ? `1 ${singular}` : `${value} ${singular}s`}" (the unit is singular for 1 only)`,
    };
  }
  const periodMs = count * unitMs;
  if (!Number.isSafeInteger(periodMs)) return { ok: false, problem: `rate: ${value} ${unit} is too long a period` };
  return { ok: true, expression: { kind: 'rate', text, periodMs } };
}

/** Checks an EventBridge Scheduler `rate(...)` or `cron(...)` expression. */
export function parseScheduleExpression(text: string): ExpressionCheck {
  if (text.length > MAX_EXPRESSION_CHARS) return { ok: false, problem: `longer than ${MAX_EXPRESSION_CHARS} characters` };
  const rateMatch = /^rate\((\S+) (\S+)\)$/.exec(text);
  if (rateMatch) return rate(rateMatch[1] ?? '', rateMatch[2] ?? '', text);
  const cronMatch = /^cron\((.*)\)$/.exec(text);
  if (!cronMatch) return { ok: false, problem: 'not rate(value unit) or cron(minutes hours day-of-month month day-of-week year)' };
  try {
    const pattern = cronerPattern((cronMatch[1] ?? '').trim().split(/ +/));
    // What passes EventBridge's rules croner takes too; should it not, the client is told, not the service stopped.
    wallCalendar(pattern);
    return { ok: true, expression: { kind: 'cron', text, pattern } };
  } catch (error) {
    return { ok: false, problem: `cron: ${error instanceof FieldError ? error.message : String(error)}` };
  }
}
