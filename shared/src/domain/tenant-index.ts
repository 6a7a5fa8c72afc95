/**
 * Keys of the table's tenant index (`byTenantDue`): each tenant's events by due time, spread
 * over shards as the time-bucket index spreads them (see shardOf). The family says where the
 * payload was put when the event was placed: `s` stored in the table (the loader's), `q` only in
 * the delay queue; a label's entries form a family of their own. Tenant ids and labels hold no
 * `#`, so no key of one tenant is another's.
 */

/** Where an event's payload was put: stored in the table (`s`, for the loader), or only in the delay queue (`q`). */
export type PayloadFamily = 's' | 'q';

export function tenantShardKey(tenant: string, family: PayloadFamily, shard: number): string {
  return `${tenant}#${family}${shard}`;
}

export function labelShardKey(tenant: string, label: string, shard: number): string {
  return `${tenant}#l#${label}#${shard}`;
}

/** The item that lists an event under one of its labels. */
export function labelEntryId(eventId: string, label: string): string {
  return `l#${eventId}#${label}`;
}

/** The event a label entry lists (event ids hold no `#`). */
export function eventIdOfLabelEntry(entryId: string): string {
  return entryId.slice(2, entryId.lastIndexOf('#'));
}

/**
 * What a listing without a label leaves out, as the operators' CLI and the console say it: a
 * near-path event has a tenant-index entry only with SCHEDULER_INDEX_QUEUED_EVENTS (see
 * SchedulerConfig.indexQueuedEvents), and label entries always.
 */
export const UNINDEXED_QUEUED_EVENTS_NOTE =
  'Events placed straight in the delay queue are listed under their labels only, unless the scheduler runs with SCHEDULER_INDEX_QUEUED_EVENTS=true; each is found by its id.';

/** The partitions holding a tenant's events (both families), or its events with one label. */
export function listingPartitions(tenant: string, label: string | undefined, shardCount: number): string[] {
  return Array.from({ length: shardCount }, (_, shard) =>
    label === undefined ? [tenantShardKey(tenant, 's', shard), tenantShardKey(tenant, 'q', shard)] : [labelShardKey(tenant, label, shard)],
  ).flat();
}

/** Where a listing's page ended: the last event returned, by due time then id. */
export interface ListingPosition {
  readonly dueAt: number;
  readonly id: string;
}

/** A page token that no listing printed. */
export class PageTokenError extends Error {
  override readonly name = 'PageTokenError';
}

export function encodePageToken(position: ListingPosition): string {
  return Buffer.from(JSON.stringify([position.dueAt, position.id])).toString('base64url');
}

export function decodePageToken(token: string): ListingPosition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString());
  } catch {
    throw new PageTokenError(`"${token}" is not a page token`);
  }
  const [dueAt, id] = Array.isArray(value) ? value : [];
  if (typeof dueAt !== 'number' || typeof id !== 'string') throw new PageTokenError(`"${token}" is not a page token`);
  return { dueAt, id };
}

/** The order of a tenant's events wherever they are read page by page (a listing, a bulk cancel, a resume): by due time, then id. */
export function compareByDue(a: ListingPosition, b: ListingPosition): number {
  return a.dueAt - b.dueAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Whether an event at `position` comes after `after` in that order. */
export function isAfter(position: ListingPosition, after: ListingPosition | undefined): boolean {
  return after === undefined || compareByDue(position, after) > 0;
}
