import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../app/ports/process.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { payloadItemId } from '../domain/table-keys.js';
import { batchGet } from './dynamodb-batches.js';
import type { ConditionalWriter } from './dynamodb-conditional-writes.js';
import { isEventItem, toRecord } from './dynamodb-event-item-codec.js';
import type { DynamoDbQuotaCounters } from './dynamodb-quota-counters.js';
import type { DueDirectory } from '../app/ports/due-index.js';

/**
 * The events' table as the event store's writes reach it (DynamoDbEventStore builds it once), and
 * the reads they all make: records by id, and the payloads the table holds.
 */
export interface EventTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How batches of conditional writes are made (see BatchWriteMode). */
  readonly writer: ConditionalWriter;
  readonly counters: DynamoDbQuotaCounters;
  /** What a change's cutoff is checked against, at each attempt to write it. */
  readonly clock: Clock;
  /** How long one attempt to write a change may take (see SchedulerConfig.changeWriteTimeoutMs). */
  readonly changeWriteTimeoutMs: number;
  /** Whether events placed in the delay queue get a tenant-index entry (SchedulerConfig.indexQueuedEvents). */
  readonly indexQueuedEvents: boolean;
  /** The shards of the tenant index (SchedulerConfig.shardCount). */
  readonly shardCount: number;
  /** Noted before any write lists an event among its tenant's stored ones, so the loader finds it (see DueDirectory). */
  readonly dueDirectory: Pick<DueDirectory, 'note'>;
}

/** Records by id, read consistently (an id without a record is absent). */
export async function readEvents(
  table: Pick<EventTable, 'client' | 'tableName'>,
  ids: readonly string[],
): Promise<ReadonlyMap<string, EventRecord>> {
  const items = await batchGet(table.client, table.tableName, ids);
  const records = new Map<string, EventRecord>();
  for (const [id, item] of items) if (isEventItem(item)) records.set(id, toRecord(item));
  return records;
}

/** The payloads of records whose payload the table holds, by id: in the record, or in its payload item. */
export async function payloadsOf(table: EventTable, records: readonly EventRecord[]): Promise<Map<string, string>> {
  const apart = await batchGet(
    table.client,
    table.tableName,
    records.filter((record) => record.payload === undefined && record.payloadKept === 'item').map(payloadItemId),
  );
  // A payload item that is gone (it should not be) gives an empty payload, which the emitter cannot publish and reports.
  return new Map(records.map((record) => [record.id, record.payload ?? String(apart.get(payloadItemId(record))?.payload ?? '')]));
}

/** The payload of an event whose payload the table holds (in its record, or in an item of its own). */
export async function storedPayload(table: EventTable, record: EventRecord): Promise<string> {
  return (await payloadsOf(table, [record])).get(record.id) ?? '';
}
