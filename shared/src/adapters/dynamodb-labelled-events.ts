import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobPosition } from '../domain/bulk-cancel.js';
import type { LabelledEvents, LabelledEventsQuery } from '../app/ports/bulk-cancel.js';
import { eventIdOfLabelEntry, listingPartitions } from '../domain/table-keys.js';
import { DuePartitionsMerge, dynamoDbPartitions } from './dynamodb-due-partitions.js';
import { TABLE } from './dynamodb-table.js';

/**
 * A tenant's events with a label, from the label entries under the tenant index
 * (`<tenant>#l#<label>#<n>` for each shard `n`, keys only), or all of them, from its stored,
 * queued and held partitions (series among the stored), merged by (dueAt, id) by the one reader of
 * due-ordered partitions (see DuePartitionsMerge).
 */
export class DynamoDbLabelledEvents implements LabelledEvents {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly shardCount: number,
  ) {}

  async page(query: LabelledEventsQuery): Promise<readonly JobPosition[]> {
    // A bound at or before the start leaves nothing (and a key condition from a later to an earlier time is refused).
    if (query.beforeMs !== undefined && query.beforeMs <= query.fromMs) return [];
    const open = dynamoDbPartitions(this.client, this.tableName, {
      indexName: TABLE.tenantIndex,
      keyAttribute: TABLE.tenantShardKey,
      fromMs: Math.max(query.fromMs, query.after?.dueAt ?? query.fromMs),
      untilMs: query.beforeMs ?? Number.MAX_SAFE_INTEGER,
      // A shard may hold the whole page, and one more tells whether its millisecond goes on.
      pageItems: query.limit + 1,
      ...(query.label === undefined ? {} : { eventIdOf: eventIdOfLabelEntry }),
    });
    return new DuePartitionsMerge(listingPartitions(query.tenant, query.label, this.shardCount), open, query.after).take(query.limit);
  }
}
