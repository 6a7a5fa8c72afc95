import { parseScheduleExpression } from '../src/domain/recurrence/expression.js';
import { firstCursor, nextOccurrences } from '../src/domain/recurrence/occurrences.js';
import { EVENTBRIDGE_DST_RULE, type RecurrenceSpec } from '../src/domain/recurrence/spec.js';

/** A spec of a valid expression, starting at `start` (ISO), the rest as given or by default. */
export function specOf(
  expression: string,
  start: string,
  rest: Partial<Omit<RecurrenceSpec, 'expression' | 'start'>> = {},
): RecurrenceSpec {
  const check = parseScheduleExpression(expression);
  if (!check.ok) throw new Error(`${expression}: ${check.problem}`);
  return { expression: check.expression, start: Date.parse(start), timezone: 'UTC', offsetMs: 0, dst: EVENTBRIDGE_DST_RULE, ...rest };
}

/** The first `n` occurrences of a series, as ISO strings. */
export function firstOccurrences(spec: RecurrenceSpec, n: number): string[] {
  return nextOccurrences(spec, firstCursor(spec), n).map((at) => new Date(at).toISOString());
}
