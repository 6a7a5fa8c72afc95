import { DYNAMODB_WRITE_UNIT_BYTES, isConditionFailure, itemBytes, snsMessageBytes, TABLE_LAYOUT } from '@adhoc-scheduler/shared';
import { handlers, type AwsClients, type FunctionName } from '@adhoc-scheduler/functions';
import { addByKind, addByShape, type WriteShapeUsage } from './item-kinds.js';

/**
 * Counts what the service's AWS clients would be billed for, by SDK middleware on the clients
 * themselves: SNS publishes, SQS requests, DynamoDB capacity units. Lambda invocations and
 * their duration come from the runtime (`recordInvocation`). The local runtime's queue pollers
 * stand in for Lambda's event source mappings and use the same SQS client, so the receives and
 * deletes AWS's pollers would make on the service's behalf (and bill to its account) are
 * counted too.
 */

/** SNS and SQS bill every 64 KiB chunk of a request's payload as one request. */
export const BILLING_CHUNK_BYTES = 65_536;

export interface SnsUsage {
  /** Publish calls. */
  readonly publishes: number;
  readonly publishBatches: number;
  readonly publishBatchEntries: number;
  /** Publish and PublishBatch requests as billed (one per started 64 KiB chunk). */
  readonly billedRequests: number;
}

export interface SqsOperationUsage {
  readonly requests: number;
  readonly billedRequests: number;
  readonly messages: number;
}

export interface SqsUsage {
  readonly requests: number;
  readonly billedRequests: number;
  /** Receives that returned no message: the pollers' idle cost, not any event's. */
  readonly emptyReceives: number;
  /** Per SQS operation (SendMessageBatch, ReceiveMessage, DeleteMessageBatch, ...). */
  readonly byOperation: Readonly<Record<string, SqsOperationUsage>>;
  /** Messages sent, per queue URL: where the events went. */
  readonly sentByQueue: Readonly<Record<string, number>>;
}

export interface DynamoDbUsage {
  readonly requests: number;
  readonly readUnits: number;
  readonly writeUnits: number;
  /**
   * Write units estimated rather than reported: one per conditional write that failed (AWS
   * bills it, but the error carries no ConsumedCapacity), PartiQL batches' statements
   * (DynamoDB Local reports none; see estimatedStatementWriteUnits), and the transactions the
   * local service writes batches with, priced as the stack on AWS writes them (see
   * estimatedStandInWriteUnits).
   */
  readonly estimatedWriteUnits: number;
  /** Requests whose response carried no ConsumedCapacity (counted as zero units). */
  readonly requestsWithoutCapacity: number;
  /**
   * Reads raised to AWS's minimum charge (0.5 unit, 1 when strongly consistent): DynamoDB
   * Local reports 0 for a query that matches nothing, AWS bills the minimum.
   */
  readonly readsRaisedToMinimum: number;
  readonly byOperation: Readonly<Record<string, { readonly requests: number; readonly units: number }>>;
  /** Write units by the kind of item written (see itemKind): a write of several items shares its units among them. */
  readonly writeUnitsByItemKind: Readonly<Record<string, number>>;
  /** Writes by their shape (see writeShape): how many, the items they named, their units; absent from older results. */
  readonly writesByShape?: Readonly<Record<string, WriteShapeUsage>>;
}

export interface Invocation {
  readonly fn: FunctionName;
  readonly durationMs: number;
  readonly records: number;
}

export interface LambdaUsage {
  readonly invocations: number;
  /** Wall time of the handler, summed. */
  readonly durationMs: number;
  /** As Lambda bills it: each invocation rounded up to the next millisecond. */
  readonly billedDurationMs: number;
  readonly records: number;
}

export interface UsageSnapshot {
  readonly sns: SnsUsage;
  readonly sqs: SqsUsage;
  readonly dynamodb: DynamoDbUsage;
  readonly lambda: Readonly<Record<FunctionName, LambdaUsage>>;
}

export interface UsageCounter {
  /** Call from the runtime's `onInvocation`. */
  recordInvocation(invocation: Invocation): void;
  /** Totals since the counter was created (a copy). */
  snapshot(): UsageSnapshot;
}

interface MutableSqsOperation {
  requests: number;
  billedRequests: number;
  messages: number;
}

const FUNCTION_NAMES = Object.keys(handlers) as FunctionName[];

const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
const DYNAMODB_SINGLE_READS = new Set(['GetItem', 'Query', 'Scan']);

/**
 * Write units of a PartiQL batch, for which DynamoDB Local returns no ConsumedCapacity: each
 * statement as AWS bills it, whether it applies or its condition fails. An INSERT bills its
 * item (a unit per started KB) and an entry in each index whose key it has; an UPDATE of an
 * event's record bills one unit, as records are kept within one (and keep their index keys).
 */
export function estimatedStatementWriteUnits(
  statements: readonly { readonly Statement?: string; readonly Parameters?: readonly unknown[] }[],
): number {
  let units = 0;
  for (const { Statement = '', Parameters = [] } of statements) {
    if (!/^\s*INSERT\b/i.test(Statement)) {
      if (/^\s*(UPDATE|DELETE)\b/i.test(Statement)) units += 1;
      continue;
    }
    const names = [...Statement.matchAll(/'([^']+)'\s*:\s*\?/g)].map((match) => match[1] ?? '');
    const item = Object.fromEntries(names.map((name, index) => [name, Parameters[index]]));
    units += Math.max(1, Math.ceil(itemBytes(item) / DYNAMODB_WRITE_UNIT_BYTES));
    units += TABLE_LAYOUT.indexes.filter((index) => item[index.partitionKey.name] !== undefined).length;
  }
  return units;
}

interface TransactItemLike {
  readonly Put?: { readonly Item?: Readonly<Record<string, unknown>> };
  readonly Update?: { readonly Key?: Readonly<Record<string, unknown>> };
}

/**
 * A transaction the local service made in place of a PartiQL batch (see BatchWriteMode): one
 * that writes only events' records and payloads, never a tenant's counter (a cancel writes its
 * counter in a transaction on AWS too). Such a transaction is priced as the stack on AWS writes
 * the same items, statement by statement.
 */
export function isBatchStandIn(items: readonly TransactItemLike[]): boolean {
  return items.every((item) => !String(item.Update?.Key?.[TABLE_LAYOUT.partitionKey.name] ?? '').startsWith('#'));
}

/** Write units of a transaction that stands in for a PartiQL batch: each item as its statement would bill (see estimatedStatementWriteUnits). */
export function estimatedStandInWriteUnits(items: readonly TransactItemLike[]): number {
  let units = 0;
  for (const item of items) {
    const put = item.Put?.Item;
    if (put === undefined) {
      units += 1;
      continue;
    }
    units += Math.max(1, Math.ceil(itemBytes(put) / DYNAMODB_WRITE_UNIT_BYTES));
    units += TABLE_LAYOUT.indexes.filter((index) => put[index.partitionKey.name] !== undefined).length;
  }
  return units;
}

function billedChunks(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / BILLING_CHUNK_BYTES));
}

/** The API operation of a command: `PutItemCommand` and lib-dynamodb's `PutCommand` both name `PutItem`. */
export function operationName(commandName: string | undefined): string {
  const name = (commandName ?? 'Unknown').replace(/Command$/, '');
  const documentNames: Readonly<Record<string, string>> = {
    Put: 'PutItem',
    Get: 'GetItem',
    Update: 'UpdateItem',
    Delete: 'DeleteItem',
    BatchWrite: 'BatchWriteItem',
    BatchGet: 'BatchGetItem',
    TransactWrite: 'TransactWriteItems',
    TransactGet: 'TransactGetItems',
  };
  return documentNames[name] ?? name;
}

interface AttributeValueLike {
  readonly DataType?: string | undefined;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

function stringAttributes(attributes: Readonly<Record<string, AttributeValueLike>> | undefined): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    flat[name] = value.StringValue ?? (value.BinaryValue ? Buffer.from(value.BinaryValue).toString('latin1') : '');
  }
  return flat;
}

/** Message size as SNS and SQS count it: body plus attribute names, types and values. */
function messageBytes(body: string | undefined, attributes: Readonly<Record<string, AttributeValueLike>> | undefined): number {
  return snsMessageBytes(body ?? '', stringAttributes(attributes));
}

interface ConsumedCapacityLike {
  readonly CapacityUnits?: number | undefined;
}

function capacityUnits(consumed: ConsumedCapacityLike | readonly ConsumedCapacityLike[] | undefined): number | undefined {
  if (consumed === undefined) return undefined;
  const list = Array.isArray(consumed) ? consumed : [consumed as ConsumedCapacityLike];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

/** The part of the SDK's middleware stack used here, typed once for the three clients. */
export type Handler = (args: { readonly input: object }) => Promise<{ readonly output: object }>;
export interface MiddlewareStackLike {
  add(
    middleware: (next: Handler, context: { readonly commandName?: string }) => Handler,
    options: {
      readonly step: 'initialize';
      readonly priority?: 'high' | 'normal' | 'low';
      readonly name: string;
      readonly override: boolean;
    },
  ): void;
}

function addCounter(
  stack: MiddlewareStackLike,
  count: (operation: string, next: Handler, args: { readonly input: object }) => ReturnType<Handler>,
): void {
  stack.add((next, context) => (args) => count(operationName(context.commandName), next, args), {
    step: 'initialize',
    name: 'adhocSchedulerUsageCounter',
    override: true,
  });
}

/** A write its condition refused, as an item or as a transaction the refusal cancelled: billed all the same. */
function refusedByCondition(error: unknown): boolean {
  return isConditionFailure(error) || (error as { name?: string } | undefined)?.name === 'TransactionCanceledException';
}

/** Adds the counting middleware to the service's clients; call once, before they are used. */
export function countUsage(clients: AwsClients): UsageCounter {
  const sns = { publishes: 0, publishBatches: 0, publishBatchEntries: 0, billedRequests: 0 };
  const sqs = { requests: 0, billedRequests: 0, emptyReceives: 0 };
  const sqsByOperation: Record<string, MutableSqsOperation> = {};
  const sentByQueue: Record<string, number> = {};
  const dynamodb = {
    requests: 0,
    readUnits: 0,
    writeUnits: 0,
    estimatedWriteUnits: 0,
    requestsWithoutCapacity: 0,
    readsRaisedToMinimum: 0,
  };
  const dynamodbByOperation: Record<string, { requests: number; units: number }> = {};
  const writeUnitsByItemKind: Record<string, number> = {};
  const writesByShape: Record<string, { requests: number; items: number; units: number }> = {};
  const lambda = Object.fromEntries(
    FUNCTION_NAMES.map((fn) => [fn, { invocations: 0, durationMs: 0, billedDurationMs: 0, records: 0 }]),
  ) as Record<FunctionName, { invocations: number; durationMs: number; billedDurationMs: number; records: number }>;

  addCounter(clients.sns.middlewareStack, async (operation, next, args) => {
    const result = await next(args);
    const input = args.input as {
      Message?: string;
      MessageAttributes?: Record<string, AttributeValueLike>;
      PublishBatchRequestEntries?: { Message?: string; MessageAttributes?: Record<string, AttributeValueLike> }[];
    };
    if (operation === 'Publish') {
      sns.publishes += 1;
      sns.billedRequests += billedChunks(messageBytes(input.Message, input.MessageAttributes));
    } else if (operation === 'PublishBatch') {
      const entries = input.PublishBatchRequestEntries ?? [];
      sns.publishBatches += 1;
      sns.publishBatchEntries += entries.length;
      sns.billedRequests += billedChunks(entries.reduce((sum, entry) => sum + messageBytes(entry.Message, entry.MessageAttributes), 0));
    }
    return result;
  });

  addCounter(clients.sqs.middlewareStack, async (operation, next, args) => {
    const result = await next(args);
    const input = args.input as {
      QueueUrl?: string;
      MessageBody?: string;
      MessageAttributes?: Record<string, AttributeValueLike>;
      Entries?: { MessageBody?: string; MessageAttributes?: Record<string, AttributeValueLike> }[];
    };
    const output = result.output as {
      Messages?: { Body?: string; MessageAttributes?: Record<string, AttributeValueLike> }[];
      Successful?: unknown[];
    };
    let bytes = 0;
    let messages = 0;
    if (operation === 'SendMessage') {
      bytes = messageBytes(input.MessageBody, input.MessageAttributes);
      messages = 1;
    } else if (operation === 'SendMessageBatch') {
      bytes = (input.Entries ?? []).reduce((sum, entry) => sum + messageBytes(entry.MessageBody, entry.MessageAttributes), 0);
      messages = output.Successful?.length ?? 0;
    } else if (operation === 'ReceiveMessage') {
      bytes = (output.Messages ?? []).reduce((sum, message) => sum + messageBytes(message.Body, message.MessageAttributes), 0);
      messages = output.Messages?.length ?? 0;
      if (messages === 0) sqs.emptyReceives += 1;
    } else if (operation === 'DeleteMessageBatch') {
      messages = output.Successful?.length ?? 0;
    } else if (operation === 'DeleteMessage') {
      messages = 1;
    }
    if ((operation === 'SendMessage' || operation === 'SendMessageBatch') && input.QueueUrl) {
      sentByQueue[input.QueueUrl] = (sentByQueue[input.QueueUrl] ?? 0) + messages;
    }
    const billed = billedChunks(bytes);
    sqs.requests += 1;
    sqs.billedRequests += billed;
    sqsByOperation[operation] ??= { requests: 0, billedRequests: 0, messages: 0 };
    const entry = sqsByOperation[operation];
    entry.requests += 1;
    entry.billedRequests += billed;
    entry.messages += messages;
    return result;
  });

  const countRequest = (operation: string): { requests: number; units: number } => {
    dynamodbByOperation[operation] ??= { requests: 0, units: 0 };
    const entry = dynamodbByOperation[operation];
    dynamodb.requests += 1;
    entry.requests += 1;
    return entry;
  };
  addCounter(clients.dynamodb.middlewareStack, async (operation, next, args) => {
    const input = args.input as { ReturnConsumedCapacity?: string; ConsistentRead?: boolean };
    // Ask for the units consumed; DynamoDB (and DynamoDB Local) then returns them.
    if (input.ReturnConsumedCapacity === undefined || input.ReturnConsumedCapacity === 'NONE') input.ReturnConsumedCapacity = 'TOTAL';
    const isWrite = DYNAMODB_WRITES.has(operation);
    const transactItems = (args.input as { TransactItems?: TransactItemLike[] }).TransactItems;
    const standIn = operation === 'TransactWriteItems' && transactItems !== undefined && isBatchStandIn(transactItems);
    const estimate = (entry: { units: number }, units: number, refused = false): void => {
      dynamodb.estimatedWriteUnits += units;
      dynamodb.writeUnits += units;
      entry.units += units;
      addByKind(writeUnitsByItemKind, args.input, units);
      addByShape(writesByShape, refused ? `${operation}, refused` : operation, args.input, units);
    };
    let result: Awaited<ReturnType<typeof next>>;
    try {
      result = await next(args);
    } catch (error) {
      const entry = countRequest(operation);
      if (isWrite && refusedByCondition(error)) {
        // A refused statement bills a unit; a stand-in transaction's other items are written again in the next one.
        const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
        estimate(entry, standIn ? (reasons?.filter(({ Code }) => Code === 'ConditionalCheckFailed').length ?? 1) : 1, true);
      }
      throw error;
    }
    // Counted on completion, with their units, so a snapshot taken mid-request stays consistent.
    const entry = countRequest(operation);
    let units = capacityUnits((result.output as { ConsumedCapacity?: ConsumedCapacityLike | ConsumedCapacityLike[] }).ConsumedCapacity);
    if (standIn) {
      estimate(entry, estimatedStandInWriteUnits(transactItems));
    } else if (units === undefined && operation === 'BatchExecuteStatement') {
      estimate(
        entry,
        estimatedStatementWriteUnits((args.input as { Statements?: { Statement?: string; Parameters?: unknown[] }[] }).Statements ?? []),
      );
    } else if (units === undefined) {
      dynamodb.requestsWithoutCapacity += 1;
    } else {
      const minimum = input.ConsistentRead ? 1 : 0.5;
      if (DYNAMODB_SINGLE_READS.has(operation) && units < minimum) {
        units = minimum;
        dynamodb.readsRaisedToMinimum += 1;
      }
      if (isWrite) {
        dynamodb.writeUnits += units;
        addByKind(writeUnitsByItemKind, args.input, units);
        addByShape(writesByShape, operation, args.input, units);
      } else dynamodb.readUnits += units;
      entry.units += units;
    }
    return result;
  });

  return {
    recordInvocation({ fn, durationMs, records }) {
      const usage = lambda[fn];
      usage.invocations += 1;
      usage.durationMs += durationMs;
      usage.billedDurationMs += Math.max(1, Math.ceil(durationMs));
      usage.records += records;
    },
    snapshot() {
      return structuredClone({
        sns,
        sqs: { ...sqs, byOperation: sqsByOperation, sentByQueue },
        dynamodb: { ...dynamodb, byOperation: dynamodbByOperation, writeUnitsByItemKind, writesByShape },
        lambda,
      });
    },
  };
}
