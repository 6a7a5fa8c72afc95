import { describe, expect, it } from 'vitest';
import { bucketOf, bucketsBetween, shardOf, type BucketLayout } from '../src/domain/sharding.js';

const layout: BucketLayout = { bucketSeconds: 60, shardCount: 8 };
/** 2030-06-15T12:30:00Z, the start of a one-minute bucket. */
const MINUTE_START_MS = Date.UTC(2030, 5, 15, 12, 30);
const MINUTE_START_S = MINUTE_START_MS / 1000;

const eventIds = (count: number): string[] => Array.from({ length: count }, (_, i) => `c-event-${i}`);

describe('bucketOf', () => {
  it('puts the first millisecond of a bucket in that bucket', () => {
    expect(bucketOf(MINUTE_START_MS, layout)).toBe(MINUTE_START_S);
  });

  it('puts the last millisecond of a bucket in that bucket, and the next one in the next', () => {
    expect(bucketOf(MINUTE_START_MS + 59_999, layout)).toBe(MINUTE_START_S);
    expect(bucketOf(MINUTE_START_MS + 60_000, layout)).toBe(MINUTE_START_S + 60);
  });

  it('puts the millisecond before a bucket in the previous one', () => {
    expect(bucketOf(MINUTE_START_MS - 1, layout)).toBe(MINUTE_START_S - 60);
  });

  it('aligns buckets of other widths on multiples of their width', () => {
    const fiveMinutes = { ...layout, bucketSeconds: 300 };
    expect(bucketOf(MINUTE_START_MS + 4 * 60_000 + 59_999, fiveMinutes)).toBe(MINUTE_START_S);
    expect(bucketOf(MINUTE_START_MS + 5 * 60_000, fiveMinutes)).toBe(MINUTE_START_S + 300);
  });
});

describe('shardOf', () => {
  it('gives the same shard for the same id every time', () => {
    for (const id of eventIds(50)) expect(shardOf(id, layout)).toBe(shardOf(id, { ...layout }));
  });

  it('stays within the shard count', () => {
    for (const shardCount of [1, 3, 8, 256]) {
      for (const id of eventIds(500)) {
        const shard = shardOf(id, { ...layout, shardCount });
        expect(Number.isInteger(shard) && shard >= 0 && shard < shardCount).toBe(true);
      }
    }
  });

  it('spreads many ids roughly evenly over the shards', () => {
    const counts = new Array<number>(layout.shardCount).fill(0);
    const ids = eventIds(16_000);
    for (const id of ids) {
      const shard = shardOf(id, layout);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    const expected = ids.length / layout.shardCount;
    for (const count of counts) expect(Math.abs(count - expected) / expected).toBeLessThan(0.1);
  });
});

describe('bucketsBetween', () => {
  it('lists the overlapping buckets oldest first, clipping the first and the last to the range', () => {
    const from = MINUTE_START_MS + 15_000;
    const until = MINUTE_START_MS + 2 * 60_000 + 45_000;
    expect(bucketsBetween(from, until, layout)).toEqual([
      { startMs: from, endMs: MINUTE_START_MS + 60_000 },
      { startMs: MINUTE_START_MS + 60_000, endMs: MINUTE_START_MS + 120_000 },
      { startMs: MINUTE_START_MS + 120_000, endMs: until },
    ]);
  });

  it('covers the range without gaps or overlaps', () => {
    const from = MINUTE_START_MS - 7_321;
    const until = MINUTE_START_MS + 10 * 60_000 + 123;
    const ranges = bucketsBetween(from, until, layout);
    expect(ranges[0]?.startMs).toBe(from);
    expect(ranges.at(-1)?.endMs).toBe(until);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]?.startMs).toBe(ranges[i - 1]?.endMs);
  });

  it('adds no empty bucket when the range ends on a bucket boundary', () => {
    const ranges = bucketsBetween(MINUTE_START_MS, MINUTE_START_MS + 120_000, layout);
    expect(ranges.map((range) => range.startMs)).toEqual([MINUTE_START_MS, MINUTE_START_MS + 60_000]);
  });

  it('lists one clipped bucket for a range inside one bucket', () => {
    expect(bucketsBetween(MINUTE_START_MS + 1_000, MINUTE_START_MS + 2_000, layout)).toEqual([
      { startMs: MINUTE_START_MS + 1_000, endMs: MINUTE_START_MS + 2_000 },
    ]);
  });

  it('lists nothing for an empty or inverted range', () => {
    expect(bucketsBetween(MINUTE_START_MS + 5_000, MINUTE_START_MS + 5_000, layout)).toEqual([]);
    expect(bucketsBetween(MINUTE_START_MS + 5_000, MINUTE_START_MS, layout)).toEqual([]);
  });
});
