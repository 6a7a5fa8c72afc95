import { type SeriesRecord, upcomingOccurrences } from '@adhoc-scheduler/shared';
import { fields, iso } from './format.js';

/** How many of a series' next occurrences `series show` lists. */
export const UPCOMING_SHOWN = 5;

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

/** A series for machines: its fields, times as ISO 8601, its count so far and its next occurrences. */
export function seriesJson(record: SeriesRecord, now: number): Record<string, unknown> {
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
  };
}

/** A series: a line per field, then its next occurrences, each in its zone and in UTC. */
export function seriesText(record: SeriesRecord, now: number): string {
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
    ['kept until', iso(record.expiresAt * 1000)],
  ]);
}
