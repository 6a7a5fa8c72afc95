import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LastError, LastErrors } from '../app/ports/errors-and-refusals.js';
import { SQS_MAX_RETENTION_SECONDS } from '../domain/limits.js';
import { lastErrorItemId } from '../domain/table-keys.js';
import { batchGet, batchPut } from './dynamodb-batches.js';
import { TABLE } from './dynamodb-table.js';

/**
 * The last error of each failed record, one item per message in the events' table, kept as long
 * as a dead-letter queue keeps a message (the most SQS allows): the item expires by TTL, so a
 * message that failed once and then succeeded leaves nothing for long.
 */
export class DynamoDbLastErrors implements LastErrors {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async write(errors: readonly LastError[]): Promise<void> {
    await batchPut(
      this.client,
      this.tableName,
      // One batch may fail a message twice only if SQS handed it out twice: either error will do.
      [...new Map(errors.map((error) => [error.messageId, error])).values()].map((error) => ({
        [TABLE.partitionKey]: lastErrorItemId(error.messageId),
        messageId: error.messageId,
        fn: error.fn,
        errorName: error.error.name,
        errorMessage: error.error.message,
        failedAt: error.at,
        receiveCount: error.receiveCount,
        [TABLE.ttlAttribute]: Math.floor(error.at / 1000) + SQS_MAX_RETENTION_SECONDS,
      })),
    );
  }

  async read(messageIds: readonly string[]): Promise<ReadonlyMap<string, LastError>> {
    const items = await batchGet(this.client, this.tableName, messageIds.map(lastErrorItemId));
    const errors = new Map<string, LastError>();
    for (const item of items.values()) {
      const { messageId, fn, errorName, errorMessage, failedAt, receiveCount } = item;
      if (typeof messageId !== 'string') continue;
      errors.set(messageId, {
        messageId,
        fn: String(fn),
        error: { name: String(errorName), message: String(errorMessage) },
        at: Number(failedAt),
        receiveCount: Number(receiveCount),
      });
    }
    return errors;
  }
}
