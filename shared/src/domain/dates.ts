// ISO-8601 date-time as the original service took it: a date, an optional time with optional
// fraction, and an optional `Z` or offset. No offset means UTC.
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Parses a due date to epoch milliseconds, or undefined when it is not a valid ISO-8601 date-time. */
export function parseDueDate(text: string): number | undefined {
  const match = ISO_DATE_TIME.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  // Sub-millisecond digits are dropped: emission is precise to the millisecond.
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const offset = offsetMinutes(zone);
  if (offset === undefined) return undefined;
  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  // 31 February would roll over into March; a real date survives the round trip.
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return undefined;
  return date.getTime() - offset * 60_000;
}

/** Minutes east of UTC, or undefined when the offset is out of range (hours 0-23, minutes 0-59). */
function offsetMinutes(zone: string): number | undefined {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

export function toIso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
