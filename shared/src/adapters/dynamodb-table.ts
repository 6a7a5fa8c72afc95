import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TransientError } from '../domain/reasons.js';

/** Attribute names the table's keys, indexes and TTL use; the keys' values are table-keys.ts's. */
export const TABLE = {
  partitionKey: 'id',
  tenantIndex: 'byTenantDue',
  tenantShardKey: 'tenantShard',
  dueAtKey: 'dueAt',
  ttlAttribute: 'expiresAt',
} as const;

/**
 * The registry's listing: a table of its own beside the events' (see REGISTRY_LISTING_LAYOUT),
 * one item per registered tenant, keyed by one partition and the tenant's id.
 */
export const REGISTRY_LISTING = {
  partitionKey: 'registryList',
  sortKey: 'registryId',
  /** The listing table's name: the events table's, and this. */
  tableSuffix: '-registry',
} as const;

/** The table listing the registry beside the events table `eventsTableName` (see REGISTRY_LISTING_LAYOUT). */
export function registryListingTableName(eventsTableName: string): string {
  return `${eventsTableName}${REGISTRY_LISTING.tableSuffix}`;
}

/**
 * The registry's listing by id, as the listing table keys it: a listing of 100,000 tenants reads
 * a page by id prefix or after an id with one query. A table of its own, not an index of the
 * events table: DynamoDB Local reads a table's description, every index in it, for each item it
 * writes, so a second index there made every event's write dearer (ingest on disk 1.15× faster
 * without it, BENCHMARKS.md 2026-12-07); on AWS the two cost the same.
 */
export const REGISTRY_LISTING_LAYOUT = {
  partitionKey: { name: REGISTRY_LISTING.partitionKey, type: 'S' },
  sortKey: { name: REGISTRY_LISTING.sortKey, type: 'S' },
} as const satisfies { readonly partitionKey: TableKeyAttribute; readonly sortKey: TableKeyAttribute };

/**
 * The index earlier versions listed the registry in, in the events table, under the listing's
 * keys: named only to take tables off it (the local runtime deletes it; the CDK app's table no
 * longer declares it).
 */
export const LEGACY_REGISTRY_INDEX = 'byRegistryId';

/**
 * The second index earlier versions kept, by due time under `bucketShard`: held events
 * (`held#<tenant>#<shard>`) and events stored before the tenant index (`<due bucket>#<shard>`).
 * Named only to take tables off it: migrateIndexEntries moves its entries into the tenant index,
 * and the local runtime then deletes it (the CDK app's table no longer declares it).
 */
export const LEGACY_BUCKET_INDEX = { name: 'byDueBucket', partitionKey: 'bucketShard' } as const;

/**
 * The items counting a tenant's ends by minute (see end-counts.ts; their ids are endCountsItemId's in
 * table-keys.ts), with the counts in `emitted`, `failed` and `late<bin>`, and an expiry.
 */
export const END_COUNTS = {
  emitted: 'emitted',
  failed: 'failed',
  lateness: (bin: number): string => `late${bin}`,
} as const;

export interface TableKeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/**
 * The table's key schema and its indexes, in one place: the CDK app, the local runtime and the
 * tests create the table from this. The indexes are keys only, and nothing indexes an event's
 * state, so no state change writes them.
 *
 * `byTenantDue`: every event, and each label entry, under its tenant and shard, by due time
 * (tenantShardKey, heldShardKey, labelShardKey): a tenant's stored events (`s`, the loader's),
 * those whose payload only the delay queue holds (`q`), its held events (`h`, a resume's: never
 * expired, they stay until their tenant resumes and they are sent), and its label entries.
 * Events share that one index rather than having an index each: every index an item has keys
 * for makes its writes dearer, and on DynamoDB Local every index the table has at all (see
 * REGISTRY_LISTING_LAYOUT).
 */
export const TABLE_LAYOUT = {
  partitionKey: { name: TABLE.partitionKey, type: 'S' },
  ttlAttribute: TABLE.ttlAttribute,
  indexes: [
    {
      name: TABLE.tenantIndex,
      partitionKey: { name: TABLE.tenantShardKey, type: 'S' },
      sortKey: { name: TABLE.dueAtKey, type: 'N' },
      projection: 'KEYS_ONLY',
    },
  ],
} as const satisfies {
  readonly partitionKey: TableKeyAttribute;
  readonly ttlAttribute: string;
  readonly indexes: readonly {
    readonly name: string;
    readonly partitionKey: TableKeyAttribute;
    readonly sortKey: TableKeyAttribute;
    readonly projection: 'KEYS_ONLY';
  }[];
};

export function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** Any other DynamoDB error is retried by the caller's queue. */
export function transient(operation: string, error: unknown): TransientError {
  return new TransientError(`DynamoDB ${operation} failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

/**
 * Makes a command go out once, without the SDK's own retries: they resend the same request body,
 * and a change's body holds a cutoff computed when it was built. Its caller retries instead, with
 * a body built anew. (The SDK's retry middleware is replaced by name for this command only.)
 */
export function withoutSdkRetries(command: UpdateCommand): UpdateCommand;
export function withoutSdkRetries(command: TransactWriteCommand): TransactWriteCommand;
export function withoutSdkRetries(command: UpdateCommand | TransactWriteCommand): UpdateCommand | TransactWriteCommand {
  // Both stacks take the same middleware; they differ only in their commands' input and output types.
  (command.middlewareStack as UpdateCommand['middlewareStack']).add((next) => next, {
    name: 'retryMiddleware',
    step: 'finalizeRequest',
    priority: 'high',
    tags: ['RETRY'],
    override: true,
  });
  return command;
}
