import { describe, expect, it } from 'vitest';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startFairQueuePoller, type FairQueuePollerOptions } from '../../src/local/fair-queue-poller.js';
import { LOCAL_REGION } from '../../src/local/runtime.js';
import { capturingLogger, sharedEmulators, waitFor } from './kit.js';
import { countingSqs, createQueue, queueIsEmpty, send } from './queue-kit.js';

const emulators = sharedEmulators();

function messagesOf(group: string | undefined, count: number, label = group ?? 'ungrouped'): { body: string; group: string | undefined }[] {
  return Array.from({ length: count }, (_, i) => ({ body: `${label}-${i}`, group }));
}

/** A promise the test opens when it has seen what it waits for. */
function gate(): { readonly wait: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** The group a test message was sent under (its MessageGroupId), as its body names it. */
function groupFromBody(message: Message): string | undefined {
  const group = message.Body?.split('-')[0];
  return group === 'ungrouped' ? undefined : group;
}

const groupOfRecord = (record: SQSRecord): string | undefined => groupFromBody({ Body: record.body });
/** The group of an invocation's records (all one group's): that of the first; undefined for no invocation. */
const groupOfBatch = (records: readonly SQSRecord[] | undefined): string | undefined => groupFromBody({ Body: records?.[0]?.body });

/** A handler that holds the invocations of some groups until the test releases them. */
class HeldInvocations {
  readonly log = new HandlerLog();
  private readonly held: { readonly group: string | undefined; readonly gate: ReturnType<typeof gate> }[] = [];
  private holding = true;

  constructor(private readonly holds: (group: string | undefined) => boolean) {}

  readonly handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    this.log.invocations.push(event.Records);
    const group = groupOfBatch(event.Records);
    if (this.holding && this.holds(group)) {
      const invocation = { group, gate: gate() };
      this.held.push(invocation);
      await invocation.gate.wait;
    }
    return { batchItemFailures: [] };
  };

  /** Invocations started for a group so far. */
  started(group: string): number {
    return this.log.invocations.filter((records) => groupOfBatch(records) === group).length;
  }

  /** Invocations for `other` started before the first for `group`. */
  startedBefore(group: string, other: string): number {
    const first = this.log.invocations.findIndex((records) => groupOfBatch(records) === group);
    return this.log.invocations.slice(0, first).filter((records) => groupOfBatch(records) === other).length;
  }

  /** Lets the first held invocation of a group finish. */
  release(group: string): void {
    const index = this.held.findIndex((invocation) => invocation.group === group);
    this.held.splice(index, 1)[0]?.gate.open();
  }

  releaseAll(): void {
    this.holding = false;
    for (const invocation of this.held.splice(0)) invocation.gate.open();
  }
}

/** What the handler was given, invocation by invocation. */
class HandlerLog {
  readonly invocations: SQSRecord[][] = [];

  records(): SQSRecord[] {
    return this.invocations.flat();
  }

  bodies(): string[] {
    return this.records().map((record) => record.body);
  }

  handledFrom(prefix: string): number {
    return this.bodies().filter((body) => body.startsWith(prefix)).length;
  }
}

function startPoller(
  sqs: SQSClient,
  queue: { url: string; arn: string },
  options: Pick<FairQueuePollerOptions, 'concurrency' | 'visibilityTimeoutSeconds' | 'receivers'>,
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
) {
  return startFairQueuePoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: LOCAL_REGION,
    batchSize: 10,
    handler,
    logger: capturingLogger().logger,
    ...options,
  });
}

describe('the fair-queue poller', () => {
  it('lets a group alone take all slots but a reserve, and gives the reserve at once to a group that appears', async () => {
    const { sqs } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'fair');
    await send(sqs, queue.url, messagesOf('noisy', 200));
    const invocations = new HeldInvocations((group) => group === 'noisy');
    // Sixteen slots: a group alone takes fourteen, two stay free for any other group.
    const poller = startPoller(sqs, queue, { concurrency: 16, visibilityTimeoutSeconds: 30 }, invocations.handler);
    try {
      await waitFor(() => invocations.started('noisy') === 14, 'the noisy group holding fourteen slots');
      await send(sqs, queue.url, messagesOf('quiet', 3));
      await waitFor(() => invocations.log.handledFrom('quiet') === 3, 'the quiet group handled');
      expect(invocations.started('noisy')).toBe(14);
      // Each batch is one group's.
      for (const records of invocations.log.invocations) expect(new Set(records.map(groupOfRecord)).size).toBe(1);

      invocations.releaseAll();
      await waitFor(() => invocations.log.records().length === 203, 'every message handled');
      expect(new Set(invocations.log.bodies()).size).toBe(203);
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      invocations.releaseAll();
      await poller.stop();
      sqs.destroy();
    }
  });

  it('gives a group no more than its share while the buffer catches up with the queue, and all but the reserve once it has', async () => {
    const { sqs, received } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'fair');
    await send(sqs, queue.url, messagesOf('noisy', 200));
    const invocations = new HeldInvocations((group) => group === 'noisy');
    // How much of the queue the buffer had received when each invocation started.
    const receivedAtStart: number[] = [];
    const handler: typeof invocations.handler = (event) => {
      receivedAtStart.push(received());
      return invocations.handler(event);
    };
    // One receiver: the buffer takes the backlog ten at a time, and knows it is behind while its receives come back full.
    const poller = startPoller(sqs, queue, { concurrency: 16, visibilityTimeoutSeconds: 30, receivers: 1 }, handler);
    try {
      await waitFor(() => invocations.started('noisy') === 14, 'the noisy group holding all but the reserve');
      // Before the last of the backlog was received, a group had at most its share of two slots, whichever groups came next.
      expect(receivedAtStart.filter((count) => count < 200).length).toBeLessThanOrEqual(2);
      await send(sqs, queue.url, messagesOf('quiet', 3));
      await waitFor(() => invocations.log.handledFrom('quiet') === 3, 'the quiet group handled in the reserve');
      invocations.releaseAll();
      await waitFor(() => invocations.log.records().length === 203, 'every message handled');
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      invocations.releaseAll();
      await poller.stop();
      sqs.destroy();
    }
  });

  it('gives a freed slot to the group with the fewest messages in flight, not to the longest wait', async () => {
    const { sqs, received } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'fair');
    const groups = Array.from({ length: 9 }, (_, i) => `g${i}`);
    await send(
      sqs,
      queue.url,
      groups.slice(0, 8).flatMap((group) => messagesOf(group, 30)),
    );
    const invocations = new HeldInvocations(() => true);
    const poller = startPoller(sqs, queue, { concurrency: 16, visibilityTimeoutSeconds: 30, receivers: 1 }, invocations.handler);
    try {
      await waitFor(() => received() === 240 && invocations.log.invocations.length === 16, 'eight groups received, every slot taken');
      // g8 comes last: its messages have waited least.
      await send(sqs, queue.url, messagesOf('g8', 30));
      await waitFor(() => received() === 270, 'every message received');
      // Eight groups hold their share of two slots each: all sixteen are busy, g8 waits with none.
      expect(groups.map((group) => invocations.started(group))).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 0]);

      // g0's waiting messages are the oldest, but it still has ten in flight and g8 none.
      invocations.release('g0');
      await waitFor(() => invocations.log.invocations.length === 17, 'the freed slot taken');
      expect(groupOfBatch(invocations.log.invocations[16])).toBe('g8');

      invocations.releaseAll();
      await waitFor(() => invocations.log.records().length === 270, 'every message handled');
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      invocations.releaseAll();
      await poller.stop();
      sqs.destroy();
    }
  });

  it('long-polls with one receiver while the queue has no backlog, and receives with all of them while it has one', async () => {
    const { sqs, receivesInFlight } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'fair');
    const log = new HandlerLog();
    const poller = startPoller(sqs, queue, { concurrency: 16, visibilityTimeoutSeconds: 30, receivers: 8 }, async (event) => {
      log.invocations.push(event.Records);
      return { batchItemFailures: [] };
    });
    try {
      await waitFor(() => receivesInFlight().now === 1, 'a long poll waiting');
      await send(sqs, queue.url, messagesOf('g', 3));
      await waitFor(() => log.records().length === 3, 'the few messages handled');
      await waitFor(() => receivesInFlight().now === 1, 'a long poll waiting again');
      expect(receivesInFlight().most).toBe(1);

      // Receives that come back full wake the other receivers until the backlog is taken.
      await send(sqs, queue.url, messagesOf('g', 300, 'backlog'));
      await waitFor(() => log.handledFrom('backlog') === 300, 'the backlog handled');
      expect(receivesInFlight().most).toBeGreaterThan(1);
      expect(new Set(log.bodies()).size).toBe(303);
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      await poller.stop();
      sqs.destroy();
    }
  });

  it('treats messages without a group id as one group', async () => {
    const { sqs } = countingSqs(emulators);
    const queue = await createQueue(sqs, 30, 'fair');
    await send(sqs, queue.url, messagesOf(undefined, 50));
    const ungroupedHeld = gate();
    const log = new HandlerLog();
    const poller = startPoller(sqs, queue, { concurrency: 2, visibilityTimeoutSeconds: 30 }, async (event) => {
      log.invocations.push(event.Records);
      if (event.Records.some((record) => groupOfRecord(record) === undefined)) await ungroupedHeld.wait;
      return { batchItemFailures: [] };
    });
    try {
      await waitFor(() => log.handledFrom('ungrouped') > 0, 'the ungrouped messages started');
      await send(sqs, queue.url, messagesOf('quiet', 2));
      await waitFor(() => log.handledFrom('quiet') === 2, 'the quiet group handled');
      expect(log.handledFrom('ungrouped')).toBe(10);
      ungroupedHeld.open();
      await waitFor(() => log.records().length === 52, 'every message handled');
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every handled message deleted');
    } finally {
      ungroupedHeld.open();
      await poller.stop();
      sqs.destroy();
    }
  });

  it('deletes what the handler reports done and leaves a reported failure to come back after the visibility timeout', async () => {
    const { sqs } = countingSqs(emulators);
    const queue = await createQueue(sqs, 1, 'fair');
    await send(sqs, queue.url, [...messagesOf('g', 4), { body: 'fails-once', group: 'g' }]);
    const log = new HandlerLog();
    const poller = startPoller(sqs, queue, { concurrency: 2, visibilityTimeoutSeconds: 1 }, async (event) => {
      log.invocations.push(event.Records);
      const failing = event.Records.filter((record) => record.body === 'fails-once' && record.attributes.ApproximateReceiveCount === '1');
      return { batchItemFailures: failing.map((record) => ({ itemIdentifier: record.messageId })) };
    });
    try {
      await waitFor(() => log.bodies().filter((body) => body === 'fails-once').length === 2, 'the failed message handled again');
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every message deleted');
      const receives = log
        .records()
        .filter((record) => record.body === 'fails-once')
        .map((record) => record.attributes.ApproximateReceiveCount);
      expect(receives).toEqual(['1', '2']);
      expect(
        log
          .bodies()
          .filter((body) => body !== 'fails-once')
          .sort(),
      ).toEqual(['g-0', 'g-1', 'g-2', 'g-3']);
    } finally {
      await poller.stop();
      sqs.destroy();
    }
  });

  it('keeps waiting messages hidden past the visibility timeout, and those its handler holds, so each is handed over once', async () => {
    const { sqs, calls } = countingSqs(emulators);
    const queue = await createQueue(sqs, 1, 'fair');
    await send(sqs, queue.url, messagesOf('g', 30));
    const firstHeld = gate();
    const log = new HandlerLog();
    // One slot: the first batch holds it while the other twenty messages wait in the buffer.
    const poller = startPoller(sqs, queue, { concurrency: 1, visibilityTimeoutSeconds: 1 }, async (event) => {
      log.invocations.push(event.Records);
      if (log.invocations.length === 1) await firstHeld.wait;
      return { batchItemFailures: [] };
    });
    const extensions = (): number => calls.get('ChangeMessageVisibilityBatchCommand') ?? 0;
    try {
      // A message is extended once less than half its timeout is left, to the full timeout: three
      // rounds of extensions (two requests each for the buffer, one for the batch being handled)
      // take more than a whole timeout past the receive.
      await waitFor(() => extensions() >= 9, 'three rounds of visibility extensions');
      firstHeld.open();
      const firstBatch = new Set(log.invocations[0]?.map((record) => record.body));
      expect(firstBatch.size).toBe(10);
      await waitFor(() => new Set(log.bodies()).size === 30, 'every message handled');
      await waitFor(() => queueIsEmpty(sqs, queue.url), 'every message deleted');

      const waited = log.records().filter((record) => !firstBatch.has(record.body));
      expect(waited.map((record) => record.body).sort()).toEqual(
        messagesOf('g', 30)
          .map((m) => m.body)
          .filter((body) => !firstBatch.has(body))
          .sort(),
      );
      expect(waited.every((record) => record.attributes.ApproximateReceiveCount === '1')).toBe(true);
      // The invocation that outlived its timeout kept its messages hidden while its handler worked.
      const firstBatchReceives = log
        .records()
        .filter((record) => firstBatch.has(record.body))
        .map((record) => record.attributes.ApproximateReceiveCount);
      expect(firstBatchReceives).toEqual(Array.from({ length: 10 }, () => '1'));
    } finally {
      firstHeld.open();
      await poller.stop();
      sqs.destroy();
    }
  });
});
