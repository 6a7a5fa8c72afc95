import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueEventRef, DueIndex, DuePartition } from '../app/ports.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Items one page of the index's query reads. */
const PAGE_ITEMS = 1000;

/**
 * The table's GSIs of events by due time, keys only, the loader's view: the tenant index
 * (`<tenant>#s<shard>`) and the time-bucket index of events stored before it (`<due bucket>#<shard>`).
 */
export class DynamoDbDueIndex implements DueIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async *query(partition: DuePartition, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    if (untilMs <= fromMs) return;
    const tenant = partition.index === 'tenant';
    const pages = paginateQuery(
      { client: this.client, pageSize: PAGE_ITEMS },
      {
        TableName: this.tableName,
        IndexName: tenant ? TABLE.tenantIndex : TABLE.bucketIndex,
        KeyConditionExpression: '#key = :key AND #due BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#key': tenant ? TABLE.tenantShardKey : TABLE.bucketShardKey, '#due': TABLE.dueAtKey },
        ExpressionAttributeValues: { ':key': partition.key, ':from': fromMs, ':last': untilMs - 1 },
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
}
