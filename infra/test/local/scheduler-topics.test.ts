import { describe, expect, it } from 'vitest';
import { clientsFor, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { DynamoDbEventListing, eventIdFor, REASON, SqsDelayQueue, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import {
  capturingLogger,
  expectNotEarly,
  FAST_TIMINGS,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

/**
 * The scheduler never delivers into itself. Its input topics live in its own account, which no
 * tenant owns: without the rule, anyone on the shared topic could target a tenant's input topic
 * and have the scheduler publish a request there as that tenant's.
 */
const emulators = sharedEmulators();

const ACME_ACCOUNT = '111111111111';
/** Acme's own account holds none of the local topics: it may target the emulators' account, where they are. */
const TENANTS: TenantsDocument = { tenants: [{ id: 'acme', accounts: [ACME_ACCOUNT], targetAccounts: [LOCAL_ACCOUNT] }] };

async function setup() {
  const { logger, lines } = capturingLogger();
  const scheduler = await startTestScheduler(emulators, { logger, tenants: TENANTS, env: FAST_TIMINGS });
  const acmeTopic = scheduler.outputs.tenantInputTopicArns.acme ?? '';
  return { scheduler, lines, acmeTopic, acme: new SchedulerClient(scheduler, acmeTopic), shared: new SchedulerClient(scheduler) };
}

/** Every message published to a topic, read from a queue of the test's own subscribed to it. */
async function watch(endpoint: string, topicArn: string): Promise<{ readonly received: Received[]; stop(): Promise<void> }> {
  const received: Received[] = [];
  const subscriber = await TopicSubscriber.subscribe(
    clientsFor({ region: LOCAL_REGION, endpoint, credentials: LOCAL_CREDENTIALS }),
    topicArn,
    uniqueName('watch'),
    (message) => received.push(message),
  );
  return { received, stop: () => subscriber.stop() };
}

describe.concurrent("the scheduler's own topics", () => {
  it("refuse a public request that targets a tenant's input topic with a cancel: the tenant's event is delivered on time, once", async () => {
    const { scheduler, lines, acmeTopic, acme, shared } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      // Far enough ahead for the cancel, had it come through the scheduler, to be before the change cutoff.
      const dueAt = Date.now() + 15_000;
      await acme.publish(request(target.topicArn, dueAt, 'order-42 is due', { id: 'order-42' }));
      const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
      await waitFor(() => records.get(eventIdFor('acme', '', 'order-42', '')), 'order-42 recorded');

      // The attack: on the shared topic, open to anyone, a payload that is acme's cancel, due at once, to acme's input topic.
      await shared.publish(request(acmeTopic, Date.now(), JSON.stringify({ action: 'cancel', id: 'order-42' }), { user: 'mallory' }));
      const refusal = await waitFor(
        () => lines.find((line) => line.reason === REASON.TARGET_IS_SCHEDULER_TOPIC),
        'the refusal in the logs',
      );
      expect(refusal.notice).toMatchObject({ details: { field: 'target' }, event: { target: acmeTopic, user: 'mallory' } });

      const [delivery] = await waitFor(
        () => target.withPayload('order-42 is due').length > 0 && target.withPayload('order-42 is due'),
        'order-42 delivered',
      );
      expect(scheduledAt(delivery as Received)).toBe(dueAt);
      expectNotEarly(delivery, dueAt);
      expect((delivery?.receivedAt ?? Infinity) - dueAt).toBeLessThan(1_000);
      // Once: a later event of acme's arrives, and still only one copy of order-42.
      await acme.publish(request(target.topicArn, Date.now() + 500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('order-42 is due')).toHaveLength(1);
      expect(lines.filter((line) => line.msg === 'event cancelled')).toEqual([]);
    } finally {
      acme.destroy();
      shared.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('fail an event that names one and got in before ingest refused them, as IAM would on AWS: TARGET_ACCESS_DENIED, and nothing reaches the topic', async () => {
    const { scheduler, lines, shared } = await setup();
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    const inputTopic = await watch(scheduler.outputs.endpoint, scheduler.outputs.inputTopicArn);
    try {
      // Straight onto the delay queue, as a stored event of an earlier version would come.
      const event = {
        id: 'm-stored-before-the-rule',
        tenant: 'public',
        user: 'mallory',
        target: scheduler.outputs.inputTopicArn,
        payload: 'into the input topic',
        failureTopic: failures.topicArn,
        dueAt: Date.now() + 1_500,
        version: 1,
      };
      expect(
        await new SqsDelayQueue(scheduler.clients.sqs, scheduler.outputs.delayQueueUrl).send([
          { event, delaySeconds: 0, queuedBy: undefined },
        ]),
      ).toEqual([]);

      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the failure notice');
      expect(notice).toMatchObject({ reason: REASON.TARGET_ACCESS_DENIED, eventId: event.id });
      expect(lines.filter((line) => line.reason === REASON.TARGET_ACCESS_DENIED && line.eventId === event.id)).toHaveLength(1);

      // The watch works: what a client publishes there arrives; the event's payload never did.
      await shared.publish('sentinel');
      await waitFor(() => inputTopic.received.some((message) => message.body === 'sentinel'), 'the sentinel on the input topic');
      expect(inputTopic.received.map((message) => message.body)).toEqual(['sentinel']);
    } finally {
      shared.destroy();
      await inputTopic.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });
});
