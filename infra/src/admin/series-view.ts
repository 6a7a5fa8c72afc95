import { type PastOccurrence, type SeriesRecord, upcomingOccurrences } from '@adhoc-scheduler/shared';
import { fields, iso, table } from './format.js';

/** How many of a series' next occurrences `series show` lists. */
export const UPCOMING_SHOWN = 5;
/** How many of a series' last occurrences `series show` lists. */
export const PAST_SHOWN = 5;

/** An instant as ISO 8601 in a zone, with that zone's offset then: what the series' expression reads. */
export function zonedIso(epochMs: number, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(epochMs);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((each) => each.type === type)?.value ?? '';
  // "GMT+01:00", or "GMT" at UTC.
  const offset = part('timeZoneName').slice(3) || '+00:00';
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}.${part('fractionalSecond')}${offset}`;
}

/** What `series show` says of a series at `now`: how many came due, and the next ones in its zone and in UTC. */
function progress(record: SeriesRecord, now: number) {
  const upcoming = upcomingOccurrences(record, now, UPCOMING_SHOWN);
  const pending = upcoming.filter(({ materialised }) => materialised).length;
  return { fired: record.cursor.fired - pending, upcoming };
}

/** How late an occurrence was: milliseconds under a second, seconds under a minute, else hours, minutes and seconds. */
export function latenessText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(3)} s`;
  const seconds = Math.round(ms / 1000);
  const [hours, minutes] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60)];
  return `${hours > 0 ? `${hours} h ` : ''}${minutes} min ${seconds % 60} s`;
}

/** How a past occurrence went, in words: its event's state, when it was emitted and how late; or that there is no event. */
export function pastOutcomeText(past: PastOccurrence): string {
  const { event, latenessMs } = past;
  if (event === undefined) return 'not found (expired, or never made)';
  const moved = event.dueAt === past.dueAt ? '' : `, rescheduled to ${iso(event.dueAt)}`;
  if (event.emittedAt === undefined || latenessMs === undefined) return `${event.state}${moved}`;
  return `${event.state} at ${iso(event.emittedAt)}, late by ${latenessText(latenessMs)}${moved}`;
}

function pastJson(past: PastOccurrence, zone: string): Record<string, unknown> {
  const { event } = past;
  return {
    occurrence: past.occurrence,
    at: zonedIso(past.dueAt, zone),
    utc: iso(past.dueAt),
    eventId: past.eventId,
    state: event?.state ?? null,
    dueAt: event === undefined || event.dueAt === past.dueAt ? undefined : iso(event.dueAt),
    emittedAt: event?.emittedAt === undefined ? undefined : iso(event.emittedAt),
    latenessMs: past.latenessMs,
  };
}

/** A series for machines: its fields, times as ISO 8601, its count so far, its next occurrences and its last ones. */
export function seriesJson(record: SeriesRecord, now: number, past: readonly PastOccurrence[]): Record<string, unknown> {
  const { spec, ...rest } = record;
  const { fired, upcoming } = progress(record, now);
  return {
    ...rest,
    spec: {
      schedule: spec.expression.text,
      timezone: spec.timezone,
      start: iso(spec.start),
      end: spec.end === undefined ? undefined : iso(spec.end),
      count: spec.count,
      offsetMs: spec.offsetMs,
      dst: spec.dst,
    },
    dueAt: record.dueAt === undefined ? undefined : iso(record.dueAt),
    createdAt: iso(record.createdAt),
    expiresAt: iso(record.expiresAt * 1000),
    fired,
    next: upcoming.map(({ dueAt, occurrence, materialised }) => ({
      occurrence,
      at: zonedIso(dueAt, spec.timezone),
      utc: iso(dueAt),
      materialised,
    })),
    last: past.map((each) => pastJson(each, spec.timezone)),
  };
}

/** A series: a line per field, its next occurrences, each in its zone and in UTC, then its last ones and how they went. */
export function seriesText(record: SeriesRecord, now: number, past: readonly PastOccurrence[]): string {
  const { spec } = record;
  const optional = (label: string, value: string | undefined): [string, string][] => (value === undefined ? [] : [[label, value]]);
  const { fired, upcoming } = progress(record, now);
  return fields([
    ['series', record.id],
    ['tenant', record.tenant],
    ...optional('user', record.user),
    ['state', record.state],
    ['schedule', spec.expression.text],
    ['timezone', spec.timezone],
    ['start', iso(spec.start)],
    ...optional('end', spec.end === undefined ? undefined : iso(spec.end)),
    ...optional('count', spec.count === undefined ? undefined : String(spec.count)),
    ['offset', `${spec.offsetMs} ms`],
    ['dst', `gap ${spec.dst.gap}, overlap ${spec.dst.overlap}`],
    ['catch-up', `${record.catchUpMs / 1000} s`],
    ['target', record.target],
    ...optional('failure topic', record.failureTopic),
    ...optional('client id', record.clientId),
    ...optional('labels', record.labels?.join(', ')),
    ['fired', `${fired} (due by ${iso(now)}, those skipped by the catch-up window included)`],
    ...optional('cancelled by', record.cancelledBy),
    ...upcoming.map(({ dueAt, occurrence, materialised }): [string, string] => [
      `next #${occurrence}`,
      `${zonedIso(dueAt, spec.timezone)}  ${iso(dueAt)}${materialised ? '  (materialised)' : ''}`,
    ]),
    ...past.map((each): [string, string] => [
      `last #${each.occurrence}`,
      `${zonedIso(each.dueAt, spec.timezone)}  ${iso(each.dueAt)}  ${pastOutcomeText(each)}`,
    ]),
    ['kept until', iso(record.expiresAt * 1000)],
  ]);
}

/** The next occurrence of a series to come, in its zone and in UTC; none once it has ended. */
function nextOf(record: SeriesRecord, now: number) {
  const [next] = upcomingOccurrences(record, now, 1);
  return next === undefined
    ? undefined
    : { occurrence: next.occurrence, at: zonedIso(next.dueAt, record.spec.timezone), utc: iso(next.dueAt) };
}

/** A listed series for machines: what the listing shows of it. */
export function seriesSummaryJson(record: SeriesRecord, now: number): Record<string, unknown> {
  return {
    id: record.id,
    tenant: record.tenant,
    state: record.state,
    schedule: record.spec.expression.text,
    timezone: record.spec.timezone,
    clientId: record.clientId,
    labels: record.labels,
    next: nextOf(record, now) ?? null,
  };
}

/** A page of series, one line each, in the listing's order. */
export function seriesTable(records: readonly SeriesRecord[], now: number): string {
  const header = ['SERIES ID', 'STATE', 'SCHEDULE', 'TIMEZONE', 'NEXT (ZONE)', 'NEXT (UTC)', 'CLIENT ID', 'LABELS'];
  const rows = records.map((record) => {
    const next = nextOf(record, now);
    return [
      record.id,
      record.state,
      record.spec.expression.text,
      record.spec.timezone,
      next?.at ?? '-',
      next?.utc ?? '-',
      record.clientId ?? '-',
      (record.labels ?? []).join(',') || '-',
    ];
  });
  return table([header, ...rows]);
}
