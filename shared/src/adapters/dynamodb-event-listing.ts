import {
  BatchGetCommand,
  QueryCommand,
  ScanCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  type QueryCommandOutput,
  type ScanCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { DEFAULTS } from '../config.js';
import { DYNAMODB_BATCH_GET_KEYS } from '../domain/limits.js';
import { EVENT_STATE, OPEN_STATES, type EventRecord } from '../domain/lifecycle.js';
import { TransientError } from '../domain/reasons.js';
import { eventIdOfLabelEntry, listingPartitions } from '../domain/table-keys.js';
import { decodePageToken, encodePageToken, isAfter, type ListingPosition } from '../domain/tenant-index.js';
import type { EventListing, EventsPage, EventsQuery } from '../app/ports.js';
import { BATCH_ROUNDS, batchGet, pauseBeforeRound } from './dynamodb-batches.js';
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

/** One partition of the tenant index, read a small page at a time in due order. */
interface Stream {
  readonly key: string;
  /** Entries read and not yet merged, sorted by (due time, id). */
  buffer: ListingPosition[];
  startKey: Record<string, unknown> | undefined;
  done: boolean;
  /**
   * The due time of the last entry the partition gave: the index orders a partition by due time
   * alone, so entries due then may still follow, with ids before those read.
   */
  readThrough: number;
}

/**
 * Whether a partition must be read on before its head is merged: its head is due when the
 * partition was last read up to, and another entry due then, with an id before the head's, may
 * follow. Without this, two entries due in the same millisecond on two reads of one partition
 * came out of (due time, id) order, and a page ending between them skipped the second.
 */
function unsettled(stream: Stream): boolean {
  const [head] = stream.buffer;
  return !stream.done && (head === undefined || head.dueAt >= stream.readThrough);
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

  /** A tenant's open events (scheduled, queued or held), counted by a scan of the whole table: for reconciling its quota counter. */
  async countOpen(tenant: string): Promise<number> {
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      let result: ScanCommandOutput;
      try {
        result = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'tenant = :tenant AND #state IN (:scheduled, :queued, :held)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':tenant': tenant,
              ':scheduled': EVENT_STATE.scheduled,
              ':queued': EVENT_STATE.queued,
              ':held': EVENT_STATE.held,
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
    const streams: Stream[] = partitions.map((key) => ({
      key,
      buffer: [],
      startKey: undefined,
      done: false,
      readThrough: Number.NEGATIVE_INFINITY,
    }));
    const fromMs = Math.max(query.from ?? Number.MIN_SAFE_INTEGER, after?.dueAt ?? Number.MIN_SAFE_INTEGER);
    const untilMs = query.to ?? Number.MAX_SAFE_INTEGER;
    const read = (stream: Stream) => this.readPage(stream, { fromMs, untilMs, after, pageItems, label: query.label });

    const events: EventRecord[] = [];
    let last: ListingPosition | undefined;
    while (events.length < query.limit) {
      const candidates: ListingPosition[] = [];
      while (candidates.length < query.limit - events.length) {
        // A partition whose read entries are all merged, or whose head may yet be preceded, may hold the next one: read on before choosing.
        for (let unread = streams.filter(unsettled); unread.length > 0; unread = streams.filter(unsettled))
          await Promise.all(unread.map(read));
        let next: Stream | undefined;
        for (const stream of streams) {
          const head = stream.buffer[0];
          if (head !== undefined && (next === undefined || isAfter(next.buffer[0] as ListingPosition, head))) next = stream;
        }
        if (next === undefined) break;
        candidates.push(next.buffer.shift() as ListingPosition);
      }
      if (candidates.length === 0) break;
      const records = await this.readRecords(candidates.map(({ id }) => id));
      for (const candidate of candidates) {
        last = candidate;
        const record = records.get(candidate.id);
        if (
          record !== undefined &&
          record.tenant === tenant &&
          states.includes(record.state) &&
          (query.label === undefined || (record.labels ?? []).includes(query.label)) &&
          record.dueAt >= (query.from ?? Number.MIN_SAFE_INTEGER) &&
          record.dueAt < untilMs
        )
          events.push(record);
      }
    }
    // Whether anything follows: a partition read to the end of a page may hold nothing more.
    await Promise.all(streams.filter((stream) => stream.buffer.length === 0 && !stream.done).map(read));
    const more = streams.some((stream) => stream.buffer.length > 0);
    return { events, next: more && last !== undefined ? encodePageToken(last) : undefined };
  }

  /** The next page of one partition, past `after`, sorted by (due time, id). */
  private async readPage(
    stream: Stream,
    range: {
      readonly fromMs: number;
      readonly untilMs: number;
      readonly after: ListingPosition | undefined;
      readonly pageItems: number;
      readonly label: string | undefined;
    },
  ): Promise<void> {
    let result: QueryCommandOutput;
    try {
      result = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: TABLE.tenantIndex,
          KeyConditionExpression: '#key = :key AND #due BETWEEN :from AND :last',
          ExpressionAttributeNames: { '#key': TABLE.tenantShardKey, '#due': TABLE.dueAtKey },
          ExpressionAttributeValues: { ':key': stream.key, ':from': range.fromMs, ':last': range.untilMs - 1 },
          Limit: range.pageItems,
          ExclusiveStartKey: stream.startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
    } catch (error) {
      throw transient('Query', error);
    }
    const items = result.Items ?? [];
    this.onRead?.({ request: 'Query', items: items.length, capacityUnits: result.ConsumedCapacity?.CapacityUnits ?? 0 });
    const read = items.map((item): ListingPosition => {
      const id = String(item[TABLE.partitionKey]);
      return { dueAt: Number(item[TABLE.dueAtKey]), id: range.label === undefined ? id : eventIdOfLabelEntry(id) };
    });
    stream.readThrough = read.at(-1)?.dueAt ?? stream.readThrough;
    stream.buffer = [...stream.buffer, ...read.filter((position) => isAfter(position, range.after))].sort((a, b) =>
      isAfter(a, b) ? 1 : -1,
    );
    stream.startKey = result.LastEvaluatedKey;
    stream.done = result.LastEvaluatedKey === undefined;
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
