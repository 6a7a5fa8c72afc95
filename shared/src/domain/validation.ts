import { Ajv, type ErrorObject } from 'ajv';
import schema from '../../schema/schedule-request.schema.json' with { type: 'json' };
import { SNS_MAX_MESSAGE_BYTES } from '../config.js';
import { parseDueDate } from './dates.js';
import { emissionAttributes, eventIdFor, snsMessageBytes, type ScheduledEvent } from './event.js';
import { EventRejectedError, REASON, type ReasonCode } from './reasons.js';

/** The request exactly as the original service took it, plus the optional idempotency key. */
export interface ScheduleRequest {
  readonly date: string;
  readonly target: string;
  readonly user: string;
  readonly payload: string;
  readonly failure_topic?: string;
  readonly id?: string;
}

export type ValidationResult =
  | { readonly accepted: true; readonly event: ScheduledEvent }
  | {
      readonly accepted: false;
      readonly error: EventRejectedError;
      /** Where to report it: only a failure topic that is itself a valid ARN. */
      readonly failureTopic: string | undefined;
      /** The offending input: parsed when it was JSON, raw text otherwise. */
      readonly input: unknown;
    };

const ajv = new Ajv({ allErrors: true, strict: true });
const validateSchema = ajv.compile<ScheduleRequest>(schema);
const validateFailureTopic = ajv.compile<string>(schema.properties.failure_topic);

const FIELD_REASONS: Readonly<Record<string, ReasonCode>> = {
  '/target': REASON.INVALID_TARGET,
  '/failure_topic': REASON.INVALID_FAILURE_TOPIC,
  '/date': REASON.INVALID_FIELD,
};

/** The first schema error as a reason code, in a fixed order: missing, then field by field. */
function rejectionFor(errors: readonly ErrorObject[]): EventRejectedError {
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing) {
    const field = String(missing.params.missingProperty);
    return new EventRejectedError(REASON.MISSING_FIELD, `required field "${field}" is missing`, { field });
  }
  const first = errors[0];
  const path = first?.instancePath ?? '';
  if (path === '') return new EventRejectedError(REASON.NOT_AN_OBJECT, 'the message must be a JSON object');
  const field = path.slice(1);
  const reason = first?.keyword === 'pattern' ? (FIELD_REASONS[path] ?? REASON.INVALID_FIELD) : REASON.INVALID_FIELD;
  const what = first?.keyword === 'pattern' ? 'is not an SNS topic ARN' : (first?.message ?? 'is invalid');
  return new EventRejectedError(reason, `field "${field}" ${what}`, { field });
}

function reject(error: EventRejectedError, input: unknown): ValidationResult {
  const candidate = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).failure_topic : undefined;
  const failureTopic = validateFailureTopic(candidate) ? candidate : undefined;
  return { accepted: false, error, failureTopic, input };
}

/**
 * Validates one input message (the text published to the input topic) and turns it into a
 * scheduled event. `inputMessageId` identifies the publish, so redeliveries map to one event.
 */
export function validateScheduleRequest(text: string, inputMessageId: string): ValidationResult {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    return reject(new EventRejectedError(REASON.INVALID_JSON, 'the message is not valid JSON'), text);
  }
  if (!validateSchema(input)) return reject(rejectionFor(validateSchema.errors ?? []), input);

  const dueAt = parseDueDate(input.date);
  if (dueAt === undefined) {
    return reject(
      new EventRejectedError(REASON.INVALID_DATE, `"${input.date}" is not an ISO-8601 date-time`, { field: 'date' }),
      input,
    );
  }
  const event: ScheduledEvent = {
    id: eventIdFor(input.user, input.id, inputMessageId),
    user: input.user,
    target: input.target,
    payload: input.payload,
    failureTopic: input.failure_topic,
    dueAt,
  };
  const bytes = snsMessageBytes(event.payload, emissionAttributes(event));
  if (bytes > SNS_MAX_MESSAGE_BYTES) {
    return reject(
      new EventRejectedError(
        REASON.PAYLOAD_TOO_LARGE,
        `payload and attributes take ${bytes} bytes; SNS takes at most ${SNS_MAX_MESSAGE_BYTES}`,
        { bytes, limit: SNS_MAX_MESSAGE_BYTES },
      ),
      input,
    );
  }
  return { accepted: true, event };
}
