import { REASON } from '../reasons.js';

/**
 * Why a recurring schedule's fields are refused. Stable codes, as REASON's are; kept here until
 * ingest takes `schedule`, when they join REASON and the clients' table.
 */
export const RECURRENCE_REASON = {
  /** `schedule` is not an EventBridge Scheduler `rate(...)` or `cron(...)` expression; `details.problem` says why. */
  INVALID_SCHEDULE_EXPRESSION: 'INVALID_SCHEDULE_EXPRESSION',
  /** `timezone` is not an IANA time zone name the runtime knows. */
  UNKNOWN_TIMEZONE: 'UNKNOWN_TIMEZONE',
  /** `start` or `end` (`details.field`) is not an ISO-8601 date-time: the code a one-off's `date` gets. */
  INVALID_DATE: REASON.INVALID_DATE,
  /** `end` is not after `start`. */
  END_BEFORE_START: 'END_BEFORE_START',
  /** `count` is not a whole number of at least 1. */
  INVALID_COUNT: 'INVALID_COUNT',
  /** `offset` is not a whole number of milliseconds from 0 to 59,999. */
  INVALID_OFFSET: 'INVALID_OFFSET',
  /** `dst` is not `{"gap": "skip"|"shift", "overlap": "first"|"both"}` (either key may be left out). */
  INVALID_DST_RULE: 'INVALID_DST_RULE',
  /** The series has no occurrence from `start`, none before `end`, or none left from now on; `details.field` names the field to change. */
  SCHEDULE_NEVER_FIRES: 'SCHEDULE_NEVER_FIRES',
} as const;

export type RecurrenceReason = (typeof RECURRENCE_REASON)[keyof typeof RECURRENCE_REASON];

/** A refusal of a recurring schedule's fields: its code, a sentence for the client, and details naming the field. */
export interface RecurrenceRefusal {
  readonly reason: RecurrenceReason;
  readonly message: string;
  readonly details: Readonly<{ field: string } & Record<string, unknown>>;
}
