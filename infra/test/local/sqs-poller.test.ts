import { describe, expect, it } from 'vitest';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startSqsPoller } from '../../src/local/sqs-poller.js';
import { LOCAL_REGION } from '../../src/local/runtime.js';
import { capturingLogger, sharedEmulators, waitFor } from './kit.js';
import { countingSqs, createQueue, queueIsEmpty, send } from './queue-kit.js';

const emulators = sharedEmulators();

function bodies(label: string, count: number): { body: string; group: undefined }[] {
  return Array.from({ length: count }, (_, i) => ({ body: `${label}-${i}`, group: undefined }));
}

describe('the SQS poller (Lambda-like batches of up to 100 within a batching window)', () => {
  it('gathers one batch at a time: one long poll while the queue is quiet, and the messages of one window in one invocation', async () => {
    const { sqs, receivesInFlight } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'poller');
    const invocations: SQSRecord[][] = [];
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      invocations.push(event.Records);
      return { batchItemFailures: [] };
    };
    const poller = startSqsPoller({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: LOCAL_REGION,
      concurrency: 4,
      batchSize: 100,
      batchingWindowSeconds: 1,
      visibilityTimeoutSeconds: 30,
      handler,
      logger: capturingLogger().logger,
    });
    try {
      await waitFor(() => receivesInFlight().now === 1, 'a long poll waiting');
      expect(receivesInFlight().most).toBe(1);
      // Three sends well within the window: four loops polling side by side would split them.
      await send(sqs, queue.url, bodies('window', 30));
      await waitFor(() => invocations.flat().length === 30, 'the messages handled');
      expect(invocations.map((records) => records.length)).toEqual([30]);
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      await poller.stop();
      sqs.destroy();
    }
  });

  it('handles batches at once while the next one is gathered', async () => {
    const { sqs } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'poller');
    let releaseFirst = (): void => undefined;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const invocations: SQSRecord[][] = [];
    const poller = startSqsPoller({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: LOCAL_REGION,
      concurrency: 2,
      batchSize: 10,
      visibilityTimeoutSeconds: 30,
      handler: async (event) => {
        invocations.push(event.Records);
        if (invocations.length === 1) await firstHeld;
        return { batchItemFailures: [] };
      },
      logger: capturingLogger().logger,
    });
    try {
      await send(sqs, queue.url, bodies('first', 10));
      await waitFor(() => invocations.length === 1, 'the first batch held by its handler');
      await send(sqs, queue.url, bodies('second', 10));
      await waitFor(() => invocations.length === 2, 'the second batch handled beside it');
      releaseFirst();
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'both batches deleted');
      expect(new Set(invocations.flat().map((record) => record.body)).size).toBe(20);
    } finally {
      releaseFirst();
      await poller.stop();
      sqs.destroy();
    }
  });
});
