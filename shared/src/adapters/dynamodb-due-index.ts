import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueEventRef, DueIndex } from '../app/ports.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Items one page of the index's query reads. */
const PAGE_ITEMS = 1000;

/** The table's GSI of stored events, `<due bucket>#<shard>` by due time: keys only, the loader's view. */
export class DynamoDbDueIndex implements DueIndex {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async *query(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    if (untilMs <= fromMs) return;
    const pages = paginateQuery(
      { client: this.client, pageSize: PAGE_ITEMS },
      {
        TableName: this.tableName,
        IndexName: TABLE.dueIndex,
        KeyConditionExpression: '#bucket = :bucket AND #due BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#bucket': TABLE.bucketShardKey, '#due': TABLE.dueAtKey },
        ExpressionAttributeValues: { ':bucket': bucketShard, ':from': fromMs, ':last': untilMs - 1 },
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
