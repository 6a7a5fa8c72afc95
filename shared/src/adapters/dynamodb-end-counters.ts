import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NO_ENDS, type EndCountIncrement, type EndCounts } from '../domain/end-counts.js';
import { endCountsItemId } from '../domain/table-keys.js';
import { batchGet } from './dynamodb-batches.js';
import { END_COUNTS, TABLE, transient } from './dynamodb-table.js';

/**
 * Each tenant's ends by minute, in items of their own (END_COUNTS): one UpdateItem that adds to a
 * tenant's minute per end write, however many ends it recorded (see endCountIncrements).
 */
export class DynamoDbEndCounters {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Adds each increment to its tenant's minute, side by side; throws a TransientError when one could not be added. */
  async add(increments: readonly EndCountIncrement[]): Promise<void> {
    const failures = (await Promise.allSettled(increments.map((increment) => this.addOne(increment)))).filter(
      (outcome) => outcome.status === 'rejected',
    );
    if (failures.length > 0) throw transient('UpdateItem', failures[0]?.reason);
  }

  private async addOne({ tenant, minute, counts, expiresAt }: EndCountIncrement): Promise<void> {
    const all: [string, number][] = [
      [END_COUNTS.emitted, counts.emitted],
      [END_COUNTS.failed, counts.failed],
      ...counts.lateness.map((count, bin): [string, number] => [END_COUNTS.lateness(bin), count]),
    ];
    const added = all.filter(([, count]) => count > 0);
    const names = Object.fromEntries(added.map(([name], index) => [`#c${index}`, name]));
    const values = Object.fromEntries(added.map(([, count], index) => [`:c${index}`, count]));
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { [TABLE.partitionKey]: endCountsItemId(tenant, minute) },
        // Kept as long as the records it counts (ended within the same minute).
        UpdateExpression: `ADD ${added.map((_, index) => `#c${index} :c${index}`).join(', ')} SET #ttl = :ttl`,
        ExpressionAttributeNames: { ...names, '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: { ...values, ':ttl': expiresAt },
      }),
    );
  }

  /** A tenant's counts of each minute asked for (none counted: zeros), in their order. */
  async read(tenant: string, minutes: readonly number[]): Promise<EndCounts[]> {
    const items = await batchGet(
      this.client,
      this.tableName,
      minutes.map((minute) => endCountsItemId(tenant, minute)),
    );
    return minutes.map((minute) => {
      const item = items.get(endCountsItemId(tenant, minute));
      if (item === undefined) return NO_ENDS;
      const count = (name: string) => Number(item[name] ?? 0);
      return {
        emitted: count(END_COUNTS.emitted),
        failed: count(END_COUNTS.failed),
        lateness: NO_ENDS.lateness.map((_, bin) => count(END_COUNTS.lateness(bin))),
      };
    });
  }
}
