import { EVENT_STATE, type EventRecord, type EventState } from '@adhoc-scheduler/shared';
import { fields, iso, table } from './format.js';

/** Payloads longer than this are cut in the human view (`--json` has them whole). */
const PAYLOAD_PREVIEW_CHARS = 80;

/** An event record for machines: every field, times as ISO 8601. */
export function eventJson(record: EventRecord): Record<string, unknown> {
  const time = (epochMs: number | undefined) => (epochMs === undefined ? undefined : iso(epochMs));
  return {
    ...record,
    dueAt: iso(record.dueAt),
    createdAt: iso(record.createdAt),
    queuedAt: time(record.queuedAt),
    heldAt: time(record.heldAt),
    rescheduledAt: time(record.rescheduledAt),
    emittedAt: time(record.emittedAt),
    failedAt: time(record.failedAt),
    cancelledAt: time(record.cancelledAt),
    // A held event has no expiry.
    expiresAt: Number.isFinite(record.expiresAt) ? iso(record.expiresAt * 1000) : undefined,
  };
}

function payloadPreview(record: EventRecord): string {
  const { payload } = record;
  // A near-path event's payload travels only in the delay queue.
  if (payload === undefined) return 'kept only in the delay queue';
  const bytes = `(${Buffer.byteLength(payload)} bytes)`;
  if (payload.length <= PAYLOAD_PREVIEW_CHARS) return `${JSON.stringify(payload)} ${bytes}`;
  return `${JSON.stringify(payload.slice(0, PAYLOAD_PREVIEW_CHARS))}... ${bytes}`;
}

/** One event's lifecycle, a line per field it has. */
export function eventText(record: EventRecord): string {
  const optional = (label: string, value: string | undefined): [string, string][] => (value === undefined ? [] : [[label, value]]);
  const time = (label: string, epochMs: number | undefined) => optional(label, epochMs === undefined ? undefined : iso(epochMs));
  return fields([
    ['event', record.id],
    ['tenant', record.tenant],
    ...optional('user', record.user),
    ['state', record.state],
    ['due', iso(record.dueAt)],
    ['version', String(record.version)],
    ['target', record.target],
    ...optional('failure topic', record.failureTopic),
    ...optional('client id', record.clientId),
    ...optional('labels', record.labels?.join(', ')),
    ...optional('input message', record.inputMessageId),
    ['payload', payloadPreview(record)],
    ...time('created', record.createdAt),
    ...time('queued', record.queuedAt),
    ...time('held', record.heldAt),
    ...time('rescheduled', record.rescheduledAt),
    ...time('emitted', record.emittedAt),
    ...time('failed', record.failedAt),
    ...time('cancelled', record.cancelledAt),
    ...optional('cancelled by', record.cancelledBy && `input message ${record.cancelledBy}`),
    ...optional('reason', record.reason),
    ...(Number.isFinite(record.expiresAt) ? time('kept until', record.expiresAt * 1000) : optional('kept until', 'no expiry while held')),
  ]);
}

/** When an event reached each state, for the listing's SINCE column. */
const REACHED: Readonly<Record<EventState, (record: EventRecord) => number | undefined>> = {
  [EVENT_STATE.scheduled]: (record) => record.rescheduledAt ?? record.createdAt,
  [EVENT_STATE.queued]: (record) => record.queuedAt,
  [EVENT_STATE.held]: (record) => record.heldAt,
  [EVENT_STATE.emitted]: (record) => record.emittedAt,
  [EVENT_STATE.failed]: (record) => record.failedAt,
  [EVENT_STATE.cancelled]: (record) => record.cancelledAt,
};

/** A page of events, one line each, in due order. */
export function eventsTable(records: readonly EventRecord[]): string {
  const header = ['DUE', 'EVENT ID', 'STATE', 'SINCE', 'CLIENT ID', 'USER', 'VERSION', 'LABELS'];
  const rows = records.map((record) => {
    const since = REACHED[record.state](record);
    return [
      iso(record.dueAt),
      record.id,
      record.state === EVENT_STATE.failed ? `failed (${record.reason ?? '-'})` : record.state,
      since === undefined ? '-' : iso(since),
      record.clientId ?? '-',
      record.user ?? '-',
      String(record.version),
      (record.labels ?? []).join(',') || '-',
    ];
  });
  return table([header, ...rows]);
}
