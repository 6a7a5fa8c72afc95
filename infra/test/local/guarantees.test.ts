import { describe, expect, it } from 'vitest';
import type { SendMessageBatchCommandInput, SendMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import {
  decodeDelayQueueMessage,
  decodeLoadingChunk,
  DynamoDbEventListing,
  EVENT_STATE,
  REPAIR_DELAY_MARGIN_SECONDS,
  type EventState,
} from '@adhoc-scheduler/shared';
import type { AwsClients } from '@adhoc-scheduler/functions';
import type { LocalSchedulerOptions } from '../../src/local/runtime.js';
import {
  capturingLogger,
  expectNotEarly,
  FAST_TIMINGS,
  recordsEnds,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

/**
 * The guarantees of docs/design.md, each against the real emulators with the fault it is about injected
 * into the service's own SDK clients: what a crash, a timeout or a lost message would do.
 */
const emulators = sharedEmulators();

/** Stored events are repaired this long after their due time, here (the shortest the emitter lead allows). */
const REPAIR_AFTER_SECONDS = 4;
/** Handed-over ends are tried again at most this far apart, here. */
const ENDS_RETRY_MAX_SECONDS = 1;
/** A repaired copy waits this long in the delay queue, here (the shortest ENDS_RETRY_MAX_SECONDS allows). */
const REPAIR_DELAY_SECONDS = ENDS_RETRY_MAX_SECONDS + REPAIR_DELAY_MARGIN_SECONDS;
/**
 * How long a test waits for a repaired event: the loader's sweep is a bucket (5 s) behind at most
 * on a quiet machine, but a full test run on 2 cores has stretched it past 45 s.
 */
const REPAIRED_WITHIN_MS = 90_000;
/**
 * An event the loader must move (stored, not sent straight to the delay queue) is due this far
 * ahead: 6 s past the near-path window (FAST_TIMINGS), because ingest, on a full test run on 2
 * cores, has taken over 2 s to take a request, and one it takes within the window skips the loader.
 */
const STORED_DUE_IN_MS = Number(FAST_TIMINGS.SCHEDULER_NEAR_PATH_WINDOW_SECONDS) * 1000 + 6_000;
/** A test of the sweep's repairs waits for one or two of them, and its services start and stop around them. */
const REPAIR_TEST_TIMEOUT_MS = 2 * REPAIRED_WITHIN_MS + 30_000;

async function setup(
  inject: (clients: AwsClients) => void,
  env: Record<string, string> = {},
  options: Pick<LocalSchedulerOptions, 'handlerTimeoutSeconds'> = {},
) {
  const { logger, lines } = capturingLogger();
  const scheduler = await startTestScheduler(emulators, {
    ...options,
    logger,
    env: {
      ...FAST_TIMINGS,
      SCHEDULER_REPAIR_AFTER_SECONDS: String(REPAIR_AFTER_SECONDS),
      SCHEDULER_ENDS_RETRY_MAX_SECONDS: String(ENDS_RETRY_MAX_SECONDS),
      SCHEDULER_REPAIR_DELAY_SECONDS: String(REPAIR_DELAY_SECONDS),
      ...env,
    },
    instrumentClients: inject,
  });
  const client = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  return {
    scheduler,
    client,
    target,
    records,
    logged: (message: string) => lines.filter((line) => line.msg === message),
    async stop() {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    },
  };
}

/** A batch send to the queue whose URL ends with `queueSuffix` is dropped, as if the messages were lost, when `drop` says so; SQS answers success. */
function dropSends(queueSuffix: string, drop: (bodies: readonly string[]) => boolean): (clients: AwsClients) => void {
  return (clients) =>
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Partial<SendMessageBatchCommandInput>;
        if (context.commandName !== 'SendMessageBatchCommand' || !input.QueueUrl?.endsWith(queueSuffix)) return next(args);
        if (!drop((input.Entries ?? []).map((entry) => entry.MessageBody ?? ''))) return next(args);
        const output: Partial<SendMessageBatchCommandOutput> = {
          Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id ?? '', MessageId: 'lost', MD5OfMessageBody: '' })),
          Failed: [],
        };
        return { output, response: {} } as never;
      },
      { step: 'initialize', name: 'dropSends' },
    );
}

const eventsIn = (bodies: readonly string[]): string[] =>
  bodies.flatMap((body) => {
    const message = decodeDelayQueueMessage(body);
    return message.kind === 'event' ? [message.event.payload] : [];
  });

describe.concurrent('nothing lost', { timeout: REPAIR_TEST_TIMEOUT_MS }, () => {
  it('sends a stored event again when its loading message is lost, once it is overdue: late, once, never early', async () => {
    let lost = false;
    const { client, target, logged, stop } = await setup(
      dropSends('-loading', (bodies) => {
        if (lost || bodies.every((body) => decodeLoadingChunk(body).repair)) return false;
        lost = true;
        return true;
      }),
    );
    try {
      const dueAt = Date.now() + STORED_DUE_IN_MS;
      await client.publish(request(target.topicArn, dueAt, 'loading lost'));
      const delivery = await waitFor(() => target.withPayload('loading lost')[0], 'the repaired event', REPAIRED_WITHIN_MS);
      expect(lost).toBe(true);
      expectNotEarly(delivery, dueAt + (REPAIR_AFTER_SECONDS + REPAIR_DELAY_SECONDS) * 1000);
      expect(logged('events still open after their due time; sent again')).toHaveLength(1);
      // A second copy, sent by a later repair, would be overdue and emitted before a sentinel due later.
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('loading lost')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('sends a stored event again when its delay-queue copy is lost after loading took it', async () => {
    let lost = false;
    const { client, target, records, stop } = await setup(
      dropSends('-delay', (bodies) => {
        if (lost || !eventsIn(bodies).includes('copy lost')) return false;
        lost = true;
        return true;
      }),
    );
    try {
      const dueAt = Date.now() + STORED_DUE_IN_MS;
      const messageId = await client.publish(request(target.topicArn, dueAt, 'copy lost'));
      await waitFor(() => lost, 'the lost copy', 20_000);
      expect((await records.get(`m-${messageId}`))?.state).toBe(EVENT_STATE.queued);
      const delivery = await waitFor(() => target.withPayload('copy lost')[0], 'the repaired event', REPAIRED_WITHIN_MS);
      expectNotEarly(delivery, dueAt + (REPAIR_AFTER_SECONDS + REPAIR_DELAY_SECONDS) * 1000);
      await waitFor(async () => (await records.get(`m-${messageId}`))?.state === EVENT_STATE.emitted, 'the emission recorded');
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('copy lost')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('hands the end of an emission over when it cannot be recorded, and publishes the event only once', async () => {
    let failing = true;
    const { client, target, records, logged, stop } = await setup((clients) =>
      clients.dynamodb.middlewareStack.add(
        (next, context) => async (args) => {
          if (failing && recordsEnds(context.commandName ?? '', args.input))
            throw Object.assign(new Error('DynamoDB unavailable'), { name: 'ServiceUnavailable' });
          return next(args);
        },
        { step: 'initialize', name: 'failEnds' },
      ),
    );
    try {
      const messageId = await client.publish(request(target.topicArn, Date.now() + 2_000, 'end handed over'));
      await waitFor(
        () => logged('emitted, but could not record it yet; the ends are handed over to be recorded later').length > 0,
        'the hand-over',
        20_000,
      );
      expect((await records.get(`m-${messageId}`))?.state).toBe(EVENT_STATE.queued);
      failing = false;
      await waitFor(async () => (await records.get(`m-${messageId}`))?.state === EVENT_STATE.emitted, 'the end recorded', 30_000);
      // A publish again, its end recorded by now, would be overdue and come before a sentinel due later.
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('end handed over')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('does not publish a stored event again when the sweep repairs it while its end is handed over: the repaired copy finds the end recorded', async () => {
    // The end writes fail from the publish until two seconds after the repaired copy is sent:
    // the end is handed over, and the sweep finds the event still open and sends it again.
    let copiesSent = 0;
    let repairSentAt: number | undefined;
    const failing = () => repairSentAt === undefined || Date.now() < repairSentAt + 2_000;
    const { client, target, records, logged, stop } = await setup((clients) => {
      clients.dynamodb.middlewareStack.add(
        (next, context) => async (args) => {
          if (failing() && recordsEnds(context.commandName ?? '', args.input))
            throw Object.assign(new Error('DynamoDB unavailable'), { name: 'ServiceUnavailable' });
          return next(args);
        },
        { step: 'initialize', name: 'failEnds' },
      );
      clients.sqs.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as Partial<SendMessageBatchCommandInput>;
          const bodies = (input.Entries ?? []).map((entry) => entry.MessageBody ?? '');
          // The first copy is loading's; the second, the repair's.
          if (
            context.commandName === 'SendMessageBatchCommand' &&
            input.QueueUrl?.endsWith('-delay') &&
            eventsIn(bodies).includes('repaired while handed over')
          ) {
            copiesSent += 1;
            if (copiesSent === 2) repairSentAt = Date.now();
          }
          return next(args);
        },
        { step: 'initialize', name: 'noticeRepair' },
      );
    });
    try {
      const dueAt = Date.now() + STORED_DUE_IN_MS;
      const messageId = await client.publish(request(target.topicArn, dueAt, 'repaired while handed over'));
      await waitFor(
        () => logged('emitted, but could not record it yet; the ends are handed over to be recorded later').length > 0,
        'the hand-over',
        20_000,
      );
      await waitFor(() => repairSentAt !== undefined, 'the repaired copy', REPAIRED_WITHIN_MS);
      expect(logged('events still open after their due time; sent again')).toHaveLength(1);
      await waitFor(
        () => logged('already emitted; duplicate suppressed').length > 0 || target.withPayload('repaired while handed over').length > 1,
        'the repaired copy read',
        REPAIRED_WITHIN_MS,
      );
      expect(target.withPayload('repaired while handed over')).toHaveLength(1);
      expect(logged('emitted, but another delivery had already ended the event: two copies were emitted at once')).toHaveLength(0);
      expect((await records.get(`m-${messageId}`))?.state).toBe(EVENT_STATE.emitted);
    } finally {
      await stop();
    }
  });
});

describe.concurrent('duplicates', () => {
  it('suppresses a delay-queue message delivered again after its event was emitted (its delete was lost)', async () => {
    let lostDelete = false;
    const { client, target, logged, stop } = await setup((clients) =>
      clients.sqs.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as { QueueUrl?: string };
          if (context.commandName === 'DeleteMessageBatchCommand' && input.QueueUrl?.endsWith('-delay') && !lostDelete) {
            lostDelete = true;
            return { output: { Successful: [], Failed: [] }, response: {} } as never;
          }
          return next(args);
        },
        { step: 'initialize', name: 'loseDelete' },
      ),
    );
    try {
      await client.publish(request(target.topicArn, Date.now() + 2_000, 'delivered again'));
      // The copy comes again once its visibility timeout ends: dropped, or (were it not) published again.
      await waitFor(
        () => logged('already emitted; duplicate suppressed').length > 0 || target.withPayload('delivered again').length > 1,
        'the redelivery handled',
        30_000,
      );
      expect(lostDelete).toBe(true);
      expect(target.withPayload('delivered again')).toHaveLength(1);
      expect(logged('already emitted; duplicate suppressed')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('notices two copies of the same message emitted at once, afterwards: counted, logged, not suppressed', async () => {
    const { client, target, records, logged, stop } = await setup((clients) =>
      clients.sqs.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as Partial<SendMessageBatchCommandInput>;
          const entries = input.Entries ?? [];
          if (
            context.commandName !== 'SendMessageBatchCommand' ||
            !input.QueueUrl?.endsWith('-delay') ||
            !eventsIn(entries.map((entry) => entry.MessageBody ?? '')).includes('twice at once')
          ) {
            return next(args);
          }
          // The same message, twice in flight: what an SQS double delivery does.
          const doubled = entries.flatMap((entry) => [entry, { ...entry, Id: `${entry.Id}-again` }]);
          return next({ ...args, input: { ...input, QueueUrl: input.QueueUrl, Entries: doubled } });
        },
        { step: 'initialize', name: 'doubleSends' },
      ),
    );
    try {
      const dueAt = Date.now() + 2_000;
      const messageId = await client.publish(request(target.topicArn, dueAt, 'twice at once'));
      await waitFor(() => target.withPayload('twice at once').length === 2, 'both copies');
      const [noticed] = await waitFor(() => {
        const lines = logged('emitted, but another delivery had already ended the event: two copies were emitted at once');
        return lines.length > 0 && lines;
      }, 'the duplicate noticed');
      expect(noticed?.eventId).toBe(`m-${messageId}`);
      expect((await records.get(`m-${messageId}`))?.state).toBe(EVENT_STATE.emitted);
      for (const delivery of target.withPayload('twice at once')) expectNotEarly(delivery, dueAt);
      // Noticed once: a sentinel due later has come and gone, and nothing more was logged.
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(logged('emitted, but another delivery had already ended the event: two copies were emitted at once')).toHaveLength(1);
      expect(target.withPayload('twice at once')).toHaveLength(2);
    } finally {
      await stop();
    }
  });

  it("records each publish call's ends as soon as it answers, while the batch's other publishes are still held: a crash then repeats only what is still in flight", async () => {
    // Two topics, so that their events go out in separate PublishBatch calls; the second's are held.
    let heldTopic = '';
    let releaseHeld = (): void => {};
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    let heldCalls = 0;
    const reads: number[] = [];
    const { scheduler, client, target, records, stop } = await setup(
      (clients) => {
        clients.sns.middlewareStack.add(
          (next) => async (args) => {
            if ((args.input as { TopicArn?: string }).TopicArn === heldTopic) {
              heldCalls += 1;
              await held;
            }
            return next(args);
          },
          { step: 'initialize', name: 'holdPublishes' },
        );
        clients.dynamodb.middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName === 'BatchGetItemCommand') {
              const requested = (args.input as { RequestItems?: Record<string, { Keys?: unknown[] }> }).RequestItems ?? {};
              reads.push(Object.values(requested).reduce((keys, table) => keys + (table.Keys?.length ?? 0), 0));
            }
            return next(args);
          },
          { step: 'initialize', name: 'countReads' },
        );
        // Its near-path events are counted by state through the listing, which finds them only when indexed.
      },
      { SCHEDULER_INDEX_QUEUED_EVENTS: 'true' },
    );
    const slow = await TopicConsumer.create(scheduler.outputs.endpoint, 'slow');
    heldTopic = slow.topicArn;
    const inState = async (state: EventState, topicArn: string) =>
      (await records.listEvents('public', { states: [state], limit: 100 })).events.filter((record) => record.target === topicArn).length;
    try {
      const dueAt = Date.now() + 3_000;
      await client.publishBatch([
        ...Array.from({ length: 10 }, (_, i) => request(target.topicArn, dueAt, `answered-${i}`)),
        ...Array.from({ length: 10 }, (_, i) => request(slow.topicArn, dueAt, `held-${i}`)),
      ]);
      await waitFor(() => heldCalls > 0 && target.deliveries.length === 10, 'the first topic delivered, the second held');
      await waitFor(async () => (await inState(EVENT_STATE.emitted, target.topicArn)) === 10, "the answered publishes' ends recorded");
      // One batch: its records were read together, and the held publishes' events are still open.
      expect(reads).toContain(20);
      expect(await inState(EVENT_STATE.queued, slow.topicArn)).toBe(10);
      releaseHeld();
      await waitFor(async () => (await inState(EVENT_STATE.emitted, slow.topicArn)) === 10, "the held publishes' ends recorded");
      expect(slow.deliveries).toHaveLength(10);
      expect(target.deliveries).toHaveLength(10);
    } finally {
      releaseHeld();
      await slow.stop();
      await stop();
    }
  });

  it('publishes an event again when its emitter stops after its publish answered and before its end was written (a crash or a timeout): late, twice, never lost', async () => {
    // The first end write never answers, as if the emitter had died, or timed out, after its
    // publish answered (ends are written as their publishes answer, so this window is one end
    // write long); past the handler's timeout its message is no longer kept hidden, comes back
    // after its visibility timeout and finds no end recorded.
    let releaseFirstEnd: (() => void) | undefined;
    const { client, target, records, stop } = await setup(
      (clients) =>
        clients.dynamodb.middlewareStack.add(
          (next, context) => async (args) => {
            if (releaseFirstEnd === undefined && recordsEnds(context.commandName ?? '', args.input)) {
              await new Promise<void>((resolve) => (releaseFirstEnd = resolve));
              throw Object.assign(new Error('the emitter was gone'), { name: 'ServiceUnavailable' });
            }
            return next(args);
          },
          { step: 'initialize', name: 'hangFirstEnd' },
        ),
      {},
      { handlerTimeoutSeconds: 5 },
    );
    try {
      const messageId = await client.publish(request(target.topicArn, Date.now() + 2_000, 'crashed before its end'));
      await waitFor(() => target.withPayload('crashed before its end').length === 2, 'the second publish', 30_000);
      await waitFor(
        async () => (await records.get(`m-${messageId}`))?.state === EVENT_STATE.emitted,
        'the end recorded by the second delivery',
        30_000,
      );
    } finally {
      releaseFirstEnd?.();
      await stop();
    }
  });
});
