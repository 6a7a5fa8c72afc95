import { type BucketLayout, shardOf } from './sharding.js';
import { EVENT_STATE } from './lifecycle.js';

/**
 * Where a new or rescheduled event goes: straight to the delay queue, or stored for the loader.
 * Its shard (see shardOf) places it in the tenant index, under the family of where its payload
 * is (see tenantShardKey), and its label entries with it.
 */
export interface Placement {
  readonly state: 'queued' | 'scheduled';
  readonly shard: number;
}

/** Where an event due at `dueAt` goes from `now`: the delay queue within the near-path window, else the table. */
export function placementFor(
  config: Pick<BucketLayout, 'shardCount'> & { readonly nearPathWindowSeconds: number },
  id: string,
  dueAt: number,
  now: number,
): Placement {
  const state = dueAt < now + config.nearPathWindowSeconds * 1000 ? EVENT_STATE.queued : EVENT_STATE.scheduled;
  return { state, shard: shardOf(id, config) };
}
