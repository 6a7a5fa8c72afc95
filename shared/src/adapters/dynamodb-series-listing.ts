import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULTS } from '../config.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { eventIdOfLabelEntry, isSeriesId, seriesListingPartitions } from '../domain/table-keys.js';
import { decodePageToken, encodePageToken } from '../domain/tenant-index.js';
import type { SeriesListing, SeriesPage, SeriesQuery } from '../app/ports/listing.js';
import { DuePartitionsMerge, dynamoDbPartitions, pageOfRecords } from './dynamodb-due-partitions.js';
import { readEvents } from './dynamodb-event-reads.js';
import { DynamoDbSeriesStore } from './dynamodb-series-store.js';
import { TABLE } from './dynamodb-table.js';

/**
 * Index entries each read of a partition asks for: the partitions a series is listed in hold the
 * tenant's stored events (or labelled events) too, most of them not series, and keys-only
 * entries are small, so a read takes many.
 */
const ENTRIES_PER_READ = 100;

/**
 * Operators' reads of a tenant's series: a page of them through the tenant index, as the event
 * listing pages (the same partition reader and merge), keeping the entries of series ids and
 * reading their records in batches; and the events their occurrences became.
 */
export class DynamoDbSeriesListing implements SeriesListing {
  private readonly shardCount: number;
  private readonly store: DynamoDbSeriesStore;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { readonly shardCount?: number } = {},
  ) {
    this.shardCount = options.shardCount ?? DEFAULTS.shardCount;
    this.store = new DynamoDbSeriesStore(client, tableName);
  }

  /**
   * A completed or cancelled series leaves the index (and its label entries are deleted): a page
   * holds the active series, and any that ended between the index read and the record's, as its
   * record says.
   */
  async listSeries(tenant: string, query: SeriesQuery): Promise<SeriesPage> {
    const after = query.after === undefined ? undefined : decodePageToken(query.after);
    const open = dynamoDbPartitions(this.client, this.tableName, {
      indexName: TABLE.tenantIndex,
      keyAttribute: TABLE.tenantShardKey,
      fromMs: after?.dueAt ?? Number.MIN_SAFE_INTEGER,
      untilMs: Number.MAX_SAFE_INTEGER,
      pageItems: ENTRIES_PER_READ,
      ...(query.label === undefined ? {} : { eventIdOf: eventIdOfLabelEntry }),
    });
    const merge = new DuePartitionsMerge(seriesListingPartitions(tenant, query.label, this.shardCount), open, after);
    const { records, next } = await pageOfRecords(merge, {
      limit: query.limit,
      wanted: ({ id }) => isSeriesId(id),
      read: (ids) => this.store.read(ids),
      keep: (series) => series.tenant === tenant && (query.label === undefined || (series.labels ?? []).includes(query.label)),
    });
    return { series: records, next: next === undefined ? undefined : encodePageToken(next) };
  }

  events(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>> {
    return readEvents({ client: this.client, tableName: this.tableName }, ids);
  }
}
