import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LoaderCursors, LoaderProgress } from '../app/ports/due-index.js';
import { LOADER_CURSOR_ID } from '../domain/table-keys.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/** The loader cursor item's attribute for each of its cursors. */
const CURSOR_ATTRIBUTES: Readonly<Record<keyof LoaderProgress, string>> = {
  loadedThroughMs: 'cursorMs',
  repairedThroughMs: 'repairedThroughMs',
};

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
      return { loadedThroughMs: at(CURSOR_ATTRIBUTES.loadedThroughMs), repairedThroughMs: at(CURSOR_ATTRIBUTES.repairedThroughMs) };
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  async advance(cursor: keyof LoaderProgress, toMs: number): Promise<void> {
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
}
