import { EVENT_STATE, type EventRecord, type LifecycleStep, lifecycleSteps, reachedAt } from '@adhoc-scheduler/shared';
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
    resentAt: time(record.resentAt),
    loadedAt: time(record.loadedAt),
    sweptAt: time(record.sweptAt),
    heldAt: time(record.heldAt),
    resumedAt: time(record.resumedAt),
    rescheduledAt: time(record.rescheduledAt),
    carriedAt: time(record.carriedAt),
    carriedToTableAt: time(record.carriedToTableAt),
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

/** A lifecycle step as its line's value: when, who, what. */
export function stepText(step: LifecycleStep): string {
  return `${iso(step.at)}  by ${step.by}${step.detail === undefined ? '' : `: ${step.detail}`}`;
}

/** One event: a line per field it has, then a line per step of its lifecycle, in the order they happened. */
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
    ...lifecycleSteps(record).map((step): [string, string] => [step.step, stepText(step)]),
    ...optional('reason', record.reason),
    ...(Number.isFinite(record.expiresAt) ? time('kept until', record.expiresAt * 1000) : optional('kept until', 'no expiry while held')),
  ]);
}

/** A page of events, one line each, in due order. */
export function eventsTable(records: readonly EventRecord[]): string {
  const header = ['DUE', 'EVENT ID', 'STATE', 'SINCE', 'CLIENT ID', 'USER', 'VERSION', 'LABELS'];
  const rows = records.map((record) => {
    return [
      iso(record.dueAt),
      record.id,
      record.state === EVENT_STATE.failed ? `failed (${record.reason ?? '-'})` : record.state,
      iso(reachedAt(record)),
      record.clientId ?? '-',
      record.user ?? '-',
      String(record.version),
      (record.labels ?? []).join(',') || '-',
    ];
  });
  return table([header, ...rows]);
}
