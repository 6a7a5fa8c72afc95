import { randomBytes } from 'node:crypto';
import { CreateTopicCommand, PublishBatchCommand, PublishCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalScheduler, type LocalScheduler } from '@adhoc-scheduler/infra';
import { createLogger, TABLE } from '@adhoc-scheduler/shared';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from '../../infra/test/local/kit.js';
import { usageBetween } from '../src/cost/estimate.js';
import { countUsage, type UsageCounter } from '../src/cost/usage-meter.js';

let scheduler: LocalScheduler;
let counter: UsageCounter;

beforeAll(async () => {
  const silent = createLogger('warn', { destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  scheduler = await startLocalScheduler({
    emulators: sharedEmulators(),
    logger: silent,
    instrumentClients: (clients) => {
      counter = countUsage(clients);
    },
  });
  // Let the start-up loader tick finish; the next one is a minute away.
  await scheduler.tick();
});

afterAll(async () => {
  await scheduler?.stop();
});

/** The counters' change across `operation`, on the service's own clients. */
async function usageOf(operation: () => Promise<unknown>) {
  const before = counter.snapshot();
  await operation();
  return usageBetween(counter.snapshot(), before);
}

const name = (label: string): string => `${label}-${randomBytes(4).toString('hex')}`;

describe('countUsage on the local service clients', () => {
  it('counts SQS requests by 64 KiB chunk, the messages they carry and where they went', async () => {
    const { sqs } = scheduler.clients;
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name('usage') }));
    const sent = await usageOf(() =>
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: [
            { Id: 'big', MessageBody: 'x'.repeat(70_000) },
            { Id: 'small', MessageBody: 'y' },
          ],
        }),
      ),
    );
    expect(sent.sqs.byOperation.SendMessageBatch).toEqual({ requests: 1, billedRequests: 2, messages: 2 });
    expect(sent.sqs.sentByQueue[QueueUrl ?? '']).toBe(2);

    const received = await usageOf(() => sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 })));
    // The service's idle pollers receive nothing meanwhile; only this receive carries messages.
    expect(received.sqs.byOperation.ReceiveMessage?.messages).toBe(2);
  });

  it('counts SNS publishes and publish-batch entries, billed by 64 KiB chunk', async () => {
    const { sns } = scheduler.clients;
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name('usage') }));
    const usage = await usageOf(async () => {
      await sns.send(
        new PublishCommand({ TopicArn, Message: 'hello', MessageAttributes: { a: { DataType: 'String', StringValue: 'b' } } }),
      );
      await sns.send(
        new PublishBatchCommand({
          TopicArn,
          PublishBatchRequestEntries: [
            { Id: '1', Message: 'z'.repeat(100_000) },
            { Id: '2', Message: 'one' },
            { Id: '3', Message: 'two' },
          ],
        }),
      );
    });
    expect(usage.sns).toEqual({ publishes: 1, publishBatches: 1, publishBatchEntries: 3, billedRequests: 1 + 2 });
  });

  it('reads the capacity units DynamoDB Local returns, and applies what AWS bills where it returns none', async () => {
    const { dynamodb } = scheduler.clients;
    const TableName = scheduler.outputs.tableName;
    const id = name('usage-item');
    const write = await usageOf(() => dynamodb.send(new PutCommand({ TableName, Item: { id, blob: 'b'.repeat(2_500) } })));
    // 2.5 KB: three 1 KB write units; no GSI keys, so no index write.
    expect(write.dynamodb).toMatchObject({ requests: 1, writeUnits: 3, requestsWithoutCapacity: 0 });

    const read = await usageOf(() => dynamodb.send(new GetCommand({ TableName, Key: { id }, ConsistentRead: true })));
    expect(read.dynamodb).toMatchObject({ requests: 1, readUnits: 1, requestsWithoutCapacity: 0 });

    const emptyQuery = await usageOf(() =>
      dynamodb.send(
        new QueryCommand({
          TableName,
          IndexName: TABLE.tenantIndex,
          KeyConditionExpression: '#k = :k',
          ExpressionAttributeNames: { '#k': TABLE.tenantShardKey },
          ExpressionAttributeValues: { ':k': 'no-such-tenant#s0' },
        }),
      ),
    );
    // DynamoDB Local reports 0 for a query that matches nothing; AWS bills half a unit.
    expect(emptyQuery.dynamodb).toMatchObject({ readUnits: 0.5, readsRaisedToMinimum: 1 });

    const failedCondition = await usageOf(() =>
      dynamodb.send(new PutCommand({ TableName, Item: { id }, ConditionExpression: 'attribute_not_exists(id)' })).catch(() => undefined),
    );
    expect(failedCondition.dynamodb).toMatchObject({ writeUnits: 1, estimatedWriteUnits: 1 });
  });

  it('adds up invocations as Lambda bills them', () => {
    const before = counter.snapshot();
    counter.recordInvocation({ fn: 'emitter', durationMs: 10.2, records: 3 });
    counter.recordInvocation({ fn: 'emitter', durationMs: 0.4, records: 1 });
    const usage = usageBetween(counter.snapshot(), before);
    expect(usage.lambda.emitter).toEqual({ invocations: 2, durationMs: 10.6, billedDurationMs: 11 + 1, records: 4 });
  });
});
