/**
 * Stable reason codes. Clients switch on these (they appear in failure-topic messages and
 * logs), so a code is never renamed or reused; new ones may be added.
 */
export const REASON = {
  /** The input message body is not JSON. */
  INVALID_JSON: 'INVALID_JSON',
  /** The message is JSON but not an object. */
  NOT_AN_OBJECT: 'NOT_AN_OBJECT',
  /** A required field is absent (`date`, `target`, `user`, `payload`; `id` or `event_id` for cancel and reschedule). */
  MISSING_FIELD: 'MISSING_FIELD',
  /** A field has the wrong type or is empty. */
  INVALID_FIELD: 'INVALID_FIELD',
  /** `date` is not an ISO-8601 date-time. */
  INVALID_DATE: 'INVALID_DATE',
  /** `target` is not an SNS topic ARN. */
  INVALID_TARGET: 'INVALID_TARGET',
  /** `failure_topic` is present but not an SNS topic ARN. */
  INVALID_FAILURE_TOPIC: 'INVALID_FAILURE_TOPIC',
  /** `payload` with the scheduler's message attributes exceeds the SNS message size limit. */
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** The target topic does not exist. */
  TARGET_NOT_FOUND: 'TARGET_NOT_FOUND',
  /** The target topic's policy does not let the scheduler publish. */
  TARGET_ACCESS_DENIED: 'TARGET_ACCESS_DENIED',
  /** Publishing to the target kept failing until the attempts ran out. */
  PUBLISH_FAILED: 'PUBLISH_FAILED',
  /** The message did not arrive on a registered tenant's input topic (logged only). */
  UNKNOWN_TENANT: 'UNKNOWN_TENANT',
  /** The envelope names an input topic outside the scheduler's account or region: it did not come through the scheduler's SNS (logged only). */
  FOREIGN_INPUT_TOPIC: 'FOREIGN_INPUT_TOPIC',
  /** The operator has disabled the shared input topic's public tenant (logged only). */
  TENANT_DISABLED: 'TENANT_DISABLED',
  /** `target` is a topic in an account the tenant may not publish to. */
  TARGET_NOT_ALLOWED: 'TARGET_NOT_ALLOWED',
  /** `failure_topic` is a topic in an account the tenant may not publish to (logged only). */
  FAILURE_TOPIC_NOT_ALLOWED: 'FAILURE_TOPIC_NOT_ALLOWED',
  /** The tenant is at its limit of open events, of new events per second or of control requests per second; `details.quota` says which. */
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  /** Cancel or reschedule: no event of this tenant has that id (another tenant's event is not found either). */
  EVENT_NOT_FOUND: 'EVENT_NOT_FOUND',
  /** Cancel or reschedule: the event has already ended; `details.state` says how (emitted, failed, cancelled). */
  EVENT_ALREADY_ENDED: 'EVENT_ALREADY_ENDED',
  /** Cancel or reschedule: the event is due within the change cutoff; it will be emitted. */
  EVENT_EMITTING: 'EVENT_EMITTING',
  /**
   * No longer used: a reschedule of an event whose payload only the delay queue holds now applies
   * (the emitter carries the payload on). Formerly: reschedule refused for such an event.
   */
  EVENT_QUEUED: 'EVENT_QUEUED',
  /** `target` is a topic in another region than the scheduler's (SNS publishes only within its region). */
  TARGET_IN_OTHER_REGION: 'TARGET_IN_OTHER_REGION',
  /** `failure_topic` is a topic in another region than the scheduler's (not reported there). */
  FAILURE_TOPIC_IN_OTHER_REGION: 'FAILURE_TOPIC_IN_OTHER_REGION',
  /** The message nests arrays or objects deeper than the scheduler takes. */
  TOO_DEEPLY_NESTED: 'TOO_DEEPLY_NESTED',
  /** Cancel or reschedule on the shared input topic that does not name the event by its `m-` event id; pause or resume on the shared input topic. */
  CONTROL_NOT_ALLOWED: 'CONTROL_NOT_ALLOWED',
  /** `target` is one of the scheduler's own topics (an input topic, its alarm topic): the scheduler never publishes there for a client. */
  TARGET_IS_SCHEDULER_TOPIC: 'TARGET_IS_SCHEDULER_TOPIC',
  /** `failure_topic` is one of the scheduler's own topics (not reported there). */
  FAILURE_TOPIC_IS_SCHEDULER_TOPIC: 'FAILURE_TOPIC_IS_SCHEDULER_TOPIC',
  /** A string of the message, a key or a value, is not well-formed Unicode (it holds a lone UTF-16 surrogate); `details.field` names it. */
  INVALID_UNICODE: 'INVALID_UNICODE',
  /** At emission: the SDK cannot serialise the payload or an attribute into a request (not retried: it never could). */
  PAYLOAD_NOT_PUBLISHABLE: 'PAYLOAD_NOT_PUBLISHABLE',
  /** `user`, `id` or `note` holds a control character (C0, DEL or C1: U+0000 to U+001F, U+007F to U+009F), which could drive an operator's terminal; `details.field` names it. */
  CONTROL_CHARACTER: 'CONTROL_CHARACTER',
  /** At emission: a delay-queue copy (one redriven long after, typically) of an event whose record may have expired after it ended; it may have been emitted or cancelled, so it is dropped (logs only). */
  RECORD_EXPIRED: 'RECORD_EXPIRED',
  /** `date` is further ahead than the scheduler takes; `details.limit` (seconds) and `details.latest` say how far. */
  DATE_TOO_FAR: 'DATE_TOO_FAR',
  /** Schedule: the `id` already names an event that another request (another date, target, payload, failure topic, user or labels: `details.differing` says which) scheduled; the first one stands. */
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  /** Not an error: a bulk cancel by label is done; `details` hold its counts (`cancelled`, `refused.ended`, `refused.emitting`). */
  BULK_CANCEL_DONE: 'BULK_CANCEL_DONE',
  /** Resume: the tenant's own pause is ended, but its operator's pause stands (a tenant can neither lift nor shorten it); `details` say since when and why. */
  PAUSED_BY_OPERATOR: 'PAUSED_BY_OPERATOR',
  /** `schedule` is not an EventBridge Scheduler `rate(...)` or `cron(...)` expression; `details.problem` says why. */
  INVALID_SCHEDULE_EXPRESSION: 'INVALID_SCHEDULE_EXPRESSION',
  /** `timezone` is not an IANA time zone name the runtime knows. */
  UNKNOWN_TIMEZONE: 'UNKNOWN_TIMEZONE',
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
  /** A series' occurrences older than its catch-up window (after an outage or a quota refusal) were not delivered; `details.skipped` counts them. */
  OCCURRENCE_SKIPPED: 'OCCURRENCE_SKIPPED',
  /** A reschedule named a recurring series: only a cancel of the whole series applies to one yet. */
  SERIES_CHANGE_NOT_SUPPORTED: 'SERIES_CHANGE_NOT_SUPPORTED',
} as const;

export type ReasonCode = (typeof REASON)[keyof typeof REASON];

/** A failure attributable to the event itself, reported to the client; never retried. */
export class EventRejectedError extends Error {
  override readonly name = 'EventRejectedError';
  constructor(
    readonly reason: ReasonCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A failure of a dependency that may succeed later: the record is retried, not reported. */
export class TransientError extends Error {
  override readonly name = 'TransientError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
