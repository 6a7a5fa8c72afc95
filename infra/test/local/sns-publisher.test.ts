import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNSClient } from '@aws-sdk/client-sns';
import { EventRejectedError, REASON, SnsTopicPublisher } from '@adhoc-scheduler/shared';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { TopicConsumer, waitFor } from './kit.js';

let emulators: Emulators;
beforeAll(async () => {
  emulators = await startEmulators({});
});
afterAll(async () => {
  await emulators?.stop();
});

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
      await Promise.all(Array.from({ length: 25 }, (_, i) => publisher.publish(target.topicArn, `m-${i}`, { 'scheduler-event-id': `e-${i}` })));
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
});
