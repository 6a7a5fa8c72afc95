import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ListSubscriptionsByTopicCommand, SNSClient, SubscribeCommand, UnsubscribeCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { bucketShardKeyFor, DynamoDbEventRecords, EVENT_STATE, SqsDelayQueue, type ScheduledEvent } from '@adhoc-scheduler/shared';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, type LocalScheduler } from '../../src/local/runtime.js';
import { expectNotEarly, FAST_TIMINGS, startTestScheduler, TopicConsumer, uniqueName, waitFor } from './kit.js';

let emulators: Emulators;
beforeAll(async () => {
  emulators = await startEmulators({});
});
afterAll(async () => {
  await emulators?.stop();
});

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

describe('an upgrade', () => {
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

      const records = new DynamoDbEventRecords(dynamodb, scheduler.outputs.tableName);
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
