/**
 * Works a freshly started DynamoDB Local before the service takes load, so that its JIT has
 * compiled the request paths the scheduler uses while the cores are idle. A cold JVM runs them
 * interpreted at first and compiles them in the first minute of load, on the cores the service
 * and fauxqs need then (its compilers run at nice 19, see emulators.ts): a fresh service took
 * about a fifth fewer events a second in its first ingest run than in its next (BENCHMARKS.md).
 *
 * The work goes to a scratch table with the scheduler's layout, deleted afterwards (and before,
 * should a start have been killed during its warm-up): the same kinds of request as the
 * service's (conditional creates in transactions, batched writes, due queries on the tenant
 * index, batched reads, conditional updates that leave the index), on items of about an event's
 * size.
 */
import { CreateTableCommand, DeleteTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE, type ServiceLogger } from '@adhoc-scheduler/shared';
import { tableDefinition, type LocalResources } from './resources.js';

/**
 * Long enough for a cold DynamoDB Local's rate of requests to reach a warm one's on 2 cores: it
 * rose for about 6 s of this work, from a sixth of it in the first second (BENCHMARKS.md).
 */
export const DEFAULT_WARM_UP_MS = 6_000;

/** Rounds in flight at once, as the service keeps several requests open; one or two warmed it as fast (BENCHMARKS.md). */
const WORKERS = 2;
/** Items a round creates in one transaction, as ingest's conditional creates go. */
const TRANSACTION_ITEMS = 10;
/** Items a round writes in one batch, DynamoDB's most. */
const BATCH_WRITE_ITEMS = 25;
/** An event's payload of a typical size. */
const PAYLOAD = 'x'.repeat(400);
/** The requests workRound sends. */
const ROUND_REQUESTS = 5;

/**
 * Warms DynamoDB Local for `warmUpMs` (warmDynamoDbLocal below), only when none of the
 * scheduler's queues holds a message, visible, in flight or delayed: a start after a crash, or
 * with events waiting, takes up its work at once.
 *
 * The warm-up only saves time, so nothing in it stops the start: a cold DynamoDB Local has been
 * seen to refuse a well-formed transaction of two sent at once ("Invalid ConditionExpression:
 * Index 0 out of bounds for length 0", a ValidationException), where the service's own calls
 * retry. A failure ends the warm-up, is logged, and the service starts.
 */
export async function warmUpWhenNothingWaits(
  warmUpMs: number,
  { sqs, dynamodb }: { readonly sqs: SQSClient; readonly dynamodb: DynamoDBDocumentClient },
  resources: LocalResources,
  logger: ServiceLogger,
): Promise<void> {
  if (warmUpMs <= 0) return;
  const queues = [resources.publicIngestQueue, resources.ingestQueue, resources.loadingQueue, resources.delayQueue, resources.changesQueue];
  const held = await Promise.all(queues.map(({ url }) => messagesHeld(sqs, url)));
  if (held.some((count) => count > 0)) {
    logger.info({ messagesHeld: held.reduce((sum, count) => sum + count, 0) }, 'DynamoDB Local not warmed up: the queues hold messages');
    return;
  }
  try {
    logger.info(await warmDynamoDbLocal(dynamodb, `${resources.tableName}-warm-up`, warmUpMs), 'DynamoDB Local warmed up');
  } catch (error) {
    logger.warn({ err: error }, 'DynamoDB Local warm-up cut short; the service starts all the same');
  }
}

async function messagesHeld(sqs: SQSClient, queueUrl: string): Promise<number> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
  const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
  return names.reduce((sum, name) => sum + Number(Attributes[name] ?? 0), 0);
}

export interface WarmUpResult {
  /** Requests answered, scratch table aside. */
  readonly requests: number;
  readonly elapsedMs: number;
}

/**
 * Sends the scheduler's kinds of request to the scratch table `tableName` for `budgetMs` once it
 * is created, then deletes it. A table of that name left by a start killed meanwhile goes first.
 */
export async function warmDynamoDbLocal(documents: DynamoDBDocumentClient, tableName: string, budgetMs: number): Promise<WarmUpResult> {
  const started = Date.now();
  await deleteTable(documents, tableName);
  await documents.send(new CreateTableCommand(tableDefinition(tableName)));
  try {
    const deadline = Date.now() + budgetMs;
    // Every worker ends before the table goes, whichever failed first: a failed one stops, the others work on to the deadline.
    const settled = await Promise.allSettled(
      Array.from({ length: WORKERS }, (_, worker) => workUntil(documents, tableName, `w${worker}`, deadline)),
    );
    const counts = settled.map((outcome) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    });
    return { requests: counts.reduce((sum, count) => sum + count, 0), elapsedMs: Date.now() - started };
  } finally {
    await deleteTable(documents, tableName);
  }
}

async function deleteTable(documents: DynamoDBDocumentClient, tableName: string): Promise<void> {
  try {
    await documents.send(new DeleteTableCommand({ TableName: tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
}

async function workUntil(documents: DynamoDBDocumentClient, tableName: string, worker: string, deadline: number): Promise<number> {
  let requests = 0;
  for (let round = 0; Date.now() < deadline; round++) {
    requests += await workRound(documents, tableName, `${worker}-${round}`, Date.now());
  }
  return requests;
}

function warmUpItem(id: string, shard: string, dueAt: number) {
  return {
    [TABLE.partitionKey]: id,
    [TABLE.tenantShardKey]: shard,
    [TABLE.dueAtKey]: dueAt,
    state: 'stored',
    version: 1,
    payload: PAYLOAD,
    [TABLE.ttlAttribute]: Math.floor(dueAt / 1000) + 86_400,
  };
}

/** One round of the service's kinds of request on new items; returns how many requests it sent. */
async function workRound(documents: DynamoDBDocumentClient, tableName: string, round: string, dueAt: number): Promise<number> {
  const shard = `warm-up#${round}`;
  const created = Array.from({ length: TRANSACTION_ITEMS }, (_, index) => warmUpItem(`${round}-t${index}`, shard, dueAt + index));
  const batched = Array.from({ length: BATCH_WRITE_ITEMS }, (_, index) => warmUpItem(`${round}-b${index}`, shard, dueAt + index));
  await documents.send(
    new TransactWriteCommand({
      TransactItems: created.map((Item) => ({
        Put: {
          TableName: tableName,
          Item,
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey },
        },
      })),
    }),
  );
  await documents.send(new BatchWriteCommand({ RequestItems: { [tableName]: batched.map((Item) => ({ PutRequest: { Item } })) } }));
  await documents.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: TABLE.tenantIndex,
      KeyConditionExpression: '#key = :key AND #due BETWEEN :from AND :last',
      ExpressionAttributeNames: { '#key': TABLE.tenantShardKey, '#due': TABLE.dueAtKey },
      ExpressionAttributeValues: { ':key': shard, ':from': dueAt, ':last': dueAt + BATCH_WRITE_ITEMS },
      Limit: 100,
    }),
  );
  const ids = [...created, ...batched].map((item) => ({ [TABLE.partitionKey]: item[TABLE.partitionKey] }));
  await documents.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: ids } } }));
  await documents.send(
    new TransactWriteCommand({
      TransactItems: created.map(({ id }) => ({
        Update: {
          TableName: tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET #state = :emitted, version = :next REMOVE #key',
          ConditionExpression: 'attribute_exists(#id) AND #state = :stored AND version = :version',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#state': 'state', '#key': TABLE.tenantShardKey },
          ExpressionAttributeValues: { ':emitted': 'emitted', ':stored': 'stored', ':version': 1, ':next': 2 },
        },
      })),
    }),
  );
  return ROUND_REQUESTS;
}
