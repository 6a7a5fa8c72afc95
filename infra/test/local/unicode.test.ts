import { describe, expect, it } from 'vitest';
import { REASON, SqsDelayQueue, type ScheduledEvent } from '@adhoc-scheduler/shared';
import {
  capturingLogger,
  type Delivery,
  expectNotEarly,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

/**
 * A JSON escape can carry a lone UTF-16 surrogate, which the SDK cannot encode into an SNS
 * request. Unchecked, the emitter's PublishBatch holding it failed whole, as if SNS were down:
 * every clean event of the batch came seconds late, and the bad one was retried for a day.
 */
const emulators = sharedEmulators();

/** Far less than the 5 s back-off of a publish retried as transient. */
const ON_TIME_MS = 1_000;

function expectOnTime(delivery: Delivery | undefined, dueAt: number): void {
  expectNotEarly(delivery, dueAt);
  expect((delivery?.receivedAt ?? Infinity) - dueAt).toBeLessThan(ON_TIME_MS);
}

async function setup() {
  const { logger, lines } = capturingLogger();
  const scheduler = await startTestScheduler(emulators, { logger });
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
  return {
    scheduler,
    lines,
    target,
    failures,
    async stop() {
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    },
  };
}

describe.concurrent('strings that are not well-formed Unicode', () => {
  it('are refused at ingest as INVALID_UNICODE, while a clean event due the same millisecond to the same topic is on time', async () => {
    const { scheduler, lines, target, failures, stop } = await setup();
    const client = new SchedulerClient(scheduler);
    try {
      const dueAt = Date.now() + 2_500;
      // `\ud800` in the JSON text: a lone surrogate once parsed.
      const bad = JSON.stringify(request(target.topicArn, dueAt, 'bad MARK', { failure_topic: failures.topicArn })).replace(
        'MARK',
        '\\ud800',
      );
      await client.publishBatch([bad, request(target.topicArn, dueAt, 'clean')]);

      const [clean] = await waitFor(() => target.withPayload('clean').length > 0 && target.withPayload('clean'), 'the clean event');
      expectOnTime(clean, dueAt);
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the refusal');
      // Quoted with the lone surrogate replaced, so that the notice could be published.
      expect(notice).toMatchObject({ reason: REASON.INVALID_UNICODE, event: { payload: 'bad \ufffd' }, details: { field: 'payload' } });
      expect(lines.filter((line) => line.reason === REASON.INVALID_UNICODE)).toHaveLength(1);
      expect(target.deliveries).toHaveLength(1);
    } finally {
      client.destroy();
      await stop();
    }
  });

  it('fail at emission, once and for good, an event stored before ingest refused them: the clean event of the same batch is on time', async () => {
    const { scheduler, lines, target, failures, stop } = await setup();
    try {
      const dueAt = Date.now() + 2_500;
      const event = (id: string, payload: string): ScheduledEvent => ({
        id,
        tenant: 'public',
        user: 'tests',
        target: target.topicArn,
        payload,
        failureTopic: failures.topicArn,
        dueAt,
        version: 1,
      });
      // Straight onto the delay queue, together, as events stored by an earlier version would come.
      const sent = await new SqsDelayQueue(scheduler.clients.sqs, scheduler.outputs.delayQueueUrl).send([
        { event: event('m-stored-bad', 'bad \ud800'), delaySeconds: 1, queuedBy: undefined },
        { event: event('m-stored-clean', 'clean'), delaySeconds: 1, queuedBy: undefined },
      ]);
      expect(sent).toEqual([]);

      const [clean] = await waitFor(() => target.withPayload('clean').length > 0 && target.withPayload('clean'), 'the clean event');
      expectOnTime(clean, dueAt);
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the failure notice');
      expect(notice).toMatchObject({ reason: REASON.PAYLOAD_NOT_PUBLISHABLE, eventId: 'm-stored-bad' });
      // Not retried: no record of the batch failed.
      expect(lines.filter((line) => line.reason === REASON.PAYLOAD_NOT_PUBLISHABLE)).toHaveLength(1);
      expect(lines.filter((line) => line.msg === 'record failed; it will be retried')).toEqual([]);
      expect(failures.notices()).toHaveLength(1);
      expect(target.deliveries).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});
