import { describe, expect, it } from 'vitest';
import type { PublishCommandInput } from '@aws-sdk/client-sns';
import { EMISSION_ATTRIBUTE } from '@adhoc-scheduler/shared';
import {
  expectNotEarly,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();

async function setup() {
  const scheduler = await startTestScheduler(emulators);
  const client = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  return {
    scheduler,
    client,
    target,
    async teardown() {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    },
  };
}

describe.concurrent('near path (due within the window, straight to the delay queue)', () => {
  it('delivers the payload byte for byte at its due time, never before, with identifying attributes', async () => {
    const { client, target, teardown } = await setup();
    try {
      // Characters beyond the BMP are left out: fauxqs's SNS-to-SQS delivery refuses them (AWS does not).
      const payload = '{"reminder":"stand-up"} \u00e9\u4e2d \\n "quoted"';
      // Far enough ahead for its copy to reach the emitter early on a busy machine: its hold is then what is tested.
      const dueAt = Date.now() + 8_000;
      await client.publish(request(target.topicArn, dueAt, payload, { user: 'alice' }));

      const delivery = await waitFor(() => target.withPayload(payload)[0], 'the delivery');
      expect(delivery.body).toBe(payload);
      expect(scheduledAt(delivery)).toBe(dueAt);
      expectNotEarly(delivery, dueAt);
      expect(delivery.attributes[EMISSION_ATTRIBUTE.eventId]).toMatch(/^m-/);
      expect(delivery.attributes[EMISSION_ATTRIBUTE.user]).toBe('alice');
    } finally {
      await teardown();
    }
  });

  it('publishes at or after the due time even when every timer fires early: the emitter asks the clock again', async () => {
    const EARLY_MS = 30;
    const publishedAt: number[] = [];
    let targetArn = '';
    const scheduler = await startTestScheduler(emulators, {
      clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - EARLY_MS))) },
      instrumentClients: (clients) =>
        clients.sns.middlewareStack.add(
          (next) => async (args) => {
            if ((args.input as Partial<PublishCommandInput>).TopicArn === targetArn) publishedAt.push(Date.now());
            return next(args);
          },
          { step: 'initialize', name: 'recordPublishTimes' },
        ),
    });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    targetArn = target.topicArn;
    try {
      // Far enough ahead for its copy to reach the emitter, and its timers to run, before the due time.
      const dueAt = Date.now() + 8_000;
      await client.publish(request(target.topicArn, dueAt, 'on time'));
      await waitFor(() => target.withPayload('on time').length > 0, 'the delivery');
      expect(publishedAt).toHaveLength(1);
      expect(publishedAt[0]).toBeGreaterThanOrEqual(dueAt);
      expectNotEarly(target.withPayload('on time')[0], dueAt);
    } finally {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('emits an event whose date is in the past at once', async () => {
    const { client, target, teardown } = await setup();
    try {
      const publishedAt = Date.now();
      await client.publish(request(target.topicArn, publishedAt - 86_400_000, 'yesterday'));
      const delivery = await waitFor(() => target.withPayload('yesterday')[0], 'the delivery');
      expectNotEarly(delivery);
      expect(delivery.receivedAt).toBeGreaterThanOrEqual(publishedAt);
    } finally {
      await teardown();
    }
  });

  it('reads a date without an offset as UTC and honours an explicit offset', async () => {
    const { client, target, teardown } = await setup();
    try {
      const dueAt = Date.now() + 2_000;
      const utcWithoutOffset = new Date(dueAt).toISOString().replace('Z', '');
      const sameInstantInParis = new Date(dueAt + 3_600_000).toISOString().replace('Z', '+01:00');
      await client.publish({ date: utcWithoutOffset, target: target.topicArn, user: 'tests', payload: 'no-offset' });
      await client.publish({ date: sameInstantInParis, target: target.topicArn, user: 'tests', payload: 'with-offset' });
      await waitFor(() => target.deliveries.length === 2, 'both deliveries');
      for (const delivery of target.deliveries) {
        expect(scheduledAt(delivery)).toBe(dueAt);
        expectNotEarly(delivery, dueAt);
      }
    } finally {
      await teardown();
    }
  });

  it('emits an input delivered twice by SNS once', async () => {
    const { client, target, teardown } = await setup();
    try {
      const dueAt = Date.now() + 2_000;
      const input = request(target.topicArn, dueAt, 'redelivered');
      await Promise.all([client.redeliver(input, 'sns-message-1'), client.redeliver(input, 'sns-message-1')]);
      // A later event on the same target marks the point by which a duplicate would have arrived.
      await client.publish(request(target.topicArn, dueAt + 1_500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('redelivered')).toHaveLength(1);
      expectNotEarly(target.withPayload('redelivered')[0], dueAt);
    } finally {
      await teardown();
    }
  });

  it('treats the same client id from the same user as one event, and from another user as another', async () => {
    const { client, target, teardown } = await setup();
    try {
      const dueAt = Date.now() + 2_000;
      await client.publish(request(target.topicArn, dueAt, 'keyed', { id: 'order-42', user: 'alice' }));
      await client.publish(request(target.topicArn, dueAt, 'keyed', { id: 'order-42', user: 'alice' }));
      await client.publish(request(target.topicArn, dueAt, 'keyed', { id: 'order-42', user: 'bob' }));
      await client.publish(request(target.topicArn, dueAt + 1_500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      const users = target.withPayload('keyed').map((delivery) => delivery.attributes[EMISSION_ATTRIBUTE.user]);
      expect(users.sort()).toEqual(['alice', 'bob']);
      for (const delivery of target.deliveries) expectNotEarly(delivery, delivery.body === 'keyed' ? dueAt : dueAt + 1_500);
    } finally {
      await teardown();
    }
  });
});
