import { describe, expect, it } from 'vitest';
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityBatchCommandInput,
  type ChangeMessageVisibilityBatchResultEntry,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createLogger } from '@adhoc-scheduler/shared';
import { VisibilityHeartbeat } from '../src/local/visibility-heartbeat.js';

const QUEUE_URL = 'http://127.0.0.1:1/000000000000/delay';
const TIMEOUT_SECONDS = 10;

/**
 * An SQS client that answers every call itself, after whatever middleware runs ahead of it (the
 * heartbeat's watch included): the batches of extensions it was sent, and whether the next one
 * fails, are the test's.
 */
function fakeSqs() {
  const sqs = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    endpoint: 'http://127.0.0.1:1',
  });
  const extensions: ChangeMessageVisibilityBatchCommandInput[] = [];
  const behaviour: { failEntries: string[]; throwNext: boolean } = { failEntries: [], throwNext: false };
  sqs.middlewareStack.add(
    (_next, context) => async (args) => {
      if (context.commandName === 'ChangeMessageVisibilityBatchCommand') {
        if (behaviour.throwNext) {
          behaviour.throwNext = false;
          throw new Error('refused');
        }
        const input = args.input as ChangeMessageVisibilityBatchCommandInput;
        extensions.push(input);
        const failed = (input.Entries ?? []).filter((entry) => behaviour.failEntries.includes(entry.ReceiptHandle ?? ''));
        const output = {
          Successful: [] as ChangeMessageVisibilityBatchResultEntry[],
          Failed: failed.map((entry) => ({ Id: entry.Id, Code: 'ReceiptHandleIsInvalid', SenderFault: true })),
          $metadata: {},
        };
        return { output, response: {} };
      }
      return { output: { $metadata: {} }, response: {} };
    },
    { step: 'initialize', priority: 'low', name: 'answerLocally' },
  );
  const extended = (): string[] => extensions.flatMap((input) => (input.Entries ?? []).map((entry) => entry.ReceiptHandle ?? ''));
  return { sqs, extensions, extended, behaviour };
}

function heartbeatOn(sqs: SQSClient, clock: { now: number }, maxHoldSeconds?: number): VisibilityHeartbeat {
  return new VisibilityHeartbeat({
    sqs,
    queueUrl: QUEUE_URL,
    timeoutSeconds: TIMEOUT_SECONDS,
    logger: createLogger('silent'),
    now: () => clock.now,
    ...(maxHoldSeconds === undefined ? {} : { maxHoldSeconds }),
  });
}

const handles = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
const held = (receiptHandles: readonly string[], visibleUntil: number) =>
  receiptHandles.map((receiptHandle) => ({ receiptHandle, visibleUntil }));

describe('the local pollers’ visibility heartbeat', () => {
  it('extends a held message only once less than half its timeout is left, to the whole timeout from then, ten to a call', async () => {
    const { sqs, extensions, extended } = fakeSqs();
    const clock = { now: 1_000_000 };
    const heartbeat = heartbeatOn(sqs, clock);
    heartbeat.hold(held(handles('m', 25), clock.now + 10_000));

    // Held for less than half the timeout (an emitter batch waiting out its second): no call.
    clock.now += 4_000;
    await heartbeat.beat();
    expect(extensions).toHaveLength(0);

    clock.now += 1_500; // 4.5 s left
    await heartbeat.beat();
    expect(extensions.map((input) => input.Entries?.length)).toEqual([10, 10, 5]);
    expect(extensions.every((input) => input.QueueUrl === QUEUE_URL)).toBe(true);
    expect(new Set(extensions.flatMap((input) => (input.Entries ?? []).map((entry) => entry.VisibilityTimeout)))).toEqual(
      new Set([TIMEOUT_SECONDS]),
    );
    expect(extended().sort()).toEqual(handles('m', 25).sort());

    // Hidden for the whole timeout again: the next beats leave them until half of it is gone.
    clock.now += 4_000;
    await heartbeat.beat();
    expect(extensions).toHaveLength(3);
    clock.now += 1_500;
    await heartbeat.beat();
    expect(extensions).toHaveLength(6);
    await heartbeat.stop();
  });

  it('leaves alone a message whose visibility the handler changed itself, so its put-off stands', async () => {
    const { sqs, extended } = fakeSqs();
    const clock = { now: 1_000_000 };
    const heartbeat = heartbeatOn(sqs, clock);
    heartbeat.hold(held(['put-off', 'other-queue', 'worked'], clock.now + 10_000));

    // The emitter's retryLater: a failed publish put off by its back-off (here 300 s).
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: QUEUE_URL, ReceiptHandle: 'put-off', VisibilityTimeout: 300 }));
    // The same receipt on another queue is not this one's message.
    await sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: `${QUEUE_URL}-other`, ReceiptHandle: 'other-queue', VisibilityTimeout: 0 }),
    );

    clock.now += 6_000;
    await heartbeat.beat();
    expect(extended().sort()).toEqual(['other-queue', 'worked']);
    clock.now += 6_000;
    await heartbeat.beat();
    expect(extended().filter((handle) => handle === 'put-off')).toEqual([]);
    await heartbeat.stop();
  });

  it('extends nothing released, nothing already visible again, and nothing held past the longest hold', async () => {
    const { sqs, extended } = fakeSqs();
    const clock = { now: 1_000_000 };
    const heartbeat = heartbeatOn(sqs, clock, 60);
    heartbeat.hold(held(['released', 'kept'], clock.now + 10_000));
    heartbeat.hold(held(['outlived'], clock.now - 1));
    heartbeat.release(['released']);
    clock.now += 6_000;
    await heartbeat.beat();
    expect(extended()).toEqual(['kept']);

    // A handler still at it after the longest hold (Lambda's function timeout) is taken for hung.
    for (let beats = 0; beats < 20; beats += 1) {
      clock.now += 6_000;
      await heartbeat.beat();
    }
    expect(extended().length).toBeLessThanOrEqual(10);
    expect(heartbeat.due(clock.now)).toEqual([]);
    await heartbeat.stop();
  });

  it('tries a refused extension again at the next beat, and gives up on a message whose receipt SQS no longer takes', async () => {
    const { sqs, extended, behaviour } = fakeSqs();
    const clock = { now: 1_000_000 };
    const heartbeat = heartbeatOn(sqs, clock);
    heartbeat.hold(held(['a', 'gone'], clock.now + 10_000));
    clock.now += 6_000;
    behaviour.throwNext = true;
    await heartbeat.beat();
    expect(extended()).toEqual([]);

    clock.now += 1_000;
    behaviour.failEntries = ['gone'];
    await heartbeat.beat();
    expect(extended().sort()).toEqual(['a', 'gone']);
    expect(heartbeat.due(clock.now + 6_000)).toEqual(['a']);
    await heartbeat.stop();
  });

  it('stops watching the client it shares with the handlers when stopped', async () => {
    const { sqs } = fakeSqs();
    const before = sqs.middlewareStack.identify().length;
    const heartbeat = heartbeatOn(sqs, { now: 0 }).start();
    expect(sqs.middlewareStack.identify().length).toBe(before + 1);
    await heartbeat.stop();
    expect(sqs.middlewareStack.identify().length).toBe(before);
  });
});
