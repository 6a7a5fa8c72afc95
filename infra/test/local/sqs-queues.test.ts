import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { decodeDelayQueueMessage, SqsDelayQueue, type DelayedSend } from '@adhoc-scheduler/shared';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { uniqueName, waitFor } from './kit.js';

let emulators: Emulators;
beforeAll(async () => {
  emulators = await startEmulators({});
});
afterAll(async () => {
  await emulators?.stop();
});

describe('the SQS delay queue (on fauxqs)', () => {
  it("sends events whose bodies together outgrow one SendMessageBatch (1 MiB in all) in as many as it takes", async () => {
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
    try {
      const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('delay') }));
      // Six events of about 220 KB each, as large as SNS lets a client schedule them, and two small ones.
      const items: DelayedSend[] = ['a', 'b', 'c', 'd', 'e', 'f', 'small-1', 'small-2'].map((tag, index) => ({
        event: { id: `m-${index}`, tenant: 'acme', user: 'tests', target: 'arn:aws:sns:us-east-1:000000000000:t', payload: tag.length === 1 ? tag.repeat(220_000) : tag, dueAt: 0, version: 1 },
        delaySeconds: 0,
        queuedBy: `copy-${index}`,
      }));
      expect(await new SqsDelayQueue(sqs, QueueUrl).send(items)).toEqual([]);
      const received = new Set<string>();
      await waitFor(async () => {
        const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
        for (const { Body = '' } of Messages) {
          const message = decodeDelayQueueMessage(Body);
          if (message.kind === 'event') received.add(message.event.id);
        }
        return received.size === items.length;
      }, 'every event on the queue');
    } finally {
      sqs.destroy();
    }
  });
});
