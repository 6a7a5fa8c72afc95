import {
  BatchExecuteStatementCommand,
  TransactWriteCommand,
  type BatchExecuteStatementCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_STATEMENTS, DYNAMODB_TRANSACTION_ITEMS } from '../domain/limits.js';
import { BATCH_ROUNDS, chunks, pauseBeforeRound } from './dynamodb-batches.js';
import { TABLE } from './dynamodb-table.js';
import type { BatchWriteMode } from '../config.js';

/**
 * Conditional writes of many items, each with its own condition and its own outcome, in either of
 * the two ways BatchWriteMode (config.ts) names.
 */

/**
 * followsLastChange (shared/src/domain/lifecycle.ts) as a condition on the item's attributes
 * `at` and `by`, against the change's values `:at` (published at) and `:by` (its request).
 */
export function followsLastChangeCondition(at: string, by: string): string {
  return `(attribute_not_exists(${at}) OR ${at} < :at OR (${at} = :at AND ${by} <> :by))`;
}

export type Condition =
  | { readonly op: '=' | '<>' | '<' | '<=' | '>' | '>='; readonly attribute: string; readonly value: unknown }
  | { readonly op: 'missing' | 'present'; readonly attribute: string }
  | { readonly op: 'and' | 'or'; readonly conditions: readonly Condition[] };

/** The condition that an item's attribute holds a value. */
export function attributeIs(attribute: string, value: unknown): Condition {
  return { op: '=', attribute, value };
}

export type ConditionalWrite =
  /** A new item; refused when its key exists. */
  | { readonly kind: 'insert'; readonly item: Readonly<Record<string, unknown>> }
  /** Sets and removes attributes of an existing item; refused when it is missing or the condition fails. */
  | {
      readonly kind: 'update';
      readonly id: string;
      readonly set: Readonly<Record<string, unknown>>;
      readonly remove?: readonly string[];
      readonly condition: Condition;
    };

/**
 * How each write ended: applied, refused by its condition, or unknown (it kept failing for
 * reasons a retry could fix, or its answer was lost: it may have been applied).
 */
export type WriteOutcome = 'applied' | 'refused' | 'unknown';

export interface ConditionalWriter {
  write(writes: readonly ConditionalWrite[]): Promise<WriteOutcome[]>;
}

/** Errors that say the request itself is wrong: no retry can fix them. */
const INVALID = new Set([
  'ValidationError',
  'ValidationException',
  'AccessDenied',
  'AccessDeniedException',
  'ResourceNotFound',
  'ResourceNotFoundException',
]);

export class InvalidWriteError extends Error {
  override readonly name = 'InvalidWriteError';
}

// ---- PartiQL ----------------------------------------------------------------------------------

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

function partiqlCondition(condition: Condition, parameters: unknown[]): string {
  switch (condition.op) {
    case 'missing':
      return `${quoted(condition.attribute)} IS MISSING`;
    case 'present':
      return `${quoted(condition.attribute)} IS NOT MISSING`;
    case 'and':
    case 'or':
      return `(${condition.conditions.map((part) => partiqlCondition(part, parameters)).join(` ${condition.op.toUpperCase()} `)})`;
    default:
      parameters.push(condition.value);
      return `${quoted(condition.attribute)} ${condition.op} ?`;
  }
}

export function toStatement(tableName: string, write: ConditionalWrite): { Statement: string; Parameters: unknown[] } {
  const parameters: unknown[] = [];
  if (write.kind === 'insert') {
    const names = Object.keys(write.item).filter((name) => write.item[name] !== undefined);
    return {
      Statement: `INSERT INTO ${quoted(tableName)} VALUE {${names.map((name) => `'${name}': ?`).join(', ')}}`,
      Parameters: names.map((name) => write.item[name]),
    };
  }
  const sets = Object.entries(write.set).filter(([, value]) => value !== undefined);
  const setClause = sets.map(([name]) => `${quoted(name)} = ?`).join(', ');
  parameters.push(...sets.map(([, value]) => value));
  const removeClause = (write.remove ?? []).map((name) => ` REMOVE ${quoted(name)}`).join('');
  parameters.push(write.id);
  const where = `${quoted(TABLE.partitionKey)} = ? AND ${partiqlCondition(write.condition, parameters)}`;
  return { Statement: `UPDATE ${quoted(tableName)} SET ${setClause}${removeClause} WHERE ${where}`, Parameters: parameters };
}

export class StatementWriter implements ConditionalWriter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async write(writes: readonly ConditionalWrite[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = writes.map(() => 'unknown');
    const indexed = writes.map((write, index) => ({ statement: toStatement(this.tableName, write), index }));
    await Promise.all(
      chunks(indexed, DYNAMODB_BATCH_STATEMENTS).map(async (chunk) => {
        let pending = chunk;
        for (let round = 0; pending.length > 0 && round < BATCH_ROUNDS; round++) {
          await pauseBeforeRound(round);
          let responses: BatchExecuteStatementCommandOutput['Responses'];
          try {
            ({ Responses: responses } = await this.client.send(
              new BatchExecuteStatementCommand({ Statements: pending.map(({ statement }) => statement) }),
            ));
          } catch (error) {
            // The answer is lost or refused as a whole; retrying is safe, as every write is conditional.
            if (INVALID.has((error as Error)?.name))
              throw new InvalidWriteError(`DynamoDB refused a batch of statements: ${(error as Error).message}`, { cause: error });
            continue;
          }
          const retry: typeof pending = [];
          pending.forEach((entry, position) => {
            const code = responses?.[position]?.Error?.Code;
            if (code === undefined) outcomes[entry.index] = 'applied';
            else if (code === 'ConditionalCheckFailed' || code === 'DuplicateItem') outcomes[entry.index] = 'refused';
            else if (INVALID.has(code))
              throw new InvalidWriteError(`DynamoDB refused a statement (${code}): ${responses?.[position]?.Error?.Message}`);
            else retry.push(entry);
          });
          pending = retry;
        }
      }),
    );
    return outcomes;
  }
}

// ---- Transactions -----------------------------------------------------------------------------

interface Expression {
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

function expressionName(expression: Expression, attribute: string): string {
  const placeholder = `#a${Object.keys(expression.names).length}`;
  expression.names[placeholder] = attribute;
  return placeholder;
}

function expressionValue(expression: Expression, value: unknown): string {
  const placeholder = `:v${Object.keys(expression.values).length}`;
  expression.values[placeholder] = value;
  return placeholder;
}

function conditionExpression(condition: Condition, expression: Expression): string {
  switch (condition.op) {
    case 'missing':
      return `attribute_not_exists(${expressionName(expression, condition.attribute)})`;
    case 'present':
      return `attribute_exists(${expressionName(expression, condition.attribute)})`;
    case 'and':
    case 'or':
      return `(${condition.conditions.map((part) => conditionExpression(part, expression)).join(` ${condition.op.toUpperCase()} `)})`;
    default:
      return `${expressionName(expression, condition.attribute)} ${condition.op} ${expressionValue(expression, condition.value)}`;
  }
}

export function toTransactItem(tableName: string, write: ConditionalWrite): Record<string, unknown> {
  const expression: Expression = { names: {}, values: {} };
  if (write.kind === 'insert') {
    return {
      Put: {
        TableName: tableName,
        Item: write.item,
        ConditionExpression: `attribute_not_exists(${expressionName(expression, TABLE.partitionKey)})`,
        ExpressionAttributeNames: expression.names,
      },
    };
  }
  const sets = Object.entries(write.set)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${expressionName(expression, name)} = ${expressionValue(expression, value)}`);
  const removes = (write.remove ?? []).map((name) => expressionName(expression, name));
  // As a PartiQL UPDATE, a missing item is refused, not created.
  const condition = `attribute_exists(${expressionName(expression, TABLE.partitionKey)}) AND ${conditionExpression(write.condition, expression)}`;
  return {
    Update: {
      TableName: tableName,
      Key: { [TABLE.partitionKey]: write.id },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: expression.names,
      ExpressionAttributeValues: expression.values,
    },
  };
}

function keyOf(write: ConditionalWrite): string {
  return write.kind === 'insert' ? String(write.item[TABLE.partitionKey]) : write.id;
}

export class TransactionWriter implements ConditionalWriter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async write(writes: readonly ConditionalWrite[]): Promise<WriteOutcome[]> {
    const outcomes: WriteOutcome[] = writes.map(() => 'unknown');
    let pending: Pending[] = writes.map((write, index) => ({
      item: toTransactItem(this.tableName, write),
      key: keyOf(write),
      index,
      alone: false,
    }));
    for (let round = 0; pending.length > 0 && round < BATCH_ROUNDS; round++) {
      await pauseBeforeRound(round);
      // A transaction names each item once: a second write of the same item waits for the next round.
      const keys = new Set<string>();
      const now: Pending[] = [];
      const later: Pending[] = [];
      for (const entry of pending) {
        (keys.has(entry.key) ? later : now).push(entry);
        keys.add(entry.key);
      }
      // An item that failed on its own account goes alone, so it cannot hold the others back again.
      const transactions = [
        ...chunks(
          now.filter(({ alone }) => !alone),
          DYNAMODB_TRANSACTION_ITEMS,
        ),
        ...now.filter(({ alone }) => alone).map((entry) => [entry]),
      ];
      const retried = await Promise.all(transactions.map((transaction) => this.transact(transaction, outcomes)));
      pending = [...retried.flat(), ...later].sort((a, b) => a.index - b.index);
    }
    return outcomes;
  }

  /** One transaction; returns the entries to try again (all of them when the answer is lost). */
  private async transact(transaction: readonly Pending[], outcomes: WriteOutcome[]): Promise<Pending[]> {
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: transaction.map(({ item }) => item) as never }));
    } catch (error) {
      const { name, message } = error as Error;
      if (name !== 'TransactionCanceledException') {
        if (INVALID.has(name)) throw new InvalidWriteError(`DynamoDB refused a transaction: ${message}`, { cause: error });
        return [...transaction];
      }
      const reasons = (error as { CancellationReasons?: { Code?: string; Message?: string }[] }).CancellationReasons ?? [];
      const retry: Pending[] = [];
      transaction.forEach((entry, position) => {
        const code = reasons[position]?.Code;
        if (code === 'ConditionalCheckFailed') outcomes[entry.index] = 'refused';
        else if (code !== undefined && INVALID.has(code))
          throw new InvalidWriteError(`DynamoDB refused a write (${code}): ${reasons[position]?.Message}`);
        // Cancelled for another item's sake ('None'): again, together; its own conflict or throttling: again, alone.
        else retry.push({ ...entry, alone: code !== undefined && code !== 'None' });
      });
      return retry;
    }
    for (const { index } of transaction) outcomes[index] = 'applied';
    return [];
  }
}

/** A write on its way through the transactions' rounds. */
interface Pending {
  readonly item: Record<string, unknown>;
  readonly key: string;
  readonly index: number;
  readonly alone: boolean;
}

export function conditionalWriter(mode: BatchWriteMode, client: DynamoDBDocumentClient, tableName: string): ConditionalWriter {
  return mode === 'transactions' ? new TransactionWriter(client, tableName) : new StatementWriter(client, tableName);
}
