import { EventRejectedError, REASON } from './reasons.js';
import type { SeriesChange } from './series-changes.js';
import { SERIES_ONLY_FIELDS, type SeriesScope, seriesDefinition } from './series-request.js';
import { ID_PREFIX } from './table-keys.js';

/** What a change of a series may not change: a new series is scheduled for another target, labels, user or failure topic. */
const UNCHANGEABLE_FIELDS = ['target', 'labels'] as const;

/**
 * A control request that changes one series, or undefined when it changes none: a pause or resume
 * naming an id, or a reschedule that gives `schedule` or `payload` instead of `date`. Its fields
 * are checked as a series request's are, with the same reason codes; an occurrence's `o-` id is
 * refused (one occurrence is cancelled, not paused).
 */
export function seriesChangeOf(
  action: 'cancel' | 'reschedule' | 'pause' | 'resume',
  fields: Readonly<Record<string, unknown>>,
  eventId: string,
  scope: SeriesScope,
): SeriesChange | EventRejectedError | undefined {
  if (action === 'pause' || action === 'resume') {
    if (!eventId.startsWith(ID_PREFIX.occurrence))
      return action === 'pause' ? { kind: 'pause', note: stringField(fields.note) } : { kind: 'resume' };
    return new EventRejectedError(
      REASON.INVALID_FIELD,
      `${eventId} is one occurrence of a series: ${action} takes a whole series (its s- id); cancel or reschedule one occurrence`,
      { field: 'event_id' },
    );
  }
  if (action !== 'reschedule') return undefined;
  const orphan = fields.schedule === undefined ? SERIES_ONLY_FIELDS.find((field) => fields[field] !== undefined) : undefined;
  if (orphan !== undefined)
    return new EventRejectedError(REASON.INVALID_FIELD, `"${orphan}" replaces a series' schedule: give it with "schedule"`, {
      field: orphan,
    });
  if (fields.schedule === undefined && fields.payload === undefined) return undefined;
  const unchangeable = UNCHANGEABLE_FIELDS.find((field) => fields[field] !== undefined);
  if (unchangeable !== undefined)
    return new EventRejectedError(
      REASON.SERIES_CHANGE_NOT_SUPPORTED,
      `"${unchangeable}" of a series is not changed: cancel it and schedule a new one`,
      { field: unchangeable },
    );
  if (fields.date !== undefined)
    return new EventRejectedError(
      REASON.INVALID_FIELD,
      'give "date" (to move one event) or "schedule" or "payload" (to replace a series\'), not both',
      { field: 'date' },
    );
  if (fields.schedule === undefined) return { kind: 'replace', definition: undefined, payload: stringField(fields.payload) };
  const definition = seriesDefinition(fields, scope);
  if (definition instanceof EventRejectedError) return definition;
  return { kind: 'replace', definition, payload: stringField(fields.payload) };
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
