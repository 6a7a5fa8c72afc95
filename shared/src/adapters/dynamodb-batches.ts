import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchGetCommandOutput,
  type BatchWriteCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_GET_KEYS, DYNAMODB_BATCH_WRITE_ITEMS } from '../domain/limits.js';
import { TransientError } from '../domain/reasons.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Rounds for what a batch request left undone (throttled keys, statements or items) before giving up. */
export const BATCH_ROUNDS = 6;

/** Waits before a round of retries: nothing before the first, then 50 ms doubling up to a second. */
export function pauseBeforeRound(round: number): Promise<void> {
  return round === 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** Reads items by id, consistently, 100 keys a request; an id with no item is absent. */
export async function batchGet(
  client: DynamoDBDocumentClient,
  tableName: string,
  ids: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  const items = new Map<string, Record<string, unknown>>();
  await Promise.all(
    chunks([...new Set(ids)], DYNAMODB_BATCH_GET_KEYS).map(async (chunk) => {
      let keys: Record<string, unknown>[] = chunk.map((id) => ({ [TABLE.partitionKey]: id }));
      for (let round = 0; keys.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchGetItem left ${keys.length} keys unread`);
        await pauseBeforeRound(round);
        let result: BatchGetCommandOutput;
        try {
          result = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }));
        } catch (error) {
          throw transient('BatchGetItem', error);
        }
        for (const item of result.Responses?.[tableName] ?? []) items.set(String(item[TABLE.partitionKey]), item);
        keys = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
      }
    }),
  );
  return items;
}

/** Puts items unconditionally, 25 a request. */
export async function batchPut(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  await batchWrite(
    client,
    tableName,
    items.map((Item) => ({ PutRequest: { Item } })),
  );
}

/** Deletes items by id, unconditionally, 25 a request. */
export async function batchDelete(client: DynamoDBDocumentClient, tableName: string, ids: readonly string[]): Promise<void> {
  await batchDeleteKeys(
    client,
    tableName,
    ids.map((id) => ({ [TABLE.partitionKey]: id })),
  );
}

/** Deletes items by their whole keys, unconditionally, 25 a request. */
export async function batchDeleteKeys(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
): Promise<void> {
  await batchWrite(
    client,
    tableName,
    keys.map((Key) => ({ DeleteRequest: { Key } })),
  );
}

type WriteRequest =
  | { readonly PutRequest: { readonly Item: Record<string, unknown> } }
  | { readonly DeleteRequest: { readonly Key: Record<string, unknown> } };

async function batchWrite(client: DynamoDBDocumentClient, tableName: string, all: readonly WriteRequest[]): Promise<void> {
  await Promise.all(
    chunks(all, DYNAMODB_BATCH_WRITE_ITEMS).map(async (chunk) => {
      let requests: readonly WriteRequest[] = chunk;
      for (let round = 0; requests.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchWriteItem left ${requests.length} items unwritten`);
        await pauseBeforeRound(round);
        let result: BatchWriteCommandOutput;
        try {
          result = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests as never } }));
        } catch (error) {
          throw transient('BatchWriteItem', error);
        }
        requests = (result.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
      }
    }),
  );
}
