import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TransientError } from '../domain/reasons.js';

/** Attribute names the table's keys, indexes and TTL use; the keys' values are table-keys.ts's. */
export const TABLE = {
  partitionKey: 'id',
  /** The time-bucket index: stored events written before the tenant index, and held events (see TABLE_LAYOUT). */
  bucketIndex: 'byDueBucket',
  bucketShardKey: 'bucketShard',
  tenantIndex: 'byTenantDue',
  tenantShardKey: 'tenantShard',
  dueAtKey: 'dueAt',
  ttlAttribute: 'expiresAt',
} as const;

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
 * The table's key schema and indexes, in one place: the CDK app, the local runtime and the
 * tests create the table from this. Both indexes are keys only, and nothing indexes an event's
 * state, so no state change writes an index.
 *
 * - `byTenantDue`: every event written since it exists, and each label entry, under its tenant
 *   and shard (tenantShardKey, labelShardKey), by due time: the loader's and the operators' listings.
 * - `byDueBucket`: stored events written before, under `<due bucket>#<shard>` (bucketShardKey),
 *   which the loader still reads, and a paused tenant's held events, under `held#<tenant>#<shard>`
 *   (heldShardKey), which a resume reads. Those stored events leave it as they end and expire; a
 *   held event is never expired: it stays until its tenant resumes and it is sent.
 */
export const TABLE_LAYOUT = {
  partitionKey: { name: TABLE.partitionKey, type: 'S' },
  ttlAttribute: TABLE.ttlAttribute,
  indexes: [
    {
      name: TABLE.bucketIndex,
      partitionKey: { name: TABLE.bucketShardKey, type: 'S' },
      sortKey: { name: TABLE.dueAtKey, type: 'N' },
      projection: 'KEYS_ONLY',
    },
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
