import { describe, expect, it } from 'vitest';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { decodeDelayQueueMessage, REASON, SqsDelayQueue, type DelayedSend, type DelayQueueMessage } from '@adhoc-scheduler/shared';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { sharedEmulators, uniqueName, waitFor } from './kit.js';

const emulators = sharedEmulators();

/** The messages on a queue, decoded, once `count` have arrived. */
async function receiveAll(sqs: SQSClient, queueUrl: string, count: number): Promise<DelayQueueMessage[]> {
  const received: DelayQueueMessage[] = [];
  await waitFor(async () => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    received.push(...Messages.map(({ Body = '' }) => decodeDelayQueueMessage(Body)));
    return received.length >= count;
  }, `${count} messages on the queue`);
  return received;
}

describe('the SQS delay queue (on fauxqs)', () => {
  it('sends events whose bodies together outgrow one SendMessageBatch (1 MiB in all) in as many as it takes', async () => {
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
    try {
      const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('delay') }));
      // Six events of about 220 KB each, as large as SNS lets a client schedule them, and two small ones.
      const items: DelayedSend[] = ['a', 'b', 'c', 'd', 'e', 'f', 'small-1', 'small-2'].map((tag, index) => ({
        event: {
          id: `m-${index}`,
          tenant: 'acme',
          user: 'tests',
          target: 'arn:aws:sns:us-east-1:000000000000:t',
          payload: tag.length === 1 ? tag.repeat(220_000) : tag,
          dueAt: 0,
          version: 1,
        },
        delaySeconds: 0,
        queuedBy: `copy-${index}`,
      }));
      expect(await new SqsDelayQueue(sqs, QueueUrl).send(items)).toEqual([]);
      const received = await receiveAll(sqs, QueueUrl, items.length);
      expect(received.map((message) => (message.kind === 'event' ? message.event.id : message.kind)).sort()).toEqual(
        items.map(({ event }) => event.id).sort(),
      );
    } finally {
      sqs.destroy();
    }
  });

  it('carries a failure notice with its tenant, by whose registry entry the emitter decides where it goes, alone or packed with its tenant’s others', async () => {
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
    try {
      const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('delay') }));
      const notice = {
        reason: REASON.INVALID_DATE,
        message: 'bad date',
        event: { date: 'x' },
        failedAt: '2030-01-01T00:00:00.000Z',
        details: {},
      };
      const failureTopic = 'arn:aws:sns:us-east-1:000000000000:failures';
      await new SqsDelayQueue(sqs, QueueUrl).sendNotice('n-1', 'acme', { failureTopic }, notice);
      expect(await receiveAll(sqs, QueueUrl, 1)).toEqual([
        { kind: 'notice', noticeId: 'n-1', tenant: 'acme', failureTopic, deadLetterTopic: undefined, notice },
      ]);

      // A batch's notices together: each tenant's packed ten to a message, each notice as one sent alone would arrive.
      const sent = Array.from({ length: 23 }, (_, index) => ({
        noticeId: `n-${index + 2}`,
        tenant: index % 2 === 0 ? 'acme' : 'globex',
        destination: { failureTopic },
        notice,
      }));
      expect(await new SqsDelayQueue(sqs, QueueUrl).sendNotices(sent)).toEqual([]);
      const messages = await receiveAll(sqs, QueueUrl, 4);
      const packs = messages.map((message) => (message.kind === 'notices' ? message.notices : message.kind === 'notice' ? [message] : []));
      expect(packs.map((pack) => `${pack[0]?.tenant} ${pack.length}`).sort()).toEqual(['acme 10', 'acme 2', 'globex 1', 'globex 10']);
      expect(packs.every((pack) => pack.every(({ tenant }) => tenant === pack[0]?.tenant))).toBe(true);
      expect(packs.flat().sort((a, b) => a.noticeId.localeCompare(b.noticeId))).toEqual(
        sent
          .map(({ noticeId, tenant }) => ({ kind: 'notice', noticeId, tenant, failureTopic, deadLetterTopic: undefined, notice }))
          .sort((a, b) => a.noticeId.localeCompare(b.noticeId)),
      );
    } finally {
      sqs.destroy();
    }
  });

  it('packs notices whose bodies outgrow SQS’s 1 MiB together in as many messages as it takes', async () => {
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
    try {
      const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('delay') }));
      // Five notices quoting requests of 300 KB: three fit in one message, the other two in a second.
      const sent = Array.from({ length: 5 }, (_, index) => ({
        noticeId: `n-${index}`,
        tenant: 'acme',
        destination: { failureTopic: 'arn:aws:sns:us-east-1:000000000000:failures' },
        notice: {
          reason: REASON.INVALID_DATE,
          message: 'bad date',
          event: { payload: 'x'.repeat(300_000) },
          failedAt: '2030-01-01T00:00:00.000Z',
          details: {},
        },
      }));
      expect(await new SqsDelayQueue(sqs, QueueUrl).sendNotices(sent)).toEqual([]);
      const messages = await receiveAll(sqs, QueueUrl, 2);
      const ids = messages.map((message) => (message.kind === 'notices' ? message.notices.map(({ noticeId }) => noticeId) : []));
      expect(ids.sort((a, b) => b.length - a.length)).toEqual([
        ['n-0', 'n-1', 'n-2'],
        ['n-3', 'n-4'],
      ]);
    } finally {
      sqs.destroy();
    }
  });
});
