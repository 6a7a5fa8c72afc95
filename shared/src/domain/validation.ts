import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import controlSchema from '../../schema/control-request.schema.json' with { type: 'json' };
import scheduleSchema from '../../schema/schedule-request.schema.json' with { type: 'json' };
import { parseDueDate, toIso } from './dates.js';
import { eventIdFor, type ScheduledEvent } from './event.js';
import { EventRejectedError, REASON, type ReasonCode } from './reasons.js';
import type { NewSeries } from './series.js';
import type { ScheduleRequest } from './schedule-request.js';
import type { SeriesChange } from './series-changes.js';
import { seriesChangeOf } from './series-change-request.js';
import { oneOffRefusal, payloadSizeRefusal, seriesRequest } from './series-request.js';
import { isMessageEventId, isMessageSeriesId, seriesId } from './table-keys.js';
import { isSchedulerTopic, type SchedulerTopics } from './scheduler-topics.js';
import { mayPublishTo, PUBLIC_TENANT_ID, type Tenant } from './tenants.js';
import { topicPartition, topicRegion } from './topic-arn.js';
import { firstIllFormedString } from './unicode.js';
import { nestingDepth } from './nesting.js';

/** Cancels an event, or moves it to another date, by the client's id or the scheduler's; cancels the events with a label; or pauses or resumes the tenant. */
export interface ControlRequest {
  readonly action: 'cancel' | 'reschedule' | 'pause' | 'resume';
  readonly note?: string;
  readonly id?: string;
  readonly event_id?: string;
  readonly label?: string;
  readonly due_before?: string;
  readonly date?: string;
  readonly user?: string;
  readonly failure_topic?: string;
}

/** What an accepted input message asks for. */
export type InputRequest =
  | { readonly kind: 'schedule'; readonly event: ScheduledEvent; readonly clientId: string | undefined }
  /** A recurring series (see series.ts), starting after `cursor`, its first occurrence `dueAt`. */
  | { readonly kind: 'series'; readonly series: NewSeries; readonly dueAt: number }
  | { readonly kind: 'cancel'; readonly eventId: string }
  | { readonly kind: 'reschedule'; readonly eventId: string; readonly dueAt: number }
  /** Pauses, resumes or replaces one series (see series-changes.ts). */
  | { readonly kind: 'change-series'; readonly eventId: string; readonly change: SeriesChange }
  /** Cancels the tenant's events with the label (due before `dueBefore`, when given). */
  | { readonly kind: 'bulk-cancel'; readonly label: string; readonly dueBefore: number | undefined }
  /** Holds the tenant's events as they come due, until it resumes. */
  | { readonly kind: 'pause'; readonly note: string | undefined }
  /** Sends the events held during a pause, and emits the others as they come due. */
  | { readonly kind: 'resume' };

export type ParseResult =
  | {
      readonly accepted: true;
      readonly request: InputRequest;
      /** Where a later refusal of this request is reported: the tenant's own failure topic, if any. */
      readonly failureTopic: string | undefined;
      /** The request as parsed, quoted in a later refusal. */
      readonly input: unknown;
    }
  | {
      readonly accepted: false;
      readonly error: EventRejectedError;
      /** Where to report it: only a failure topic that is a valid ARN the tenant may publish to. */
      readonly failureTopic: string | undefined;
      /** The offending input: parsed when it was JSON, raw text otherwise. */
      readonly input: unknown;
    };

/** What bounds a request: whose topic it arrived on, the topics it may name, and the dates it may give. */
export interface InputScope {
  readonly tenant: Tenant;
  readonly region: string;
  /** The scheduler's partition (`aws`, `aws-cn`, ...), where its region is: SNS publishes to no other. */
  readonly partition: string;
  /** Never a target or failure topic. */
  readonly schedulerTopics: SchedulerTopics;
  /** When the request is handled, epoch ms. */
  readonly now: number;
  /** A due date further ahead of `now` than this is refused. */
  readonly maxScheduleAheadSeconds: number;
  /**
   * When the client published the request (SNS's Timestamp), the same at every delivery: a series
   * without `start` starts then, and owes no occurrence due before. `now` when not given.
   */
  readonly publishedAt?: number;
  /** A series' catch-up window when its request gives none: the maximum publish age (SchedulerConfig.emitMaxAgeSeconds). */
  readonly defaultCatchUpSeconds: number;
}

/**
 * Deepest nesting of arrays and objects a message may have. A request is flat; a message nested
 * thousands deep parses, but quoting it in a failure notice would overflow the stack.
 */
export const MAX_NESTING_DEPTH = 64;

const ajv = new Ajv({ allErrors: true, strict: true });
const validateSchedule = ajv.compile<ScheduleRequest>(scheduleSchema);
/** The same, for a tenant that does not require `user` (Tenant.requireUser). */
const validateScheduleWithoutUser = ajv.compile<ScheduleRequest>({
  ...scheduleSchema,
  $id: `${scheduleSchema.$id}#without-user`,
  required: scheduleSchema.required.filter((field) => field !== 'user'),
});
const validateControl = ajv.compile<ControlRequest>(controlSchema);
const validateTopicArn = ajv.compile<string>(scheduleSchema.properties.failure_topic);
const validateLabel = ajv.compile<string>(controlSchema.properties.label);

/** Whether a text is a label as requests give them (the control request's schema says what one is). */
export function isLabel(text: unknown): text is string {
  return validateLabel(text);
}

const NOT_A_TOPIC = 'is not an SNS topic ARN';
// Text shown to operators as it came (user, id, note) holds no control character: none can drive their terminal.
const CONTROL = { reason: REASON.CONTROL_CHARACTER, what: 'holds a control character (U+0000 to U+001F, U+007F to U+009F)' };

/** The fields whose schema pattern has a reason code of its own, and what the refusal says. */
const PATTERN_REASONS: Readonly<Record<string, { readonly reason: ReasonCode; readonly what: string }>> = {
  '/target': { reason: REASON.INVALID_TARGET, what: NOT_A_TOPIC },
  '/failure_topic': { reason: REASON.INVALID_FAILURE_TOPIC, what: NOT_A_TOPIC },
  '/user': CONTROL,
  '/id': CONTROL,
  '/note': CONTROL,
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
  // A field's parts (a label: `/labels/2`) are reported as the field.
  const field = path.slice(1).split('/')[0] ?? '';
  const pattern = first?.keyword === 'pattern' ? PATTERN_REASONS[path] : undefined;
  const what = pattern?.what ?? first?.message ?? 'is invalid';
  return new EventRejectedError(pattern?.reason ?? REASON.INVALID_FIELD, `field "${field}" ${what}`, { field });
}

/** The failure topic named in an input, when the tenant may be told there (never one of the scheduler's own). */
function ownFailureTopic(input: unknown, scope: InputScope): string | undefined {
  const candidate = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).failure_topic : undefined;
  return validateTopicArn(candidate) && topicRefusal(candidate, 'failure_topic', scope) === undefined ? candidate : undefined;
}

function reject(error: EventRejectedError, input: unknown, scope: InputScope): ParseResult {
  return { accepted: false, error, failureTopic: ownFailureTopic(input, scope), input };
}

function checked<T>(validate: ValidateFunction<T>, input: unknown): { ok: true; value: T } | { ok: false; error: EventRejectedError } {
  return validate(input) ? { ok: true, value: input } : { ok: false, error: rejectionFor(validate.errors ?? []) };
}

/** The due date of a schedule or reschedule request, or why it is refused: not a date, or too far ahead. */
function dueDate(text: string, scope: InputScope): number | EventRejectedError {
  const dueAt = parseDueDate(text);
  if (dueAt === undefined) return new EventRejectedError(REASON.INVALID_DATE, `"${text}" is not an ISO-8601 date-time`, { field: 'date' });
  const limit = scope.maxScheduleAheadSeconds;
  const latest = scope.now + limit * 1000;
  if (dueAt <= latest) return dueAt;
  return new EventRejectedError(
    REASON.DATE_TOO_FAR,
    `"${text}" is more than ${limit} s ahead: the latest date taken now is ${toIso(latest)}`,
    {
      field: 'date',
      limit,
      latest: toIso(latest),
    },
  );
}

/** Why the scheduler may not publish to a topic the request names, if it may not. */
function topicRefusal(topicArn: string, field: 'target' | 'failure_topic', scope: InputScope): EventRejectedError | undefined {
  const isTarget = field === 'target';
  if (isSchedulerTopic(topicArn, scope.schedulerTopics)) {
    return isTarget
      ? new EventRejectedError(REASON.TARGET_IS_SCHEDULER_TOPIC, `${topicArn} is one of the scheduler's own topics: it is never a target`, {
          field,
        })
      : new EventRejectedError(
          REASON.FAILURE_TOPIC_IS_SCHEDULER_TOPIC,
          `${topicArn} is one of the scheduler's own topics: it is never a failure topic`,
          {
            field,
          },
        );
  }
  if (!mayPublishTo(scope.tenant, topicArn)) {
    return isTarget
      ? new EventRejectedError(REASON.TARGET_NOT_ALLOWED, `tenant "${scope.tenant.id}" may not target ${topicArn}`, { field })
      : new EventRejectedError(REASON.FAILURE_TOPIC_NOT_ALLOWED, `tenant "${scope.tenant.id}" may not use ${topicArn} as failure topic`, {
          field,
        });
  }
  const region = topicRegion(topicArn);
  const partition = topicPartition(topicArn);
  if (region === scope.region && partition === scope.partition) return undefined;
  const reason = isTarget ? REASON.TARGET_IN_OTHER_REGION : REASON.FAILURE_TOPIC_IN_OTHER_REGION;
  const details = { field, region, schedulerRegion: scope.region };
  if (partition === scope.partition)
    return new EventRejectedError(
      reason,
      `${field} ${topicArn} is in ${region}: the scheduler publishes only to topics in ${scope.region}`,
      details,
    );
  // A region is in one partition only: such a topic is in none of the scheduler's regions, whatever its region's name.
  return new EventRejectedError(
    reason,
    `${field} ${topicArn} is in partition ${partition}: the scheduler publishes only to topics of ${scope.partition} in ${scope.region}`,
    {
      ...details,
      partition,
      schedulerPartition: scope.partition,
    },
  );
}

function parseSchedule(input: unknown, inputMessageId: string, scope: InputScope): ParseResult {
  const { tenant } = scope;
  const result = checked(tenant.requireUser ? validateSchedule : validateScheduleWithoutUser, input);
  if (!result.ok) return reject(result.error, input, scope);
  const request = result.value;
  if (request.schedule !== undefined && request.date === undefined)
    return parseSeries(request, input as Record<string, unknown>, inputMessageId, scope);
  const notOneOff = oneOffRefusal(input as Record<string, unknown>);
  if (notOneOff !== undefined) return reject(notOneOff, input, scope);
  // oneOffRefusal refuses a request without a date.
  const dueAt = dueDate(request.date as string, scope);
  if (dueAt instanceof EventRejectedError) return reject(dueAt, input, scope);
  const topicError = topicsRefusal(request, scope);
  if (topicError !== undefined) return reject(topicError, input, scope);
  const event: ScheduledEvent = {
    // Without a user, the public tenant's ids are kept apart by none: the key is the tenant's.
    id: eventIdFor(tenant.id, request.user ?? '', request.id, inputMessageId),
    tenant: tenant.id,
    ...(request.user !== undefined ? { user: request.user } : {}),
    target: request.target,
    payload: request.payload,
    failureTopic: request.failure_topic,
    dueAt,
    version: 1,
    ...(request.labels !== undefined && request.labels.length > 0 ? { labels: request.labels } : {}),
  };
  const sizeError = payloadSizeRefusal(event);
  if (sizeError !== undefined) return reject(sizeError, input, scope);
  return { accepted: true, request: { kind: 'schedule', event, clientId: request.id }, failureTopic: ownFailureTopic(input, scope), input };
}

/** Why the scheduler may not publish to a request's topics, if it may not: the target's and the failure topic's rules. */
function topicsRefusal(request: ScheduleRequest, scope: InputScope): EventRejectedError | undefined {
  return (
    (request.failure_topic === undefined ? undefined : topicRefusal(request.failure_topic, 'failure_topic', scope)) ??
    topicRefusal(request.target, 'target', scope)
  );
}

/** A recurring series (see series-request.ts), its topics checked as a one-off's. */
function parseSeries(request: ScheduleRequest, input: Record<string, unknown>, inputMessageId: string, scope: InputScope): ParseResult {
  const id = seriesId(eventIdFor(scope.tenant.id, request.user ?? '', request.id, inputMessageId));
  const parsed = seriesRequest(request, input, id, scope);
  if (parsed instanceof EventRejectedError) return reject(parsed, input, scope);
  const topicError = topicsRefusal(request, scope);
  if (topicError !== undefined) return reject(topicError, input, scope);
  return { accepted: true, request: { kind: 'series', ...parsed }, failureTopic: ownFailureTopic(input, scope), input };
}

/**
 * On the shared topic nothing proves who published a message, and a `c-` id is a hash of the
 * self-declared user and id, which anyone can compute: only the `m-` id, the MessageId SNS
 * returned to the original publish (random, known to its publisher alone), names an event there,
 * and `s-m-` a series. Not an occurrence's `o-` id: every delivery of the series carries one, and
 * from one the ids of the next follow (the series' hash and a due time).
 */
function publicControlRefusal(request: ControlRequest): EventRejectedError | undefined {
  if (request.event_id !== undefined && (isMessageEventId(request.event_id) || isMessageSeriesId(request.event_id))) return undefined;
  return new EventRejectedError(
    REASON.CONTROL_NOT_ALLOWED,
    'on the shared input topic, name the event by its event_id "m-<MessageId>", or a series by "s-m-<MessageId>": the MessageId SNS returned for the schedule request',
    { field: request.id !== undefined ? 'id' : 'event_id', use: 'event_id' },
  );
}

/**
 * A cancel by label: the tenant's own events with it, so only on its own topic (on the shared one,
 * whoever publishes is the public tenant, and a label names nobody's events in particular).
 */
function parseBulkCancel(request: ControlRequest & { readonly label: string }, input: unknown, scope: InputScope): ParseResult {
  const invalid = (field: string, message: string) =>
    reject(new EventRejectedError(REASON.INVALID_FIELD, message, { field }), input, scope);
  if (request.action !== 'cancel') return invalid('label', 'a label names the events a cancel cancels; a reschedule names one event');
  if (request.id !== undefined || request.event_id !== undefined)
    return invalid(request.id !== undefined ? 'id' : 'event_id', 'give "label" or the event ("id" or "event_id"), not both');
  if (scope.tenant.id === PUBLIC_TENANT_ID) {
    const refusal = new EventRejectedError(
      REASON.CONTROL_NOT_ALLOWED,
      "a cancel by label is taken on a registered tenant's own input topic only, not on the shared one",
      { field: 'label' },
    );
    return reject(refusal, input, scope);
  }
  let dueBefore: number | undefined;
  if (request.due_before !== undefined) {
    dueBefore = parseDueDate(request.due_before);
    if (dueBefore === undefined)
      return reject(
        new EventRejectedError(REASON.INVALID_DATE, `"${request.due_before}" is not an ISO-8601 date-time`, { field: 'due_before' }),
        input,
        scope,
      );
  }
  return {
    accepted: true,
    request: { kind: 'bulk-cancel', label: request.label, dueBefore },
    failureTopic: ownFailureTopic(input, scope),
    input,
  };
}

function parseControl(input: unknown, scope: InputScope): ParseResult {
  const { tenant } = scope;
  const result = checked(validateControl, input);
  if (!result.ok) return reject(result.error, input, scope);
  const request = result.value;
  const { label } = request;
  if (label !== undefined) return parseBulkCancel({ ...request, label }, input, scope);
  if (request.due_before !== undefined)
    return reject(
      new EventRejectedError(REASON.INVALID_FIELD, '"due_before" bounds a cancel by label: give "label" with it', { field: 'due_before' }),
      input,
      scope,
    );
  const missing = (field: string) =>
    reject(new EventRejectedError(REASON.MISSING_FIELD, `required field "${field}" is missing`, { field }), input, scope);
  const namesOne = request.id !== undefined || request.event_id !== undefined;
  if ((request.action === 'pause' || request.action === 'resume') && !namesOne) {
    // Nothing proves who published on the shared topic: nobody may pause the public tenant from there.
    if (tenant.id === PUBLIC_TENANT_ID) {
      const error = new EventRejectedError(REASON.CONTROL_NOT_ALLOWED, `${request.action} is taken only on a tenant's own input topic`, {
        field: 'action',
      });
      return reject(error, input, scope);
    }
    const failureTopic = ownFailureTopic(input, scope);
    const paused: InputRequest = request.action === 'pause' ? { kind: 'pause', note: request.note } : { kind: 'resume' };
    return { accepted: true, request: paused, failureTopic, input };
  }
  if ((request.id === undefined) === (request.event_id === undefined)) {
    if (request.id === undefined) return missing('id');
    return reject(new EventRejectedError(REASON.INVALID_FIELD, 'give "id" or "event_id", not both', { field: 'event_id' }), input, scope);
  }
  const refusal = tenant.id === PUBLIC_TENANT_ID ? publicControlRefusal(request) : undefined;
  if (refusal !== undefined) return reject(refusal, input, scope);
  const eventId = request.event_id ?? eventIdFor(tenant.id, request.user ?? '', request.id, '');
  const failureTopic = ownFailureTopic(input, scope);
  if (request.action === 'cancel') return { accepted: true, request: { kind: 'cancel', eventId }, failureTopic, input };
  const change = seriesChangeOf(request.action, input as Record<string, unknown>, eventId, scope);
  if (change instanceof EventRejectedError) return reject(change, input, scope);
  if (change !== undefined) return { accepted: true, request: { kind: 'change-series', eventId, change }, failureTopic, input };
  if (request.date === undefined) return missing('date');
  const dueAt = dueDate(request.date, scope);
  if (dueAt instanceof EventRejectedError) return reject(dueAt, input, scope);
  return { accepted: true, request: { kind: 'reschedule', eventId, dueAt }, failureTopic, input };
}

/**
 * Parses one input message (the text published to a tenant's input topic) into what it asks
 * for. `inputMessageId` identifies the publish, so redeliveries map to one event; the scope's
 * tenant is whose topic it arrived on, and with the region bounds which topics it may name.
 */
export function parseInputMessage(text: string, inputMessageId: string, scope: InputScope): ParseResult {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    return reject(new EventRejectedError(REASON.INVALID_JSON, 'the message is not valid JSON'), text, scope);
  }
  const depth = nestingDepth(text);
  if (depth > MAX_NESTING_DEPTH) {
    const error = new EventRejectedError(
      REASON.TOO_DEEPLY_NESTED,
      `the message nests ${depth} deep; at most ${MAX_NESTING_DEPTH} is taken`,
      {
        depth,
        limit: MAX_NESTING_DEPTH,
      },
    );
    // Quoted as text: the parsed value is what cannot be serialized again.
    return { accepted: false, error, failureTopic: ownFailureTopic(input, scope), input: text };
  }
  const illFormed = firstIllFormedString(input);
  if (illFormed !== undefined) {
    const what = illFormed.inKey ? 'the key' : 'field';
    const error = new EventRejectedError(
      REASON.INVALID_UNICODE,
      `${what} "${illFormed.path}" is not well-formed Unicode: it holds a lone UTF-16 surrogate`,
      {
        field: illFormed.path,
      },
    );
    return reject(error, input, scope);
  }
  const action = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).action : undefined;
  if (action === 'cancel' || action === 'reschedule' || action === 'pause' || action === 'resume') return parseControl(input, scope);
  return parseSchedule(input, inputMessageId, scope);
}
