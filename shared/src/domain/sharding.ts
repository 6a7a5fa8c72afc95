import { createHash } from 'node:crypto';
import { bucketShardKey, bucketShardKeys } from './table-keys.js';

/**
 * How the table spreads events over the partitions of its indexes: each event in a shard (a hash
 * of its id), and, in the time-bucket index, in the bucket of its due minute. The keys themselves
 * are in table-keys.ts.
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

/** The shard an event lands in, in the time-bucket index and the tenant index alike: stable for an id, spread evenly over ids. */
export function shardOf(eventId: string, layout: Pick<BucketLayout, 'shardCount'>): number {
  return createHash('sha256').update(eventId).digest().readUInt32BE(0) % layout.shardCount;
}

export function bucketShardKeyFor(eventId: string, dueAt: number, layout: BucketLayout): string {
  return bucketShardKey(bucketOf(dueAt, layout), shardOf(eventId, layout));
}

export interface BucketRange {
  /** The part of the bucket inside the requested range, epoch ms: [startMs, endMs). */
  readonly startMs: number;
  readonly endMs: number;
  readonly shardKeys: readonly string[];
}

/** The buckets overlapping [fromMs, untilMs), oldest first, each clipped to the range. */
export function bucketsBetween(fromMs: number, untilMs: number, layout: BucketLayout): BucketRange[] {
  const ranges: BucketRange[] = [];
  if (untilMs <= fromMs) return ranges;
  for (let bucket = bucketOf(fromMs, layout); bucket * 1000 < untilMs; bucket += layout.bucketSeconds) {
    ranges.push({
      startMs: Math.max(fromMs, bucket * 1000),
      endMs: Math.min(untilMs, (bucket + layout.bucketSeconds) * 1000),
      shardKeys: bucketShardKeys(bucket, layout.shardCount),
    });
  }
  return ranges;
}
