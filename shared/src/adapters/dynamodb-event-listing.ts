import {
  BatchGetCommand,
  ScanCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  type ScanCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { DEFAULTS } from '../config.js';
import { DYNAMODB_BATCH_GET_KEYS } from '../domain/limits.js';
import { EVENT_STATE, OPEN_STATES, type EventRecord } from '../domain/lifecycle.js';
import { SERIES_STATE } from '../domain/series.js';
import { TransientError } from '../domain/reasons.js';
import { eventIdOfLabelEntry, listingPartitions } from '../domain/table-keys.js';
import { decodePageToken, encodePageToken } from '../domain/tenant-index.js';
import type { EventListing, EventsPage, EventsQuery } from '../app/ports/listing.js';
import { BATCH_ROUNDS, batchGet, pauseBeforeRound } from './dynamodb-batches.js';
import { DuePartitionsMerge, dynamoDbPartitions, pageOfRecords } from './dynamodb-due-partitions.js';
import { isEventItem, toRecord } from './dynamodb-event-item-codec.js';
import { TABLE, transient } from './dynamodb-table.js';

/** What one request of a listing read: index entries or records, and the read units DynamoDB billed for it. */
export interface ListingRead {
  readonly request: 'Query' | 'BatchGetItem';
  readonly items: number;
  readonly capacityUnits: number;
}

export interface DynamoDbEventListingOptions {
  /** The scheduler's SCHEDULER_SHARD_COUNT: a listing reads each shard of the tenant (or label). */
  readonly shardCount?: number;
  /** Told of every read a listing makes, with the units it consumed (the load test measures listings by it). */
  readonly onRead?: (read: ListingRead) => void;
}

/**
 * Operators' reads: one event, and a page of a tenant's events through the tenant index. Nothing
 * here scans but the quota recount, an operator's repair that counts every open event.
 */
export class DynamoDbEventListing implements EventListing {
  private readonly shardCount: number;
  private readonly onRead: ((read: ListingRead) => void) | undefined;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: DynamoDbEventListingOptions = {},
  ) {
    this.shardCount = options.shardCount ?? DEFAULTS.shardCount;
    this.onRead = options.onRead;
  }

  async get(id: string): Promise<EventRecord | undefined> {
    const item = (await batchGet(this.client, this.tableName, [id])).get(id);
    return item && isEventItem(item) ? toRecord(item) : undefined;
  }

  /**
   * A tenant's open events (scheduled, queued or held) and active series (each holds one place,
   * as its occurrences hold theirs), counted by a scan of the whole table: for reconciling its
   * quota counter.
   */
  async countOpen(tenant: string): Promise<number> {
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      let result: ScanCommandOutput;
      try {
        result = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'tenant = :tenant AND (#state IN (:scheduled, :queued, :held) OR seriesState = :active)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':tenant': tenant,
              ':scheduled': EVENT_STATE.scheduled,
              ':queued': EVENT_STATE.queued,
              ':held': EVENT_STATE.held,
              ':active': SERIES_STATE.active,
            },
            Select: 'COUNT',
            ExclusiveStartKey: startKey,
            ConsistentRead: true,
          }),
        );
      } catch (error) {
        throw transient('Scan', error);
      }
      count += result.Count ?? 0;
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined);
    return count;
  }

  /**
   * Reads the tenant's partitions of the index (or its label's) in due order, a small page each,
   * merges them by (due time, id), and reads the records of the candidates it needs, as many as
   * the page still lacks at a time: in the common case (open events), it reads about what it
   * returns. The records decide: an entry whose event has ended, moved or lost its label since is
   * passed over.
   */
  async listEvents(tenant: string, query: EventsQuery): Promise<EventsPage> {
    const after = query.after === undefined ? undefined : decodePageToken(query.after);
    const states = query.states ?? OPEN_STATES;
    const partitions = listingPartitions(tenant, query.label, this.shardCount);
    // Each shard holds about its share of the page, and a tenant's events are mostly in one of
    // its two families (stored, or in the delay queue): each partition's first read asks for a
    // shard's share and one more, so that one round of reads usually fills the page.
    const pageItems = Math.ceil(query.limit / this.shardCount) + 1;
    const fromMs = Math.max(query.from ?? Number.MIN_SAFE_INTEGER, after?.dueAt ?? Number.MIN_SAFE_INTEGER);
    const untilMs = query.to ?? Number.MAX_SAFE_INTEGER;
    const open = dynamoDbPartitions(this.client, this.tableName, {
      indexName: TABLE.tenantIndex,
      keyAttribute: TABLE.tenantShardKey,
      fromMs,
      untilMs,
      pageItems,
      ...(query.label === undefined ? {} : { eventIdOf: eventIdOfLabelEntry }),
      onRead: (items, capacityUnits) => this.onRead?.({ request: 'Query', items, capacityUnits }),
    });
    const merge = new DuePartitionsMerge(partitions, open, after);

    const fromBound = query.from ?? Number.MIN_SAFE_INTEGER;
    const { records, next } = await pageOfRecords(merge, {
      limit: query.limit,
      read: (ids) => this.readRecords(ids),
      keep: (record) =>
        record.tenant === tenant &&
        states.includes(record.state) &&
        (query.label === undefined || (record.labels ?? []).includes(query.label)) &&
        record.dueAt >= fromBound &&
        record.dueAt < untilMs,
    });
    return { events: records, next: next === undefined ? undefined : encodePageToken(next) };
  }

  /** Records by id (consistently, as operators expect to see what they just changed), each request's units told. */
  private async readRecords(ids: readonly string[]): Promise<Map<string, EventRecord>> {
    const records = new Map<string, EventRecord>();
    for (let first = 0; first < ids.length; first += DYNAMODB_BATCH_GET_KEYS) {
      let keys: Record<string, unknown>[] = ids.slice(first, first + DYNAMODB_BATCH_GET_KEYS).map((id) => ({ [TABLE.partitionKey]: id }));
      for (let round = 0; keys.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchGetItem left ${keys.length} keys unread`);
        await pauseBeforeRound(round);
        let result: BatchGetCommandOutput;
        try {
          result = await this.client.send(
            new BatchGetCommand({
              RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
              ReturnConsumedCapacity: 'TOTAL',
            }),
          );
        } catch (error) {
          throw transient('BatchGetItem', error);
        }
        const items = result.Responses?.[this.tableName] ?? [];
        const capacityUnits = (result.ConsumedCapacity ?? []).reduce((sum, used) => sum + (used.CapacityUnits ?? 0), 0);
        this.onRead?.({ request: 'BatchGetItem', items: items.length, capacityUnits });
        for (const item of items) if (isEventItem(item)) records.set(String(item[TABLE.partitionKey]), toRecord(item));
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return records;
  }
}
