import { describe, expect, it } from 'vitest';
import type { EmissionEnding } from '../src/domain/emission.js';
import {
  addEndCounts,
  END_COUNT_MINUTE_MS,
  endCountIncrements,
  lastHourMinutes,
  latenessBin,
  latenessBinLabel,
  LATENESS_BINS_MS,
  minuteOf,
  NO_ENDS,
} from '../src/domain/end-counts.js';

const MINUTE = Date.parse('2026-11-25T09:00:00.000Z');

function ending(tenant: string, dueAt: number, end: EmissionEnding['end'], expiresAt = 100): EmissionEnding {
  return { event: { id: `${tenant}-${dueAt}-${end.at}`, tenant, version: 1, dueAt }, end, expiresAt, endedBy: 'delivery' };
}

/** Lateness counts with `count` in bin `bin`, zeros elsewhere. */
function bins(...counts: [bin: number, count: number][]): number[] {
  const lateness = LATENESS_BINS_MS.map(() => 0).concat(0);
  for (const [bin, count] of counts) lateness[bin] = count;
  return lateness;
}

describe("the ends' counts", () => {
  it('put an emission in the bin its lateness falls in, an early answer in the first, and past the last bound in the last', () => {
    expect(latenessBin(0)).toBe(0);
    expect(latenessBin(-5)).toBe(0);
    expect(latenessBin(9)).toBe(0);
    expect(latenessBin(10)).toBe(1);
    expect(latenessBin(4999)).toBe(LATENESS_BINS_MS.length - 1);
    expect(latenessBin(5000)).toBe(LATENESS_BINS_MS.length);
    expect(latenessBinLabel(0)).toBe('0 ms to 10 ms');
    expect(latenessBinLabel(5)).toBe('500 ms to 1 s');
    expect(latenessBinLabel(LATENESS_BINS_MS.length)).toBe('5 s or more');
  });

  it('make one increment per tenant and minute of the ends, however many ends, with the latest expiry among them', () => {
    const increments = endCountIncrements([
      ending('acme', MINUTE + 1000, { state: 'emitted', at: MINUTE + 1004 }, 200),
      ending('acme', MINUTE + 2000, { state: 'emitted', at: MINUTE + 2060 }, 300),
      ending('acme', MINUTE + 3000, { state: 'failed', at: MINUTE + 3001, reason: 'TARGET_NOT_FOUND' }, 250),
      ending('acme', MINUTE + 59_990, { state: 'emitted', at: MINUTE + 60_010 }, 400),
      ending('globex', MINUTE + 1000, { state: 'emitted', at: MINUTE + 7000 }, 200),
    ]);
    expect(increments).toEqual([
      { tenant: 'acme', minute: MINUTE, counts: { emitted: 2, failed: 1, lateness: bins([0, 1], [2, 1]) }, expiresAt: 300 },
      { tenant: 'acme', minute: MINUTE + END_COUNT_MINUTE_MS, counts: { emitted: 1, failed: 0, lateness: bins([1, 1]) }, expiresAt: 400 },
      { tenant: 'globex', minute: MINUTE, counts: { emitted: 1, failed: 0, lateness: bins([LATENESS_BINS_MS.length, 1]) }, expiresAt: 200 },
    ]);
    expect(endCountIncrements([])).toEqual([]);
  });

  it('add up bin by bin', () => {
    const a = { emitted: 2, failed: 1, lateness: bins([0, 2]) };
    const b = { emitted: 3, failed: 0, lateness: bins([0, 1], [7, 2]) };
    expect(addEndCounts(a, b)).toEqual({ emitted: 5, failed: 1, lateness: bins([0, 3], [7, 2]) });
    expect(addEndCounts(NO_ENDS, a)).toEqual(a);
  });

  it('read the last hour from the 60 minutes that end with the current one', () => {
    const minutes = lastHourMinutes(MINUTE + 30_000);
    expect(minutes).toHaveLength(60);
    expect(minutes.at(-1)).toBe(MINUTE);
    expect(minutes[0]).toBe(MINUTE - 59 * END_COUNT_MINUTE_MS);
    expect(minuteOf(MINUTE + END_COUNT_MINUTE_MS - 1)).toBe(MINUTE);
  });
});
