import { paginateScan, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EVENT_STATE } from '../domain/lifecycle.js';
import { TransientError } from '../domain/reasons.js';
import { heldShardKey, legacyBucketEntry, tenantShardKey } from '../domain/table-keys.js';
import { DEFAULTS } from '../config.js';
import { DynamoDbDueDirectory } from './dynamodb-due-directory.js';
import { isConditionFailure, LEGACY_BUCKET_INDEX, TABLE, transient } from './dynamodb-table.js';
import { DynamoDbTenantPauses } from './dynamodb-tenant-pauses.js';

/** Items one page of the migration's scan reads. */
const SCAN_PAGE_ITEMS = 1000;

/**
 * Which entries of the earlier time-bucket index a run moves: all of them, or only the stored
 * events', leaving held events where a version still reading that index finds them (see
 * migrateIndexEntries).
 */
export type IndexMigrationScope = 'all' | 'stored-events';

/** What a run of migrateIndexEntries did. */
export interface IndexMigrationCounts {
  /** Items read with a `bucketShard` key. */
  readonly found: number;
  /** Held events moved to their tenant's held partition (`<tenant>#h<shard>`). */
  readonly held: number;
  /** Events stored before the tenant index, moved to their tenant's stored partition (`<tenant>#s<shard>`). */
  readonly stored: number;
  /** Keys of events no longer held, left behind by a version that stopped writing the old index: removed. */
  readonly cleared: number;
  /** Held events a `stored-events` run leaves in the old index. */
  readonly left: number;
  /** Items changed since the scan read them, or with a key of no known shape: untouched (a later run finds the former again). */
  readonly skipped: number;
}

/** What a run does with one item: its kind of move, and the tenant-index key it sets, if any. */
interface Move {
  readonly kind: keyof Omit<IndexMigrationCounts, 'found'>;
  readonly set?: string;
}

/**
 * Moves the entries of the time-bucket index earlier versions kept (LEGACY_BUCKET_INDEX) into the
 * tenant index: scans the table page by page for items with a `bucketShard` key and, each with an
 * update applied only while that key is still the one read, gives a held event (`held#…`, still
 * held) its held partition, a stored event (`<bucket>#<shard>`) its tenant's stored partition
 * unless it has one already, and removes `bucketShard`. A `held#…` key on an event no longer held
 * is only removed. The shard is the old key's; the tenant, the record's. Run again, it finds
 * nothing more to do, so it may be run any number of times, alongside the service.
 */
export async function migrateIndexEntries(
  client: DynamoDBDocumentClient,
  tableName: string,
  scope: IndexMigrationScope = 'all',
): Promise<IndexMigrationCounts> {
  const counts = { found: 0, held: 0, stored: 0, cleared: 0, left: 0, skipped: 0 };
  const table: MigratedTable = {
    client,
    tableName,
    dueDirectory: new DynamoDbDueDirectory(client, tableName, DEFAULTS.retentionSeconds),
    pauses: new DynamoDbTenantPauses(client, tableName),
  };
  const pages = paginateScan(
    { client, pageSize: SCAN_PAGE_ITEMS },
    {
      TableName: tableName,
      FilterExpression: 'attribute_exists(#bucketShard)',
      ProjectionExpression: '#id, #bucketShard, tenant, #state, #due',
      ExpressionAttributeNames: {
        '#id': TABLE.partitionKey,
        '#bucketShard': LEGACY_BUCKET_INDEX.partitionKey,
        '#state': 'state',
        '#due': TABLE.dueAtKey,
      },
      ConsistentRead: true,
    },
  );
  try {
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        counts.found++;
        const kind = await moveEntry(table, item, scope);
        counts[kind]++;
      }
    }
  } catch (error) {
    // An update's failure is one already.
    if (error instanceof TransientError) throw error;
    throw transient('Scan', error);
  }
  return counts;
}

/** The move of one item's old key, as the item was read. */
function moveOf(item: Readonly<Record<string, unknown>>, scope: IndexMigrationScope): Move {
  const bucketShard = String(item[LEGACY_BUCKET_INDEX.partitionKey]);
  const entry = legacyBucketEntry(bucketShard);
  if (entry === undefined || typeof item.tenant !== 'string') return { kind: 'skipped' };
  if (!entry.held) return { kind: 'stored', set: tenantShardKey(item.tenant, 's', entry.shard) };
  if (item.state !== EVENT_STATE.held) return { kind: 'cleared' };
  return scope === 'all' ? { kind: 'held', set: heldShardKey(item.tenant, entry.shard) } : { kind: 'left' };
}

/** The table a run migrates, and where what it lists anew is noted first (see moveEntry). */
interface MigratedTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly dueDirectory: Pick<DynamoDbDueDirectory, 'note'>;
  readonly pauses: Pick<DynamoDbTenantPauses, 'mark'>;
}

async function moveEntry(table: MigratedTable, item: Readonly<Record<string, unknown>>, scope: IndexMigrationScope): Promise<Move['kind']> {
  const { client, tableName } = table;
  const move = moveOf(item, scope);
  if (move.kind === 'left' || move.kind === 'skipped') return move.kind;
  // Listed anew: noted in the due directory, or its tenant marked by a pause, first, as a write of this version does.
  const tenant = String(item.tenant);
  const dueAt = item[TABLE.dueAtKey];
  if (move.kind === 'stored' && typeof dueAt === 'number') await table.dueDirectory.note([{ tenant, dueAt }]);
  if (move.kind === 'held') await table.pauses.mark(tenant, Date.now());
  const set =
    move.kind === 'held'
      ? 'SET #tenantShard = :key '
      : // A stored event that has a tenant-index key already keeps it.
        move.kind === 'stored'
        ? 'SET #tenantShard = if_not_exists(#tenantShard, :key) '
        : '';
  try {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { [TABLE.partitionKey]: item[TABLE.partitionKey] },
        UpdateExpression: `${set}REMOVE #bucketShard`,
        // As read: a hold, a resume or a change since then is found by a later run, or took the key out itself.
        ConditionExpression: move.kind === 'held' ? '#bucketShard = :read AND #state = :held' : '#bucketShard = :read',
        ExpressionAttributeNames: {
          '#bucketShard': LEGACY_BUCKET_INDEX.partitionKey,
          ...(set === '' ? {} : { '#tenantShard': TABLE.tenantShardKey }),
          ...(move.kind === 'held' ? { '#state': 'state' } : {}),
        },
        ExpressionAttributeValues: {
          ':read': item[LEGACY_BUCKET_INDEX.partitionKey],
          ...(move.set === undefined ? {} : { ':key': move.set }),
          ...(move.kind === 'held' ? { ':held': EVENT_STATE.held } : {}),
        },
      }),
    );
    return move.kind;
  } catch (error) {
    if (isConditionFailure(error)) return 'skipped';
    throw transient('UpdateItem', error);
  }
}
