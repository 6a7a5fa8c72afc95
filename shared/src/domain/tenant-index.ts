import { EVENT_STATE, type EventState } from './lifecycle.js';
import { tenantShardKey } from './table-keys.js';

/**
 * The table's tenant index (`byTenantDue`): each tenant's events by due time, spread over shards
 * (see shardOf), under the family of where the payload was put when the event was placed (see
 * tenantShardKey in table-keys.ts): which write gives a record which key, and the order its
 * readers page through.
 */

/** A write that may give an event's record its tenant-index key. */
export type IndexedWrite =
  /** Its creation, at ingest. */
  | 'created'
  /** Its end as failed, by the emitter. */
  | 'failed'
  /** Its carry into the table after a reschedule (see EventRecord.carriedBy): its payload into the table. */
  | 'carried';

/**
 * The event a write concerns: its tenant, its shard (see shardOf), where its payload was put, and
 * whether it is an occurrence of a recurring series (listed with its series, see tenantIndexKeyAt).
 */
export interface IndexedEvent {
  readonly tenant: string;
  readonly shard: number;
  readonly payloadIn: 'table' | 'queue';
  readonly occurrence?: boolean;
}

/**
 * The tenant-index key a write gives an event's record; undefined: none (the record keeps what it
 * has). The rule, in one place: an event whose payload the table holds is listed under `s`, from
 * its creation. One whose payload only its delay-queue copy holds is listed under `q` when the
 * scheduler indexes such events (`indexQueuedEvents`, SCHEDULER_INDEX_QUEUED_EVENTS, on by
 * default: one write unit more each), and, whatever the setting, once it fails or is carried into
 * the table: rare writes, made anyway, and what operators look for. Carrying puts the payload in
 * the table, so a carried event goes under `s`. (A held event is under its tenant's `h` partitions
 * while held, see heldShardKey, and under `s` once sent or changed.) An occurrence of a recurring
 * series is listed with its series (its record says which occurrences it made; `series show` gives
 * the next ones and the last ones with their events) and under its labels: it gets no key of its
 * own at its creation, whatever the setting, so that it writes no more than its record and its end,
 * and the keys of the writes above once it fails, is held or is carried.
 */
export function tenantIndexKeyAt(write: 'carried', event: IndexedEvent, indexQueuedEvents: boolean): string;
export function tenantIndexKeyAt(write: IndexedWrite, event: IndexedEvent, indexQueuedEvents: boolean): string | undefined;
export function tenantIndexKeyAt(write: IndexedWrite, event: IndexedEvent, indexQueuedEvents: boolean): string | undefined {
  const { tenant, shard, payloadIn } = event;
  switch (write) {
    case 'created':
      if (payloadIn === 'table') return tenantShardKey(tenant, 's', shard);
      return indexQueuedEvents && event.occurrence !== true ? tenantShardKey(tenant, 'q', shard) : undefined;
    case 'failed':
      // A stored event has had its key since its creation.
      return payloadIn === 'queue' ? tenantShardKey(tenant, 'q', shard) : undefined;
    case 'carried':
      return tenantShardKey(tenant, 's', shard);
  }
}

/**
 * What a listing without a label leaves out when the scheduler runs without indexing near-path
 * events (SCHEDULER_INDEX_QUEUED_EVENTS=false), as the operators' CLI and the console say it.
 */
export const UNINDEXED_QUEUED_EVENTS_NOTE =
  'This scheduler runs with SCHEDULER_INDEX_QUEUED_EVENTS=false: an open event placed straight in the delay queue is listed under its labels only (found by its id), until it fails or is held; events that failed, were held or were carried into the table are listed.';

/**
 * What a listing without a label leaves out whatever the setting: the occurrences of recurring
 * series, listed with their series (see tenantIndexKeyAt), as the operators' CLI and the console say it.
 */
export const SERIES_OCCURRENCES_NOTE =
  'An occurrence of a recurring series is listed with its series (series show: its next occurrences, and its last ones with their events) and under its labels; here once it has failed, been held or been rescheduled into the table.';

/**
 * Whether a listing without a label of these states may leave occurrences out (see
 * SERIES_OCCURRENCES_NOTE): those queued, and those that ended emitted or cancelled without a key.
 */
export function listingLeavesOutOccurrences(states: readonly EventState[]): boolean {
  return states.some((state) => state === EVENT_STATE.queued || state === EVENT_STATE.emitted || state === EVENT_STATE.cancelled);
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
