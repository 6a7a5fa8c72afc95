import { createHash } from 'node:crypto';

/** Time-bucket layout of the loader's GSI: `<bucket start, epoch seconds>#<shard>`. */
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

export function bucketShardKey(bucket: number, shard: number): string {
  return `${bucket}#${shard}`;
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
      shardKeys: Array.from({ length: layout.shardCount }, (_, shard) => bucketShardKey(bucket, shard)),
    });
  }
  return ranges;
}

/**
 * The due-index keys of a tenant's held events (see EVENT_STATE.held): `held#<tenant>#<shard>`,
 * by due time, apart from the loader's buckets, so that a resume finds them oldest first.
 */
export function heldShardKey(tenant: string, eventId: string, layout: BucketLayout): string {
  return `held#${tenant}#${shardOf(eventId, layout)}`;
}

export function heldShardKeys(tenant: string, layout: Pick<BucketLayout, 'shardCount'>): string[] {
  return Array.from({ length: layout.shardCount }, (_, shard) => `held#${tenant}#${shard}`);
}
