// A zone's offset from UTC at an instant, and the instants where it changes, read from the
// tz database the runtime ships (through Intl): no table of our own to fall behind tzdata.

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/**
 * The zone's canonical IANA name, or undefined when the runtime does not know it. An offset
 * (`+05:00`), which Intl also takes, is not a zone: it has no daylight-saving rule to follow.
 */
export function canonicalZone(name: string): string | undefined {
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    return /^[+-]/.test(resolved) ? undefined : resolved;
  } catch {
    return undefined;
  }
}

/** Milliseconds to add to an instant to read the zone's wall clock (negative west of UTC). */
export function offsetAt(zone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatIn(zone).formatToParts(instant)) parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day, parts.hour, parts.minute, parts.second);
  // The wall clock shows whole seconds; the instant's own milliseconds are not part of the offset.
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

/**
 * How far apart two changes of one zone's offset are at least. The walk below samples the offset
 * this often, so a change and its reversal closer together than this would go unseen; no zone
 * of the tz database since 1970 has had two within a week (the Temporal proposal's reference
 * implementation samples every two weeks on the same ground).
 */
const SAMPLE_MS = 7 * 24 * 3_600_000;

/**
 * The first instant in (from, to] at which the zone's offset differs from `offset`, its offset
 * at `from`, or undefined when it keeps it throughout.
 */
export function nextChange(zone: string, from: number, to: number, offset: number = offsetAt(zone, from)): number | undefined {
  let before = from;
  while (before < to) {
    const probe = Math.min(before + SAMPLE_MS, to);
    if (offsetAt(zone, probe) !== offset) return firstDiffering(zone, before, probe, offset);
    before = probe;
  }
  return undefined;
}

/**
 * The last instant in [to - SAMPLE_MS, to] at which the zone's offset changed, or undefined
 * when it did not change in that time.
 */
export function previousChange(zone: string, to: number): number | undefined {
  const from = to - SAMPLE_MS;
  const offset = offsetAt(zone, from);
  if (offsetAt(zone, to) === offset) return undefined;
  return firstDiffering(zone, from, to, offset);
}

/** Bisects (same, differing] down to the millisecond where the offset stops being `offset`. */
function firstDiffering(zone: string, same: number, differing: number, offset: number): number {
  let low = same;
  let high = differing;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(zone, middle) === offset) low = middle;
    else high = middle;
  }
  return high;
}
