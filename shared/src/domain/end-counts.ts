import type { EmissionEnding } from './emission.js';

/**
 * Each tenant's ends counted by the minute they happened in: how many events were emitted and
 * failed, and the emitted ones by lateness (from the due time to the publish's answer). Every
 * event ends once, on either path and whatever the listing's setting, so these are the figures
 * the console's overview shows; the tenant index lists events, it does not count them.
 */

/** The span of one count: ends are counted by the minute of their time. */
export const END_COUNT_MINUTE_MS = 60_000;

/** Upper bounds of the lateness bins, in ms; the last bin takes the rest. */
export const LATENESS_BINS_MS = [10, 50, 100, 250, 500, 1000, 5000] as const;

/** A minute's ends of one tenant. `lateness[i]` counts the emitted ones in bin `i` of LATENESS_BINS_MS (the last: later still). */
export interface EndCounts {
  readonly emitted: number;
  readonly failed: number;
  readonly lateness: readonly number[];
}

/** What one write adds to a tenant's count of a minute. */
export interface EndCountIncrement {
  readonly tenant: string;
  /** Start of the minute, epoch ms. */
  readonly minute: number;
  readonly counts: EndCounts;
  /** The latest expiry (epoch seconds) of the records it counts: the count is kept as long as they are. */
  readonly expiresAt: number;
}

export const NO_ENDS: EndCounts = { emitted: 0, failed: 0, lateness: LATENESS_BINS_MS.map(() => 0).concat(0) };

/** The start of the minute holding `epochMs`. */
export function minuteOf(epochMs: number): number {
  return Math.floor(epochMs / END_COUNT_MINUTE_MS) * END_COUNT_MINUTE_MS;
}

/** The lateness bin of an emission `lateMs` after its due time (an early answer counts as on time). */
export function latenessBin(lateMs: number): number {
  const index = LATENESS_BINS_MS.findIndex((upper) => Math.max(0, lateMs) < upper);
  return index === -1 ? LATENESS_BINS_MS.length : index;
}

/** How a bin is named: `10 ms to 50 ms`, `5 s or more`. */
export function latenessBinLabel(index: number): string {
  const upper = LATENESS_BINS_MS[index];
  const lower = index === 0 ? 0 : (LATENESS_BINS_MS[index - 1] as number);
  const ms = (value: number) => (value >= 1000 ? `${value / 1000} s` : `${value} ms`);
  return upper === undefined ? `${ms(lower)} or more` : `${ms(lower)} to ${ms(upper)}`;
}

export function addEndCounts(a: EndCounts, b: EndCounts): EndCounts {
  return {
    emitted: a.emitted + b.emitted,
    failed: a.failed + b.failed,
    lateness: NO_ENDS.lateness.map((_, index) => (a.lateness[index] ?? 0) + (b.lateness[index] ?? 0)),
  };
}

/** The counts one end adds. */
function countOf(ending: EmissionEnding): EndCounts {
  if (ending.end.state === 'failed') return { ...NO_ENDS, failed: 1 };
  const lateness = [...NO_ENDS.lateness];
  const bin = latenessBin(ending.end.at - ending.event.dueAt);
  lateness[bin] = (lateness[bin] ?? 0) + 1;
  return { emitted: 1, failed: 0, lateness };
}

/**
 * The increments a set of recorded ends makes: one per tenant and minute, however many ends, so
 * that counting costs a write per tenant and minute of each end write, not one per event.
 */
export function endCountIncrements(endings: readonly EmissionEnding[]): EndCountIncrement[] {
  const increments = new Map<string, EndCountIncrement>();
  for (const ending of endings) {
    const { tenant } = ending.event;
    const minute = minuteOf(ending.end.at);
    const key = `${tenant}\n${minute}`;
    const before = increments.get(key);
    increments.set(key, {
      tenant,
      minute,
      counts: addEndCounts(before?.counts ?? NO_ENDS, countOf(ending)),
      expiresAt: Math.max(before?.expiresAt ?? 0, ending.expiresAt),
    });
  }
  return [...increments.values()];
}

/** The minutes the last hour's counts are read from, oldest first: the 60 that end with the current one. */
export function lastHourMinutes(now: number): number[] {
  const current = minuteOf(now);
  return Array.from({ length: 60 }, (_, index) => current - (59 - index) * END_COUNT_MINUTE_MS);
}
