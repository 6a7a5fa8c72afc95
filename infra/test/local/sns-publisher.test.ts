import { describe, expect, it } from 'vitest';
import { SNSClient } from '@aws-sdk/client-sns';
import { EventRejectedError, REASON, SnsTopicPublisher } from '@adhoc-scheduler/shared';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { sharedEmulators, TopicConsumer, waitFor } from './kit.js';

const emulators = sharedEmulators();

function countingClient(calls: string[]): SNSClient {
  const sns = new SNSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
  sns.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(context.commandName ?? '');
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return sns;
}

describe('the SNS publisher (on fauxqs)', () => {
  it('sends publishes to one topic made in the same turn as batches of ten, each delivered once with its attributes', async () => {
    const calls: string[] = [];
    const sns = countingClient(calls);
    const target = await TopicConsumer.create(emulators.messagingEndpoint, 'batched');
    try {
      const publisher = new SnsTopicPublisher(sns);
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => publisher.publish(target.topicArn, `m-${i}`, { 'scheduler-event-id': `e-${i}` })),
      );
      expect(calls).toEqual(['PublishBatchCommand', 'PublishBatchCommand', 'PublishBatchCommand']);
      await waitFor(() => target.deliveries.length === 25, 'all 25 messages');
      expect(new Set(target.deliveries.map((d) => d.body)).size).toBe(25);
      expect(target.withPayload('m-7')[0]?.attributes['scheduler-event-id']).toBe('e-7');

      calls.length = 0;
      await publisher.publish(target.topicArn, 'alone');
      expect(calls).toEqual(['PublishCommand']);
    } finally {
      sns.destroy();
      await target.stop();
    }
  });

  it('rejects each publish to a topic that does not exist with TARGET_NOT_FOUND', async () => {
    const sns = countingClient([]);
    try {
      const publisher = new SnsTopicPublisher(sns);
      const missing = 'arn:aws:sns:us-east-1:000000000000:no-such-topic';
      const results = await Promise.allSettled([publisher.publish(missing, 'a'), publisher.publish(missing, 'b')]);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason as EventRejectedError;
        expect(reason).toBeInstanceOf(EventRejectedError);
        expect(reason.reason).toBe(REASON.TARGET_NOT_FOUND);
      }
    } finally {
      sns.destroy();
    }
  });

  it('publishes the rest of a batch one by one when one entry cannot be encoded, and rejects that one for good', async () => {
    const calls: string[] = [];
    const sns = countingClient(calls);
    const target = await TopicConsumer.create(emulators.messagingEndpoint, 'unencodable');
    try {
      const publisher = new SnsTopicPublisher(sns);
      // A lone surrogate: what a JSON escape in a request stored before ingest refused them can hold.
      const messages = ['first', 'bad \ud800', 'third'];
      const attributes: Record<string, string>[] = [{}, {}, { 'scheduler-user': 'bad \udc00' }];
      const results = await Promise.allSettled(
        [...messages, 'fourth'].map((message, i) => publisher.publish(target.topicArn, message, attributes[i])),
      );
      expect(calls).toEqual(['PublishBatchCommand', 'PublishCommand', 'PublishCommand', 'PublishCommand', 'PublishCommand']);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
      for (const result of [results[1], results[2]]) {
        const reason = (result as PromiseRejectedResult).reason as EventRejectedError;
        expect(reason).toBeInstanceOf(EventRejectedError);
        expect(reason.reason).toBe(REASON.PAYLOAD_NOT_PUBLISHABLE);
      }
      await waitFor(() => target.deliveries.length === 2, 'the two that can be published');
      expect(target.deliveries.map((delivery) => delivery.body).sort()).toEqual(['first', 'fourth']);

      // Alone, it fails the same way, without a batch.
      calls.length = 0;
      const alone = await publisher.publish(target.topicArn, 'bad \ud800').catch((error: unknown) => error);
      expect(alone).toMatchObject({ reason: REASON.PAYLOAD_NOT_PUBLISHABLE });
      expect(calls).toEqual(['PublishCommand']);
    } finally {
      sns.destroy();
      await target.stop();
    }
  });

  it('keeps 128 requests in flight, no more, and delivers every publish that waited for one', async () => {
    let inFlight = 0;
    let most = 0;
    // Requests are held until every slot is taken, as when SNS answers slower than events come due;
    // at most two seconds, so that a publisher that never takes them all fails on the count, not a timeout.
    let fill = (): void => {};
    const slotsFull = new Promise<void>((resolve) => {
      fill = resolve;
      setTimeout(resolve, 2_000);
    });
    const calls: string[] = [];
    const sns = countingClient(calls);
    sns.middlewareStack.add(
      (next) => async (args) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (inFlight >= 128) fill();
        try {
          await slotsFull;
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countInFlight' },
    );
    const target = await TopicConsumer.create(emulators.messagingEndpoint, 'capped');
    try {
      const publisher = new SnsTopicPublisher(sns);
      const published: Promise<void>[] = [];
      // 2,000 publishes one turn of the event loop apart, as events due a moment apart are.
      for (let i = 0; i < 2_000; i++) {
        published.push(publisher.publish(target.topicArn, `m-${i}`));
        if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(published);
      // All 128 slots were taken at once (publishes one at a time would take one), and never more.
      expect(most).toBe(128);
      await waitFor(() => target.deliveries.length === 2_000, 'all 2,000 messages', 30_000);
      expect(new Set(target.deliveries.map((d) => d.body)).size).toBe(2_000);
    } finally {
      sns.destroy();
      await target.stop();
    }
  });
});
