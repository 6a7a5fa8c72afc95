import type { ScheduleExpression } from './expression.js';

/**
 * What a series does with a local time its zone skips (`gap`) or repeats (`overlap`) on the
 * day its clocks change. See dst-walk.ts for the instants each choice gives.
 */
export interface DstRule {
  /** `skip`: the time does not run that day. `shift`: it runs at the first instant after the gap. */
  readonly gap: 'skip' | 'shift';
  /** `first`: the time runs once, at its first occurrence. `both`: it runs at each. */
  readonly overlap: 'first' | 'both';
}

/** EventBridge Scheduler's rule, the default: a skipped time does not run, a repeated one runs once. */
export const EVENTBRIDGE_DST_RULE: DstRule = { gap: 'skip', overlap: 'first' };

/** A checked recurring schedule: everything its calendar needs, defaults filled in. */
export interface RecurrenceSpec {
  readonly expression: ScheduleExpression;
  /** The IANA zone a cron expression's local times are read in (canonical name); rate() ignores it. */
  readonly timezone: string;
  /**
   * When the series starts, epoch ms: the request's `start`, or when it was accepted. No
   * occurrence comes before it; rate() counts its periods from its minute, and `count` counts
   * occurrences from it.
   */
  readonly start: number;
  /** No occurrence at or after it (epoch ms), as EventBridge's end date. */
  readonly end?: number;
  /** At most this many occurrences from `start`. */
  readonly count?: number;
  /** Milliseconds (0 to 59,999) added to each minute-precise occurrence: 09:00 + 250 is 09:00:00.250. */
  readonly offsetMs: number;
  readonly dst: DstRule;
}
