import { describe, expect, it } from 'vitest';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ListSubscriptionsByTopicCommand, SNSClient, SubscribeCommand, UnsubscribeCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { bucketShardKeyFor, DynamoDbEventListing, EVENT_STATE, SqsDelayQueue, TABLE, type ScheduledEvent } from '@adhoc-scheduler/shared';
import { startEmulators } from '../../src/local/emulators.js';
import { resourceNames } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, type LocalScheduler } from '../../src/local/runtime.js';
import {
  expectNotEarly,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();

/**
 * An event's record exactly as the version before small records wrote it: the payload inline
 * whatever the path, the operators' index key, no copy token, and a lapsed emission claim.
 */
function recordOfEarlierVersion(event: ScheduledEvent, state: 'scheduled' | 'queued', bucketShard?: string): Record<string, unknown> {
  const now = Date.now();
  return {
    ...event,
    clientId: undefined,
    inputMessageId: `input-${event.id}`,
    state,
    tenantState: `${event.tenant}#open`,
    createdAt: now - 60_000,
    ...(state === 'queued' ? { queuedAt: now - 1_000, emitClaim: 'an older attempt', emitClaimUntil: now - 30_000 } : { bucketShard }),
    expiresAt: Math.ceil(event.dueAt / 1000) + 3600,
  };
}

describe.concurrent('an upgrade', () => {
  it('emits, once, events stored by the earlier version: one waiting in the table, one already in the delay queue', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const { dynamodb, sqs } = scheduler.clients;
      const event = (id: string, inMs: number): ScheduledEvent => ({
        id,
        tenant: 'public',
        user: 'tests',
        target: target.topicArn,
        payload: `payload of ${id}`,
        dueAt: Date.now() + inMs,
        version: 1,
      });
      const stored = event('m-earlier-stored', 9_000);
      const queued = event('m-earlier-queued', 3_000);
      const put = (item: Record<string, unknown>) => dynamodb.send(new PutCommand({ TableName: scheduler.outputs.tableName, Item: item }));
      await put(recordOfEarlierVersion(stored, 'scheduled', bucketShardKeyFor(stored.id, stored.dueAt, scheduler.config)));
      await put(recordOfEarlierVersion(queued, 'queued'));
      // Its delay-queue copy, as that version sent it: no token.
      const failed = await new SqsDelayQueue(sqs, scheduler.outputs.delayQueueUrl).send([
        { event: queued, delaySeconds: 2, queuedBy: undefined },
      ]);
      expect(failed).toEqual([]);

      const records = new DynamoDbEventListing(dynamodb, scheduler.outputs.tableName);
      for (const { id, dueAt, payload } of [queued, stored]) {
        const [delivery] = await waitFor(
          () => target.withPayload(payload).length > 0 && target.withPayload(payload),
          `${id} delivered`,
          30_000,
        );
        expectNotEarly(delivery, dueAt);
        await waitFor(async () => (await records.get(id))?.state === EVENT_STATE.emitted, `${id} recorded as emitted`);
      }
      expect(target.deliveries).toHaveLength(2);
    } finally {
      await target.stop();
      await scheduler.stop();
    }
  });

  // On emulators of its own: adding an index to a table of the shared DynamoDB Local, while other files
  // write to it, waited past two minutes in whole runs (alone it takes about ten seconds).
  it('adds the tenant index to a table an earlier version created, and emits the events stored before it and after', async () => {
    const emulators = await startEmulators({});
    const prefix = uniqueName('before-tenant-index');
    const dynamodb = new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint });
    const tableName = resourceNames(prefix).table;
    // The table as the version before the tenant index created it: the time-bucket index alone.
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
          { AttributeName: TABLE.bucketShardKey, AttributeType: 'S' },
          { AttributeName: TABLE.dueAtKey, AttributeType: 'N' },
        ],
        KeySchema: [{ AttributeName: TABLE.partitionKey, KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: TABLE.bucketIndex,
            KeySchema: [
              { AttributeName: TABLE.bucketShardKey, KeyType: 'HASH' },
              { AttributeName: TABLE.dueAtKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
    const scheduler = await startTestScheduler(emulators, { namePrefix: prefix, env: FAST_TIMINGS });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const client = new SchedulerClient(scheduler);
    try {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
      expect((Table?.GlobalSecondaryIndexes ?? []).map(({ IndexName, IndexStatus }) => [IndexName, IndexStatus]).sort()).toEqual([
        [TABLE.bucketIndex, 'ACTIVE'],
        [TABLE.tenantIndex, 'ACTIVE'],
      ]);
      const dueAt = Date.now() + 9_000;
      const before: ScheduledEvent = {
        id: 'm-stored-before-the-index',
        tenant: 'public',
        user: 'tests',
        target: target.topicArn,
        payload: 'stored before',
        dueAt,
        version: 1,
      };
      await scheduler.clients.dynamodb.send(
        new PutCommand({
          TableName: tableName,
          Item: recordOfEarlierVersion(before, 'scheduled', bucketShardKeyFor(before.id, dueAt, scheduler.config)),
        }),
      );
      // Beyond the near-path window: stored under the tenant index.
      await client.publish(request(target.topicArn, dueAt, 'stored after'));
      for (const payload of ['stored before', 'stored after']) {
        const [delivery] = await waitFor(() => target.withPayload(payload).length > 0 && target.withPayload(payload), payload, 30_000);
        expect(delivery?.receivedAt).toBeGreaterThanOrEqual(dueAt);
      }
      expect(target.deliveries).toHaveLength(2);
    } finally {
      client.destroy();
      await target.stop();
      await scheduler.stop();
      dynamodb.destroy();
      await emulators.stop();
    }
  }, 120_000);

  it("moves the shared topic's subscription, on emulators an earlier version set up, from the tenants' ingest queue to its own", async () => {
    const prefix = uniqueName('upgraded');
    const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint };
    const sns = new SNSClient(access);
    const queueArn = async (scheduler: LocalScheduler, queueUrl: string) =>
      (await scheduler.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes
        ?.QueueArn ?? '';
    const subscriptions = async (topicArn: string) =>
      ((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }))).Subscriptions ?? []).map(({ Endpoint }) => Endpoint);
    try {
      const first = await startTestScheduler(emulators, { namePrefix: prefix });
      const { inputTopicArn } = first.outputs;
      const publicQueue = await queueArn(first, first.outputs.publicIngestQueueUrl);
      const tenantsQueue = await queueArn(first, first.outputs.ingestQueueUrl);
      await first.stop();
      // The earlier version's layout: the shared topic delivering to the one ingest queue.
      const [own] = ((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: inputTopicArn }))).Subscriptions ?? []).filter(
        ({ Endpoint }) => Endpoint === publicQueue,
      );
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: own?.SubscriptionArn }));
      await sns.send(new SubscribeCommand({ TopicArn: inputTopicArn, Protocol: 'sqs', Endpoint: tenantsQueue }));
      expect(await subscriptions(inputTopicArn)).toEqual([tenantsQueue]);

      const upgraded = await startTestScheduler(emulators, { namePrefix: prefix });
      await upgraded.stop();
      expect(await subscriptions(inputTopicArn)).toEqual([publicQueue]);
    } finally {
      sns.destroy();
    }
  });
});
