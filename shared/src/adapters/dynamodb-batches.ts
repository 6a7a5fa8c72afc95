import { BatchExecuteStatementCommand, BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_GET_KEYS, DYNAMODB_BATCH_STATEMENTS, DYNAMODB_BATCH_WRITE_ITEMS } from '../domain/limits.js';
import { TransientError } from '../domain/reasons.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Rounds for what a batch request left undone (throttled keys, statements or items) before giving up. */
const BATCH_ROUNDS = 6;
const backoffMs = (round: number): number => Math.min(1000, 25 * 2 ** round);
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** Reads items by id, consistently, 100 keys a request; an id with no item is absent. */
export async function batchGet(client: DynamoDBDocumentClient, tableName: string, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const items = new Map<string, Record<string, unknown>>();
  await Promise.all(
    chunks([...new Set(ids)], DYNAMODB_BATCH_GET_KEYS).map(async (chunk) => {
      let keys: Record<string, unknown>[] = chunk.map((id) => ({ [TABLE.partitionKey]: id }));
      for (let round = 0; keys.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchGetItem left ${keys.length} keys unread`);
        if (round > 0) await pause(backoffMs(round));
        let result;
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
export async function batchPut(client: DynamoDBDocumentClient, tableName: string, items: readonly Record<string, unknown>[]): Promise<void> {
  await Promise.all(
    chunks(items, DYNAMODB_BATCH_WRITE_ITEMS).map(async (chunk) => {
      let requests: { PutRequest?: { Item: Record<string, unknown> } }[] = chunk.map((Item) => ({ PutRequest: { Item } }));
      for (let round = 0; requests.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchWriteItem left ${requests.length} items unwritten`);
        if (round > 0) await pause(backoffMs(round));
        let result;
        try {
          result = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests as never } }));
        } catch (error) {
          throw transient('BatchWriteItem', error);
        }
        requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
      }
    }),
  );
}

export interface Statement {
  readonly Statement: string;
  readonly Parameters: readonly unknown[];
}

/** How one statement ended: applied, or refused by its condition (a failed insert: the key exists). */
export type StatementOutcome = 'applied' | 'condition-failed' | 'duplicate-item';

/**
 * Runs PartiQL statements, 25 a request, each with its own condition. Statements that failed
 * for a reason a retry can fix (throttling, a transaction conflict, an internal error) are
 * retried with backoff; a statement still failing then makes the whole call fail.
 */
export async function batchStatements(client: DynamoDBDocumentClient, statements: readonly Statement[]): Promise<StatementOutcome[]> {
  const outcomes: StatementOutcome[] = statements.map(() => 'applied');
  await Promise.all(
    chunks(
      statements.map((statement, index) => ({ statement, index })),
      DYNAMODB_BATCH_STATEMENTS,
    ).map(async (chunk) => {
      let pending = chunk;
      for (let round = 0; pending.length > 0; round++) {
        if (round === BATCH_ROUNDS) throw new TransientError(`DynamoDB BatchExecuteStatement left ${pending.length} statements undone`);
        if (round > 0) await pause(backoffMs(round));
        let result;
        try {
          result = await client.send(
            new BatchExecuteStatementCommand({ Statements: pending.map(({ statement }) => ({ ...statement, Parameters: [...statement.Parameters] })) }),
          );
        } catch (error) {
          throw transient('BatchExecuteStatement', error);
        }
        const retry: typeof pending = [];
        pending.forEach((entry, position) => {
          const code = result.Responses?.[position]?.Error?.Code;
          if (code === undefined) outcomes[entry.index] = 'applied';
          else if (code === 'ConditionalCheckFailed') outcomes[entry.index] = 'condition-failed';
          else if (code === 'DuplicateItem') outcomes[entry.index] = 'duplicate-item';
          else if (code === 'ValidationError' || code === 'AccessDenied' || code === 'ResourceNotFound') {
            throw new Error(`DynamoDB refused a statement (${code}): ${result.Responses?.[position]?.Error?.Message}`);
          } else retry.push(entry);
        });
        pending = retry;
      }
    }),
  );
  return outcomes;
}
