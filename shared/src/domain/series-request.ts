import { toIso } from './dates.js';
import { emissionAttributes, snsMessageBytes, type ScheduledEvent } from './event.js';
import { SNS_MAX_MESSAGE_BYTES } from './limits.js';
import { EventRejectedError, REASON } from './reasons.js';
import { cursorAt, firstCursor, nextOccurrences } from './recurrence/occurrences.js';
import { checkRecurrence } from './recurrence/request.js';
import { type NewSeries, occurrenceEvent, type SeriesContent, seriesRequestHash } from './series.js';
import type { Tenant } from './tenants.js';
import type { ScheduleRequest } from './schedule-request.js';

/** The fields only a series takes: a request with `date` that gives one is refused. */
export const SERIES_ONLY_FIELDS = ['timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'] as const;

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

/** When and how often a series fires: its spec, its catch-up window, where it starts, and its first occurrence. */
export interface SeriesDefinition {
  readonly spec: NewSeries['spec'];
  readonly catchUpMs: number;
  readonly cursor: NewSeries['cursor'];
  readonly dueAt: number;
}

/**
 * A series' recurring fields, as a new series or a replacement gives them: checked by
 * checkRecurrence (each refusal with its own code). It owes no occurrence due before the request
 * was published: its cursor starts there.
 */
export function seriesDefinition(fields: Readonly<Record<string, unknown>>, scope: SeriesScope): SeriesDefinition | EventRejectedError {
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
  // The schema took catch_up_seconds as a whole number of seconds, at least 0.
  const catchUpSeconds = typeof fields.catch_up_seconds === 'number' ? fields.catch_up_seconds : scope.defaultCatchUpSeconds;
  return { spec, catchUpMs: catchUpSeconds * 1000, cursor, dueAt };
}

/**
 * A recurring series: its definition (seriesDefinition), its payload sized with an occurrence's
 * attributes. The series and its first occurrence, or why it is refused.
 */
export function seriesRequest(
  request: ScheduleRequest,
  fields: Readonly<Record<string, unknown>>,
  id: string,
  scope: SeriesScope,
): { readonly series: NewSeries; readonly dueAt: number } | EventRejectedError {
  const definition = seriesDefinition(fields, scope);
  if (definition instanceof EventRejectedError) return definition;
  const { spec, catchUpMs, cursor, dueAt } = definition;
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
    catchUpMs,
    clientId: request.id,
    requestHash: seriesRequestHash(fields, { ...content, payload: request.payload }),
    cursor,
  };
  return seriesPayloadRefusal(series, request.payload, dueAt) ?? { series, dueAt };
}

/** Why a series' payload cannot go out with an occurrence's attributes in one SNS message (its longest number), if it cannot. */
export function seriesPayloadRefusal(series: SeriesContent, payload: string, dueAt: number): EventRejectedError | undefined {
  return payloadSizeRefusal(occurrenceEvent(series, payload, { dueAt, occurrence: Number.MAX_SAFE_INTEGER }));
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
