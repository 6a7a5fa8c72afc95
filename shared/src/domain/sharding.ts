import { createHash } from 'node:crypto';

/**
 * How the table spreads events over the partitions of its index: each event in a shard (a hash
 * of its id; the keys themselves are in table-keys.ts). And the buckets of due time the loader
 * reads a round at a time.
 */
export interface BucketLayout {
  readonly bucketSeconds: number;
  readonly shardCount: number;
}

/** Start of the bucket holding `epochMs`, in epoch seconds. */
export function bucketOf(epochMs: number, layout: BucketLayout): number {
  const seconds = Math.floor(epochMs / 1000);
  return seconds - (((seconds % layout.bucketSeconds) + layout.bucketSeconds) % layout.bucketSeconds);
}

/** The shard an event lands in: stable for an id, spread evenly over ids. */
export function shardOf(eventId: string, layout: Pick<BucketLayout, 'shardCount'>): number {
  return createHash('sha256').update(eventId).digest().readUInt32BE(0) % layout.shardCount;
}

export interface BucketRange {
  /** The part of the bucket inside the requested range, epoch ms: [startMs, endMs). */
  readonly startMs: number;
  readonly endMs: number;
}

/** The buckets overlapping [fromMs, untilMs), oldest first, each clipped to the range. */
export function bucketsBetween(fromMs: number, untilMs: number, layout: BucketLayout): BucketRange[] {
  const ranges: BucketRange[] = [];
  if (untilMs <= fromMs) return ranges;
  for (let bucket = bucketOf(fromMs, layout); bucket * 1000 < untilMs; bucket += layout.bucketSeconds) {
    ranges.push({
      startMs: Math.max(fromMs, bucket * 1000),
      endMs: Math.min(untilMs, (bucket + layout.bucketSeconds) * 1000),
    });
  }
  return ranges;
}
