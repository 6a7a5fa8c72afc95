import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueDirectoryBackfillProgress, LoaderCursor, LoaderCursors, LoaderProgress } from '../app/ports/due-index.js';
import { LOADER_CURSOR_ID } from '../domain/table-keys.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/** The loader cursor item's attribute for each of its cursors. */
const CURSOR_ATTRIBUTES: Readonly<Record<LoaderCursor, string>> = {
  loadedThroughMs: 'cursorMs',
  repairedThroughMs: 'repairedThroughMs',
};

/** The cursor item's mark that the due directory lists every stored event (LoaderProgress.dueDirectoryComplete). */
const DUE_DIRECTORY_COMPLETE = 'dueDirectoryComplete';

/** The cursor item's attributes of the directory's backfill (LoaderProgress.backfill). */
const BACKFILL = { startsAt: 'backfillStartsAt', from: 'backfillFrom' } as const;

/** The loader's cursors, both in one item of the table, the only item the loader writes. */
export class DynamoDbLoaderCursors implements LoaderCursors {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(): Promise<LoaderProgress> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID }, ConsistentRead: true }),
      );
      const at = (attribute: string): number | undefined => (typeof Item?.[attribute] === 'number' ? Item[attribute] : undefined);
      return {
        loadedThroughMs: at(CURSOR_ATTRIBUTES.loadedThroughMs),
        repairedThroughMs: at(CURSOR_ATTRIBUTES.repairedThroughMs),
        dueDirectoryComplete: Item?.[DUE_DIRECTORY_COMPLETE] === true,
        backfill: {
          startsAt: at(BACKFILL.startsAt),
          from: typeof Item?.[BACKFILL.from] === 'string' ? Item[BACKFILL.from] : undefined,
        },
      };
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  async advance(cursor: LoaderCursor, toMs: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression: 'SET #cursor = :to',
          ConditionExpression: 'attribute_not_exists(#cursor) OR #cursor < :to',
          ExpressionAttributeNames: { '#cursor': CURSOR_ATTRIBUTES[cursor] },
          ExpressionAttributeValues: { ':to': toMs },
        }),
      );
    } catch (error) {
      // A concurrent tick already moved it further: nothing to do.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }

  async saveBackfill(backfill: DueDirectoryBackfillProgress): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression:
            backfill.from === undefined ? 'SET #startsAt = :startsAt REMOVE #from' : 'SET #startsAt = :startsAt, #from = :from',
          ExpressionAttributeNames: { '#startsAt': BACKFILL.startsAt, '#from': BACKFILL.from },
          ExpressionAttributeValues: { ':startsAt': backfill.startsAt, ...(backfill.from === undefined ? {} : { ':from': backfill.from }) },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }

  async markDueDirectoryComplete(): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression: 'SET #complete = :true',
          ExpressionAttributeNames: { '#complete': DUE_DIRECTORY_COMPLETE },
          ExpressionAttributeValues: { ':true': true },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }
}
