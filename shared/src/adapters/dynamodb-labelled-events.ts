import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { JobPosition } from '../domain/bulk-cancel.js';
import type { LabelledEvents, LabelledEventsQuery } from '../app/ports.js';
import { eventIdOfLabelEntry, labelShardKeys } from '../domain/table-keys.js';
import { compareByDue, isAfter } from '../domain/tenant-index.js';
import { TABLE, transient } from './dynamodb-table.js';

/**
 * A tenant's events with a label, from the label entries under the tenant index
 * (`<tenant>#l#<label>#<n>` for each shard `n`, keys only): each shard queried in due order, the
 * shards merged by (dueAt, id). Events due at the same millisecond are ordered by id here, not by
 * the index, so a shard is read on until the last due time it contributes is read whole.
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
    const shards = await Promise.all(
      labelShardKeys(query.tenant, query.label, this.shardCount).map((partition) => this.shardPage(partition, query)),
    );
    return shards.flat().sort(compareByDue).slice(0, query.limit);
  }

  /** At least the shard's first `limit` events after the cursor, and every event due when the last of them is. */
  private async shardPage(partition: string, query: LabelledEventsQuery): Promise<JobPosition[]> {
    const { after, limit } = query;
    const fromMs = Math.max(query.fromMs, after?.dueAt ?? query.fromMs);
    const found: JobPosition[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const last = found.at(-1);
      const bound = found.length >= limit && last !== undefined ? last.dueAt : undefined;
      const until = bound === undefined ? query.beforeMs : bound + 1;
      let answer: QueryCommandOutput;
      try {
        answer = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: TABLE.tenantIndex,
            KeyConditionExpression:
              until === undefined ? '#shard = :shard AND #due >= :from' : '#shard = :shard AND #due BETWEEN :from AND :last',
            ExpressionAttributeNames: { '#shard': TABLE.tenantShardKey, '#due': TABLE.dueAtKey },
            ExpressionAttributeValues: { ':shard': partition, ':from': fromMs, ...(until === undefined ? {} : { ':last': until - 1 }) },
            // Enough for the page, plus the events due with the last one.
            Limit: limit + 1,
            ExclusiveStartKey: startKey,
          }),
        );
      } catch (error) {
        throw transient('Query', error);
      }
      for (const item of answer.Items ?? []) {
        const position = { dueAt: Number(item[TABLE.dueAtKey]), id: eventIdOfLabelEntry(String(item[TABLE.partitionKey])) };
        if (isAfter(position, after)) found.push(position);
      }
      startKey = answer.LastEvaluatedKey;
      // Read on while the page is short, or while events due with the last one may follow.
    } while (startKey !== undefined && (found.length < limit || found.at(-1)?.dueAt === Number(startKey[TABLE.dueAtKey])));
    return found;
  }
}
