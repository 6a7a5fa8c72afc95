import { REASON } from '../reasons.js';

/** The codes a recurring schedule's fields are refused with (REASON's, in the clients' table). */
export const RECURRENCE_REASON = {
  INVALID_SCHEDULE_EXPRESSION: REASON.INVALID_SCHEDULE_EXPRESSION,
  UNKNOWN_TIMEZONE: REASON.UNKNOWN_TIMEZONE,
  /** `start` or `end` (`details.field`) is not an ISO-8601 date-time: the code a one-off's `date` gets. */
  INVALID_DATE: REASON.INVALID_DATE,
  END_BEFORE_START: REASON.END_BEFORE_START,
  INVALID_COUNT: REASON.INVALID_COUNT,
  INVALID_OFFSET: REASON.INVALID_OFFSET,
  INVALID_DST_RULE: REASON.INVALID_DST_RULE,
  SCHEDULE_NEVER_FIRES: REASON.SCHEDULE_NEVER_FIRES,
} as const;

export type RecurrenceReason = (typeof RECURRENCE_REASON)[keyof typeof RECURRENCE_REASON];

/** A refusal of a recurring schedule's fields: its code, a sentence for the client, and details naming the field. */
export interface RecurrenceRefusal {
  readonly reason: RecurrenceReason;
  readonly message: string;
  readonly details: Readonly<{ field: string } & Record<string, unknown>>;
}
