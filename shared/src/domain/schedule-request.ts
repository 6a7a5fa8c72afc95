/**
 * A schedule request as its schema takes it: the original service's fields, the optional
 * idempotency key and labels, and for a recurring series `schedule` in place of `date` (the
 * series' other fields are read from the message by series-request.ts).
 */
export interface ScheduleRequest {
  readonly action?: 'schedule';
  /** Required unless `schedule` is given (a series), never with it. */
  readonly date?: string;
  readonly schedule?: string;
  readonly catch_up_seconds?: number;
  readonly target: string;
  readonly user?: string;
  readonly payload: string;
  readonly failure_topic?: string;
  readonly id?: string;
  readonly labels?: readonly string[];
}
