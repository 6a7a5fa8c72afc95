import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueEventRef, DueIndex } from '../app/ports/due-index.js';
import { DuePartitionsMerge, dynamoDbPartitions } from './dynamodb-due-partitions.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Items one page of the index's query reads. */
const PAGE_ITEMS = 1000;

/**
 * The table's index of events by due time, keys only: the tenant index, of stored events
 * (`<tenant>#s<shard>`) and held ones (`<tenant>#h<shard>`). The loader reads each partition's
 * range whole; a resume reads pages of a tenant's held partitions merged (see DuePartitionsMerge).
 */
export class DynamoDbDueIndex implements DueIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async *query(partitionKey: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    if (untilMs <= fromMs) return;
    const pages = paginateQuery(
      { client: this.client, pageSize: PAGE_ITEMS },
      {
        TableName: this.tableName,
        IndexName: TABLE.tenantIndex,
        KeyConditionExpression: '#key = :key AND #due BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#key': TABLE.tenantShardKey, '#due': TABLE.dueAtKey },
        ExpressionAttributeValues: { ':key': partitionKey, ':from': fromMs, ':last': untilMs - 1 },
      },
    );
    try {
      for await (const page of pages) {
        yield (page.Items ?? []).map((item) => ({ id: String(item[TABLE.partitionKey]), dueAt: Number(item[TABLE.dueAtKey]) }));
      }
    } catch (error) {
      throw transient('Query', error);
    }
  }

  async page(partitionKeys: readonly string[], after: DueEventRef | undefined, limit: number): Promise<readonly DueEventRef[]> {
    const open = dynamoDbPartitions(this.client, this.tableName, {
      indexName: TABLE.tenantIndex,
      keyAttribute: TABLE.tenantShardKey,
      fromMs: after?.dueAt ?? 0,
      untilMs: Number.MAX_SAFE_INTEGER,
      // A partition may hold the whole page, and one more tells whether its millisecond goes on.
      pageItems: limit + 1,
    });
    return new DuePartitionsMerge(partitionKeys, open, after).take(limit);
  }
}
