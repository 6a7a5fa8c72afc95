import { createHash } from 'node:crypto';

/**
 * Every key the scheduler's one DynamoDB table holds, and every id prefix, in one place: the
 * items' ids (partition key `id`) and the partitions of its index (see TABLE_LAYOUT in
 * dynamodb-table.ts for the attributes they go in). These are stored formats: deployed tables
 * hold them, so a shape never changes (table-keys.test.ts pins each to an example).
 *
 * Event ids start with a letter and a hyphen (`m-`, `c-`) and hold no `#`; tenant ids and labels
 * hold no `#` either. So the other items' ids (a prefix ending in `#`, or starting with one)
 * are never an event's, and no key of one tenant is another's.
 */

/**
 * The ids the scheduler makes: events (`m-`, `c-`), recurring series (`s-`) and their
 * occurrences (`o-`), bulk cancels' and resumes' jobs (`b-`, `r-`), failure notices (`n-`).
 */
export const ID_PREFIX = {
  /** An event without a client id: `m-<MessageId>` of its schedule request (SNS's, known to its publisher alone). */
  messageEvent: 'm-',
  /** An event with a client id: `c-` and a hash of its tenant and that id (see eventIdFor). */
  clientEvent: 'c-',
  /** A recurring series: `s-` and the id a one-off event of the same request would have (`s-m-…`, `s-c-…`). */
  series: 's-',
  /** An occurrence of a series: `o-`, a hash of the series id, `-`, its due time in epoch ms (and `-r<revision>` after a change). */
  occurrence: 'o-',
  bulkCancelJob: 'b-',
  resumeJob: 'r-',
  notice: 'n-',
} as const;

/** An event named after its schedule request's MessageId. */
export function messageEventId(inputMessageId: string): string {
  return `${ID_PREFIX.messageEvent}${inputMessageId}`;
}

export function isMessageEventId(eventId: string): boolean {
  return eventId.startsWith(ID_PREFIX.messageEvent);
}

/** An event named after its client id: `digest` is the hash of its tenant and that id. */
export function clientEventId(digest: string): string {
  return `${ID_PREFIX.clientEvent}${digest}`;
}

/**
 * A recurring series, named after the id a one-off event of its request would have (see
 * eventIdFor): the tenant and the client's `id`, or the input message. No `#`, as event ids.
 */
export function seriesId(eventId: string): string {
  return `${ID_PREFIX.series}${eventId}`;
}

export function isSeriesId(id: string): boolean {
  return id.startsWith(ID_PREFIX.series);
}

/** A series whose request had no client id, named by its MessageId: on the shared topic, the only name that proves its owner. */
export function isMessageSeriesId(id: string): boolean {
  return id.startsWith(`${ID_PREFIX.series}${ID_PREFIX.messageEvent}`);
}

/**
 * An occurrence of a series due at `dueAt` (epoch ms): `o-<32 hex of SHA-256 of the series id>-<dueAt>`,
 * and `-r<revision>` after a change that cancelled materialised occurrences (a pause, a
 * replacement): the same series, revision and due time always give the same id, so a repeated
 * materialisation creates nothing, and an occurrence made anew after a change is not taken for
 * the one the change cancelled.
 */
export function occurrenceId(series: string, dueAt: number, revision = 1): string {
  const id = `${ID_PREFIX.occurrence}${createHash('sha256').update(series).digest('hex').slice(0, 32)}-${dueAt}`;
  return revision === 1 ? id : `${id}-r${revision}`;
}

/** A bulk cancel's job: named after its tenant's input message (its redelivery finds the same job), or a new uuid for an operator's. */
export function bulkCancelJobId(source: string): string {
  return `${ID_PREFIX.bulkCancelJob}${source}`;
}

/** A resume's job: named after its tenant's input message, or a new uuid for an operator's. */
export function resumeJobId(source: string): string {
  return `${ID_PREFIX.resumeJob}${source}`;
}

/** A failure notice, and the item marking it sent: named after the refused input message, or the job it ends. */
export function noticeId(source: string): string {
  return `${ID_PREFIX.notice}${source}`;
}

// ---- Items other than events' records -------------------------------------------------------

/**
 * The payload item of a record: `p#<id>#<request hash>`, named by its content, so that no other
 * request with the same id can write over it (it is written before the record's conditional
 * insert). Records written before request hashes were kept name `p#<id>`.
 */
export function payloadItemId(record: { readonly id: string; readonly requestHash?: string | undefined }): string {
  const named = `${PAYLOAD_ITEM_ID_PREFIX}${record.id}`;
  return record.requestHash === undefined ? named : `${named}#${record.requestHash}`;
}

export const PAYLOAD_ITEM_ID_PREFIX = 'p#';

/** The item that lists an event under one of its labels: `l#<event id>#<label>`. */
export function labelEntryId(eventId: string, label: string): string {
  return `l#${eventId}#${label}`;
}

/** The event a label entry lists (event ids hold no `#`). */
export function eventIdOfLabelEntry(entryId: string): string {
  return entryId.slice(2, entryId.lastIndexOf('#'));
}

/** A bulk cancel's job item: `j#<job id>`. */
export function jobItemId(jobId: string): string {
  return `j#${jobId}`;
}

/** The last error of a failed SQS message: `e#<MessageId>`. */
export const LAST_ERROR_ID_PREFIX = 'e#';

export function lastErrorItemId(messageId: string): string {
  return `${LAST_ERROR_ID_PREFIX}${messageId}`;
}

/** A tenant's quota counters (and its pauses): `#tenant#<tenant>`. */
export function openEventsCounterId(tenant: string): string {
  return `#tenant#${tenant}`;
}

/** The tenant whose counters item this is (see openEventsCounterId). */
export function tenantOfCounterId(counterId: string): string {
  return counterId.slice('#tenant#'.length);
}

/**
 * The tenant-index partition that lists the counters items of tenants paused since they were
 * last swept (see TenantPauses.pauseMarks): the only tenants that may have held events. Its sort
 * key is the time of the tenant's last pause or resume.
 */
export const PAUSE_MARKS_KEY = '#paused';

/** A tenant's ends in one minute (see end-counts.ts): `#ends#<tenant>#<minute start, epoch seconds>`. */
export function endCountsItemId(tenant: string, minuteMs: number): string {
  return `#ends#${tenant}#${Math.floor(minuteMs / 1000)}`;
}

/**
 * What a removed tenant left: `#removed#<tenant>`, until its id may name another tenant (see
 * TenantRemoval).
 */
export function tenantRemovalItemId(tenant: string): string {
  return `#removed#${tenant}`;
}

/** The tenant whose removal this item records (see tenantRemovalItemId). */
export function tenantOfRemovalItemId(itemId: string): string {
  return itemId.slice('#removed#'.length);
}

/**
 * The tenant-index partition that lists every removal recorded, by its time: a registration of
 * many tenants reads the few removals, not an item per tenant.
 */
export const REMOVALS_KEY = '#removed';

/**
 * The tenant registry kept as data: a registered tenant's entry, `#registry#<tenant>`, listed
 * under REGISTRY_KEY in the tenant index by when it was written, and by id in the listing table.
 */
export function registryEntryId(tenant: string): string {
  return `#registry#${tenant}`;
}

/** The tenant a registry entry's item is of (see registryEntryId). */
export function tenantOfRegistryEntryId(itemId: string): string {
  return itemId.slice('#registry#'.length);
}

/** Every item of the registry kept as data has an id that starts so (and no other item's does). */
export const REGISTRY_ID_PREFIX = '#registry';

/** The partition listing every registered tenant's entry: in the tenant index by when it was written, in the listing table by id. */
export const REGISTRY_KEY = '#registry';

/**
 * Present once every registry entry is in the listing table (entries written before it are
 * listed once). An earlier version's `#registry-listed`, which marked its index complete, is
 * left as it was: nothing reads it.
 */
export const REGISTRY_LISTING_COMPLETE_ID = '#registry-listing';

/** The public tenant's settings in the registry (no item: its defaults). */
export const REGISTRY_PUBLIC_ID = '#registry-public';

/** The registered tenants owning an account, `#registry-account#<account>`: an account's owners in one read. */
export function registryAccountId(account: string): string {
  return `#registry-account#${account}`;
}

/** The item holding the loader's cursors. */
export const LOADER_CURSOR_ID = '#loader-cursor';

/** A tenant's refusal counter: `r#<tenant>`. */
export function refusalCounterId(tenant: string): string {
  return `r#${tenant}`;
}

/** One of the slots of a tenant's ring of kept refusals: `r#<tenant>#<slot>`. */
export function refusalSlotId(tenant: string, slot: number): string {
  return `${refusalCounterId(tenant)}#${slot}`;
}

/**
 * The due directory: which tenants have stored events (`s`) due in each period of
 * DUE_DIRECTORY_PERIOD_MS, so that the loader queries those tenants' shards, not every registered
 * tenant's. One small item per tenant and period, `#due#<period start, epoch s>#<tenant>`, listed in
 * the tenant index under `#due#<period start, epoch s>` at the period's start. No tenant's key
 * starts with `#`, so no tenant partition is a directory's. A stored format: the period never changes.
 */
export const DUE_DIRECTORY_PERIOD_MS = 300_000;

/** The start (epoch ms) of the directory period holding `dueAt`. */
export function dueDirectoryPeriodOf(dueAt: number): number {
  return Math.floor(dueAt / DUE_DIRECTORY_PERIOD_MS) * DUE_DIRECTORY_PERIOD_MS;
}

/** The directory periods overlapping [fromMs, untilMs), by their starts, oldest first. */
export function dueDirectoryPeriodsBetween(fromMs: number, untilMs: number): number[] {
  const periods: number[] = [];
  for (let start = dueDirectoryPeriodOf(fromMs); start < untilMs; start += DUE_DIRECTORY_PERIOD_MS) periods.push(start);
  return periods;
}

/** What every due directory entry's id, and its partition's key, starts with. */
export const DUE_DIRECTORY_ID_PREFIX = '#due#';

/** The tenant-index partition listing a period's entries: `#due#<period start, epoch s>`. */
export function dueDirectoryKey(periodStartMs: number): string {
  return `${DUE_DIRECTORY_ID_PREFIX}${Math.floor(periodStartMs / 1000)}`;
}

/** The entry saying `tenant` has stored events due in the period: `#due#<period start, epoch s>#<tenant>`. */
export function dueDirectoryEntryId(periodStartMs: number, tenant: string): string {
  return `${dueDirectoryKey(periodStartMs)}#${tenant}`;
}

/** The tenant a due directory entry names (tenant ids hold no `#`). */
export function tenantOfDueDirectoryEntry(entryId: string): string {
  return entryId.slice(entryId.lastIndexOf('#') + 1);
}

// ---- The index's partitions ------------------------------------------------------------------

/** Where an event's payload was put: stored in the table (`s`, for the loader), or only in the delay queue (`q`). */
export type PayloadFamily = 's' | 'q';

/** The tenant index (`byTenantDue`): a tenant's events of one family in one shard, `<tenant>#s<shard>` or `<tenant>#q<shard>`. */
export function tenantShardKey(tenant: string, family: PayloadFamily, shard: number): string {
  return `${tenant}#${family}${shard}`;
}

/** The tenant index: a label's entries in one shard, `<tenant>#l#<label>#<shard>`. */
export function labelShardKey(tenant: string, label: string, shard: number): string {
  return `${tenant}#l#${label}#${shard}`;
}

/**
 * The tenant index: a tenant's held events (see EVENT_STATE.held) in one shard, `<tenant>#h<shard>`,
 * by due time, apart from its `s` and `q` families (the loader reads `s`), so that a resume finds
 * them oldest first. Not a payload family: a held event's payload is in its record.
 */
export function heldShardKey(tenant: string, shard: number): string {
  return `${tenant}#h${shard}`;
}

/**
 * The shard of a key of the time-bucket index an earlier version kept (`byDueBucket`, attribute
 * `bucketShard`): a held event's `held#<tenant>#<shard>`, or a stored event's
 * `<bucket start, epoch seconds>#<shard>` (one written before the tenant index). Undefined for
 * any other shape. Only migrateIndexEntries reads these keys, to move them into the tenant index.
 */
export function legacyBucketEntry(bucketShard: string): { readonly held: boolean; readonly shard: number } | undefined {
  const held = /^held#[^#]+#(\d+)$/.exec(bucketShard);
  if (held !== null) return { held: true, shard: Number(held[1]) };
  const stored = /^\d+#(\d+)$/.exec(bucketShard);
  return stored === null ? undefined : { held: false, shard: Number(stored[1]) };
}

/** One key of each shard, in shard order: every partition of one family. */
function everyShard(shardCount: number, keyOf: (shard: number) => string): string[] {
  return Array.from({ length: shardCount }, (_, shard) => keyOf(shard));
}

/**
 * The tenant and family of a partition of a tenant's stored (`<tenant>#s<shard>`) or held
 * (`<tenant>#h<shard>`) events; undefined for any other key (`q`, a label's, the directory's).
 */
export function storedOrHeldPartition(key: string): { readonly tenant: string; readonly family: 's' | 'h' } | undefined {
  const match = /^([^#]+)#([sh])\d+$/.exec(key);
  return match === null ? undefined : { tenant: match[1] as string, family: match[2] as 's' | 'h' };
}

/** Every partition of a tenant's events of one family. */
export function tenantShardKeys(tenant: string, family: PayloadFamily, shardCount: number): string[] {
  return everyShard(shardCount, (shard) => tenantShardKey(tenant, family, shard));
}

/** Every partition of a tenant's entries of one label. */
export function labelShardKeys(tenant: string, label: string, shardCount: number): string[] {
  return everyShard(shardCount, (shard) => labelShardKey(tenant, label, shard));
}

/** Every partition of a tenant's held events. */
export function heldShardKeys(tenant: string, shardCount: number): string[] {
  return everyShard(shardCount, (shard) => heldShardKey(tenant, shard));
}

/** The partitions holding a tenant's events (stored, queued and held, shard by shard), or its events with one label. */
export function listingPartitions(tenant: string, label: string | undefined, shardCount: number): string[] {
  if (label !== undefined) return labelShardKeys(tenant, label, shardCount);
  return tenantShardKeys(tenant, 's', shardCount).flatMap((stored, shard) => [
    stored,
    tenantShardKey(tenant, 'q', shard),
    heldShardKey(tenant, shard),
  ]);
}

/**
 * The partitions holding a tenant's series: its stored family, where an active series is keyed at
 * its next due time among the stored events, or its entries of one label (a series' stands at its
 * first due time). Either holds events too: a reader keeps the series ids.
 */
export function seriesListingPartitions(tenant: string, label: string | undefined, shardCount: number): string[] {
  return label === undefined ? tenantShardKeys(tenant, 's', shardCount) : labelShardKeys(tenant, label, shardCount);
}
