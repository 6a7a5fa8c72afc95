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
  /** The registry's listing: its entries by tenant id, one partition (see TABLE_LAYOUT). */
  registryIndex: 'byRegistryId',
  registryListKey: 'registryList',
  registryIdKey: 'registryId',
} as const;

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
 * for makes its writes dearer.
 *
 * `byRegistryId`: the registry's entries alone, by tenant id (registryListKey, registryIdKey),
 * so that a listing of 100,000 tenants reads a page by id prefix or after an id, not the
 * registry whole. Sparse: no other item has its keys, so no event's write touches it (on
 * DynamoDB Local on disk, 4,000 conditional puts of events were as fast beside it as without:
 * 2,268 against 2,243 a second over three alternated rounds).
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
    {
      name: TABLE.registryIndex,
      partitionKey: { name: TABLE.registryListKey, type: 'S' },
      sortKey: { name: TABLE.registryIdKey, type: 'S' },
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
