import { toIso } from './dates.js';
import { emissionAttributes, snsMessageBytes, type ScheduledEvent } from './event.js';
import { SNS_MAX_MESSAGE_BYTES } from './limits.js';
import { EventRejectedError, REASON } from './reasons.js';
import { cursorAt, firstCursor, nextOccurrences } from './recurrence/occurrences.js';
import { checkRecurrence } from './recurrence/request.js';
import { type NewSeries, occurrenceEvent, seriesRequestHash } from './series.js';
import type { Tenant } from './tenants.js';
import type { ScheduleRequest } from './schedule-request.js';

/** The fields only a series takes: a request with `date` that gives one is refused. */
const SERIES_ONLY_FIELDS = ['timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'] as const;

/** Why a schedule request without `schedule`, or with `schedule` and `date`, is not a one-off event, if it is not. */
export function oneOffRefusal(fields: Readonly<Record<string, unknown>>): EventRejectedError | undefined {
  if (fields.date === undefined) return new EventRejectedError(REASON.MISSING_FIELD, 'required field "date" is missing', { field: 'date' });
  if (fields.schedule !== undefined)
    return new EventRejectedError(REASON.INVALID_FIELD, 'give "date" (one event) or "schedule" (a series), not both', {
      field: 'schedule',
    });
  const unexpected = SERIES_ONLY_FIELDS.find((field) => fields[field] !== undefined);
  if (unexpected === undefined) return undefined;
  return new EventRejectedError(
    REASON.INVALID_FIELD,
    `"${unexpected}" belongs to a recurring series: give it with "schedule", not "date"`,
    {
      field: unexpected,
    },
  );
}

/** What a series request is checked against: its tenant, when its client published it, and the default catch-up window. */
export interface SeriesScope {
  readonly tenant: Tenant;
  readonly now: number;
  /** A series without `start` starts then, and owes no occurrence due before; `now` when not given. */
  readonly publishedAt?: number;
  /** The maximum publish age (SchedulerConfig.emitMaxAgeSeconds), when the request gives no `catch_up_seconds`. */
  readonly defaultCatchUpSeconds: number;
}

/**
 * A recurring series: its fields checked by checkRecurrence (each refusal with its own code),
 * its payload sized with an occurrence's attributes. It owes no occurrence due before the
 * request was published: its cursor starts there. The series and its first occurrence, or why
 * it is refused.
 */
export function seriesRequest(
  request: ScheduleRequest,
  fields: Readonly<Record<string, unknown>>,
  id: string,
  scope: SeriesScope,
): { readonly series: NewSeries; readonly dueAt: number } | EventRejectedError {
  const publishedAt = scope.publishedAt ?? scope.now;
  const check = checkRecurrence(fields, publishedAt);
  if (!check.ok) return new EventRejectedError(check.refusal.reason, check.refusal.message, check.refusal.details);
  const { spec } = check;
  const cursor =
    spec.start >= publishedAt
      ? firstCursor(spec)
      : spec.count === undefined
        ? { after: publishedAt - 1, fired: 0 }
        : cursorAt(spec, publishedAt - 1);
  const [dueAt] = nextOccurrences(spec, cursor, 1);
  if (dueAt === undefined)
    return new EventRejectedError(
      REASON.SCHEDULE_NEVER_FIRES,
      `all ${spec.count} occurrences came before ${toIso(publishedAt)}: change count`,
      {
        field: 'count',
      },
    );
  const content = {
    ...(request.user !== undefined ? { user: request.user } : {}),
    target: request.target,
    failureTopic: request.failure_topic,
    ...(request.labels !== undefined && request.labels.length > 0 ? { labels: request.labels } : {}),
  };
  const series: NewSeries = {
    id,
    tenant: scope.tenant.id,
    ...content,
    payload: request.payload,
    spec,
    catchUpMs: (request.catch_up_seconds ?? scope.defaultCatchUpSeconds) * 1000,
    clientId: request.id,
    requestHash: seriesRequestHash(fields, { ...content, payload: request.payload }),
    cursor,
  };
  return payloadSizeRefusal(occurrenceEvent(series, request.payload, { dueAt, occurrence: Number.MAX_SAFE_INTEGER })) ?? { series, dueAt };
}

/** Why a payload cannot go out with its attributes in one SNS message, if it cannot. */
export function payloadSizeRefusal(event: ScheduledEvent): EventRejectedError | undefined {
  // The publish time is not known yet; its ISO string is as long as the due time's.
  const bytes = snsMessageBytes(event.payload, emissionAttributes(event, event.dueAt));
  if (bytes <= SNS_MAX_MESSAGE_BYTES) return undefined;
  return new EventRejectedError(
    REASON.PAYLOAD_TOO_LARGE,
    `payload and attributes take ${bytes} bytes; SNS takes at most ${SNS_MAX_MESSAGE_BYTES}`,
    {
      bytes,
      limit: SNS_MAX_MESSAGE_BYTES,
    },
  );
}
