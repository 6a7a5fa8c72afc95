import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { isAfter, type ListingPosition } from '../domain/tenant-index.js';
import { TABLE, transient } from './dynamodb-table.js';

/**
 * One reader of the table's sharded, due-ordered partitions (a tenant's, a label's, a tenant's
 * held events): each partition read a page at a time in due order, the partitions merged into
 * one order, by due time then id, from a position on. The indexes order a partition by due time
 * alone, so the one rule for events due in the same millisecond is: a partition whose head is due
 * when its last read ended is read on before its head is merged (another entry due then, with an
 * id before the head's, may follow). However the pages fall, each event comes out once, in order,
 * and the last one taken is a true position to go on from.
 */

/** One read of a partition, on from where the last one ended: its entries in index order, and whether it is done. */
export interface PartitionRead {
  readonly entries: readonly ListingPosition[];
  readonly done: boolean;
}

/** Opens a partition: each call of what it returns reads the next page of it. */
export type OpenPartition = (key: string) => () => Promise<PartitionRead>;

interface Stream {
  readonly read: () => Promise<PartitionRead>;
  /** Entries read and not yet taken, by (due time, id). */
  buffer: ListingPosition[];
  done: boolean;
  /** The due time of the last entry read: entries due then may still follow. */
  readThrough: number;
}

const byDue = (a: ListingPosition, b: ListingPosition): number => (isAfter(a, b) ? 1 : -1);

/** Whether a partition must be read before anything is taken: its head may yet be preceded. */
function unsettled(stream: Stream): boolean {
  const [head] = stream.buffer;
  return !stream.done && (head === undefined || head.dueAt >= stream.readThrough);
}

/** The partitions' entries after `after`, merged by (due time, id), taken a few at a time. */
export class DuePartitionsMerge {
  private readonly streams: Stream[];

  constructor(
    partitions: readonly string[],
    open: OpenPartition,
    private readonly after: ListingPosition | undefined,
  ) {
    this.streams = partitions.map((key) => ({ read: open(key), buffer: [], done: false, readThrough: Number.NEGATIVE_INFINITY }));
  }

  /** The next `count` entries in order (fewer only when none is left). */
  async take(count: number): Promise<ListingPosition[]> {
    const taken: ListingPosition[] = [];
    while (taken.length < count) {
      for (let unread = this.streams.filter(unsettled); unread.length > 0; unread = this.streams.filter(unsettled))
        await Promise.all(unread.map((stream) => this.readOn(stream)));
      let next: Stream | undefined;
      for (const stream of this.streams) {
        const head = stream.buffer[0];
        if (head !== undefined && (next === undefined || isAfter(next.buffer[0] as ListingPosition, head))) next = stream;
      }
      if (next === undefined) break;
      taken.push(next.buffer.shift() as ListingPosition);
    }
    return taken;
  }

  /** Whether any entry follows those taken (a partition read to the end of a page may hold nothing more). */
  async more(): Promise<boolean> {
    await Promise.all(this.streams.filter((stream) => stream.buffer.length === 0 && !stream.done).map((stream) => this.readOn(stream)));
    return this.streams.some((stream) => stream.buffer.length > 0);
  }

  private async readOn(stream: Stream): Promise<void> {
    const { entries, done } = await stream.read();
    stream.readThrough = entries.at(-1)?.dueAt ?? stream.readThrough;
    stream.buffer = [...stream.buffer, ...entries.filter((entry) => isAfter(entry, this.after))].sort(byDue);
    stream.done = done;
  }
}

/** Which partitions of which index, and the due range [fromMs, untilMs) read of each. */
export interface DuePartitionsQuery {
  readonly indexName: string;
  readonly keyAttribute: string;
  readonly fromMs: number;
  readonly untilMs: number;
  /** Entries each read of a partition asks for. */
  readonly pageItems: number;
  /** The event an entry stands for, from the entry's `id` (a label entry's event); by default the id itself. */
  readonly eventIdOf?: (itemId: string) => string;
  /** Told of each read, with the read units DynamoDB billed for it. */
  readonly onRead?: (items: number, capacityUnits: number) => void;
}

/** Opens partitions of one of the table's indexes (keys only), read by DynamoDB queries in due order. */
export function dynamoDbPartitions(client: DynamoDBDocumentClient, tableName: string, query: DuePartitionsQuery): OpenPartition {
  return (key) => {
    let startKey: Record<string, unknown> | undefined;
    return async () => {
      let result: QueryCommandOutput;
      try {
        result = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: query.indexName,
            KeyConditionExpression: '#key = :key AND #due BETWEEN :from AND :last',
            ExpressionAttributeNames: { '#key': query.keyAttribute, '#due': TABLE.dueAtKey },
            ExpressionAttributeValues: { ':key': key, ':from': query.fromMs, ':last': query.untilMs - 1 },
            Limit: query.pageItems,
            ExclusiveStartKey: startKey,
            ReturnConsumedCapacity: 'TOTAL',
          }),
        );
      } catch (error) {
        throw transient('Query', error);
      }
      const items = result.Items ?? [];
      query.onRead?.(items.length, result.ConsumedCapacity?.CapacityUnits ?? 0);
      startKey = result.LastEvaluatedKey;
      const idOf = query.eventIdOf ?? ((id: string) => id);
      return {
        entries: items.map((item) => ({ dueAt: Number(item[TABLE.dueAtKey]), id: idOf(String(item[TABLE.partitionKey])) })),
        done: startKey === undefined,
      };
    };
  };
}

/** How a page of records is read through merged index entries (see pageOfRecords). */
export interface RecordPageReading<T> {
  readonly limit: number;
  /** Whether an entry may stand for what is listed; its record is read only then (by default, every entry's). */
  readonly wanted?: (entry: ListingPosition) => boolean;
  /** The records of these ids, those found. */
  readonly read: (ids: readonly string[]) => Promise<ReadonlyMap<string, T>>;
  /** Whether a record read is listed: the records decide (an entry may name one that has ended or moved since). */
  readonly keep: (record: T) => boolean;
}

/**
 * Up to `limit` records in the entries' order: the merge's entries taken as many as the page still
 * lacks at a time, the records of those wanted read and kept as `keep` says. With the position of
 * the last entry looked at when any follows: where the next page starts.
 */
export async function pageOfRecords<T>(
  merge: DuePartitionsMerge,
  reading: RecordPageReading<T>,
): Promise<{ readonly records: T[]; readonly next: ListingPosition | undefined }> {
  const records: T[] = [];
  let last: ListingPosition | undefined;
  while (records.length < reading.limit) {
    const candidates = await merge.take(reading.limit - records.length);
    if (candidates.length === 0) break;
    const wanted = reading.wanted === undefined ? candidates : candidates.filter(reading.wanted);
    const read = wanted.length === 0 ? new Map<string, T>() : await reading.read(wanted.map(({ id }) => id));
    for (const candidate of wanted) {
      const record = read.get(candidate.id);
      if (record !== undefined && reading.keep(record)) records.push(record);
    }
    last = candidates.at(-1);
  }
  return { records, next: (await merge.more()) ? last : undefined };
}
