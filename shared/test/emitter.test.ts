import { describe, expect, it, vi } from 'vitest';
import { emitBatch, PausedTenants } from '../src/app/emitter.js';
import { NoticePace } from '../src/app/notice-pace.js';
import { PublishWindow } from '../src/app/publish-window.js';
import { EMISSION_ATTRIBUTE, emissionAttributes, type ScheduledEvent } from '../src/domain/event.js';
import { recordKeptFrom } from '../src/domain/emission.js';
import { SQS_MAX_DELAY_SECONDS } from '../src/domain/limits.js';
import { noticeAttributes } from '../src/domain/failure.js';
import { EVENT_STATE, type EventRecord } from '../src/domain/lifecycle.js';
import { encodeDelayQueueMessage, encodeNoticePack } from '../src/domain/messages.js';
import { EventRejectedError, REASON, TransientError } from '../src/domain/reasons.js';
import { shardOf } from '../src/domain/sharding.js';
import { tenantShardKey } from '../src/domain/table-keys.js';
import { registry, sqsRecord, topicArn } from './factories.js';
import {
  DUE,
  delayed,
  ENDS_RETRY_MAX_SECONDS,
  event,
  MAX_AGE_SECONDS,
  NEAR_PATH_WINDOW_SECONDS,
  queued,
  sentRecord,
  setup,
  TARGET_ACCOUNT,
  TENANTS,
} from './emitter-kit.js';
import { FakeClock, MemoryLastErrors } from './fakes.js';

/** A notice ingest handed over, for the emitter to publish. */
const INVALID_DATE_NOTICE = {
  reason: REASON.INVALID_DATE,
  message: 'bad date',
  event: { date: 'x' },
  failedAt: '2030-01-01T00:00:00.000Z',
  details: {},
};

/** The delay-queue message of an INVALID_DATE notice for `topic`. */
const invalidDateNotice = (noticeId: string, topic: string) =>
  encodeDelayQueueMessage({ kind: 'notice', noticeId, failureTopic: topicArn(topic), notice: INVALID_DATE_NOTICE });

describe('the emitter', () => {
  it('waits for the due time, publishes, then records the emission', async () => {
    const { deps, publisher, store, logger } = setup();
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toEqual([
      { topic: topicArn('out'), message: 'hello', attributes: emissionAttributes(event(), DUE), at: DUE },
    ]);
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.emitted, emittedAt: DUE });
    expect(logger.at('warn')).toEqual([]);
  });

  it("writes out the batch's metrics once it is done, the emission counted", async () => {
    const { deps, metrics } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(metrics.flushed).toEqual([{ EventsEmitted: 1 }]);
  });

  it('publishes a copy of an event it has no record of, with a warning, and writes no end for it', async () => {
    const { deps, publisher, store, metrics, logger } = setup();
    store.records.delete('m-1');
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published.map(({ message }) => message)).toEqual(['hello']);
    expect(logger.at('warn')).toEqual([
      { level: 'warn', fields: { eventId: 'm-1' }, message: 'no record of this event; emitting it all the same' },
    ]);
    expect(store.calls.endEmissions).toBeUndefined();
    expect(metrics.counts.DuplicateEmissions).toBeUndefined();
  });

  it('drops, as RECORD_EXPIRED, a copy redriven after the record of its emitted event expired: the event is not published twice', async () => {
    const { deps, clock, publisher, store, metrics, logger } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published).toHaveLength(1);
    // Kept retentionSeconds after its end, the record is then deleted by DynamoDB's TTL; a copy comes back from a dead-letter queue.
    clock.set((store.records.get('m-1') as EventRecord).expiresAt * 1000);
    store.records.delete('m-1');
    const response = await emitBatch(deps, [sentRecord(delayed(event()), clock.now(), 'sqs-redriven')]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(1);
    expect(metrics.counts.StaleMessagesDropped).toBe(1);
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { eventId: 'm-1', reason: REASON.RECORD_EXPIRED },
        message: 'no record of this event, and it may have expired after the event ended; dropped',
      },
    ]);
  });

  it('emits a copy with no record only while its record, had it been written, would still be kept', async () => {
    const keptFrom = recordKeptFrom(DUE, 3600);
    // Kept an hour after its due time, or its end (never before its due time less SQS's longest delay, when its copy was sent at the earliest).
    expect(keptFrom).toBe(DUE + (3600 - SQS_MAX_DELAY_SECONDS) * 1000);
    for (const [now, published] of [
      [keptFrom - 1, 1],
      [keptFrom, 0],
    ] as const) {
      const { deps, clock, publisher, store } = setup();
      store.records.delete('m-1');
      clock.set(now);
      await emitBatch(deps, [sentRecord(delayed(event()), now)]);
      expect(publisher.published).toHaveLength(published);
    }
  });

  it('counts each emission and records its lateness, from the due time to the publish, for the lateness alarm', async () => {
    const { deps, clock, metrics } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    // A copy that arrives 250 ms after its due time is published at once, 250 ms late.
    deps.store.put(queued(event({ id: 'm-2' }), { queuedBy: 'copy-2' }));
    clock.set(DUE + 250);
    await emitBatch(deps, [sqsRecord(delayed(event({ id: 'm-2' }), 'copy-2'), 'sqs-2')]);
    expect(metrics.lateness).toEqual([0, 250]);
    expect(metrics.counts.EventsEmitted).toBe(2);
  });

  it("reads a batch's records once, before the due time, and records each end as soon as its publish answers, without waiting for the batch's others", async () => {
    const { deps, publisher, store } = setup();
    const slow = event({ id: 'm-2', target: topicArn('slow') });
    store.put(queued(slow));
    let answerSlow = (): void => {};
    const slowAnswered = new Promise<void>((resolve) => (answerSlow = resolve));
    const writesAtPublish: number[] = [];
    const publish = publisher.publish.bind(publisher);
    publisher.publish = async (topic, message) => {
      if (topic === topicArn('slow')) await slowAnswered;
      writesAtPublish.push(store.calls.endEmissions ?? 0);
      return publish(topic, message);
    };
    const openBefore = store.openEvents.get('acme') ?? 0;
    const emitting = emitBatch(deps, [sqsRecord(delayed(event()), 'a'), sqsRecord(delayed(slow), 'b')]);
    await vi.waitFor(() => expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.emitted));
    expect(store.records.get('m-2')?.state).toBe(EVENT_STATE.queued);
    answerSlow();
    expect((await emitting).batchItemFailures).toEqual([]);
    // Nothing is written before a publish: the first saw no write, the second the first's end.
    expect(writesAtPublish).toEqual([0, 1]);
    // Two end writes, each counted in its tenant's minute, and the places they release freed once the batch is done.
    expect(store.calls).toEqual({ read: 1, endEmissions: 2, countEnds: 2, releasePlaces: 1 });
    expect(store.openEvents.get('acme') ?? 0).toBe(openBefore - 2);
    expect(store.records.get('m-2')?.state).toBe(EVENT_STATE.emitted);
  });

  it('holds a publish due while as many publishes as its window allows are answered and not yet recorded, and sends it once one is', async () => {
    const { deps, publisher, store } = setup(undefined, 1);
    store.put(queued(event({ id: 'm-2' })));
    let recordFirst = (): void => {};
    const firstRecorded = new Promise<void>((resolve) => (recordFirst = resolve));
    const endEmissions = store.endEmissions.bind(store);
    store.endEmissions = async (ends) => {
      await firstRecorded;
      return endEmissions(ends);
    };
    const published: string[] = [];
    const publish = publisher.publish.bind(publisher);
    publisher.publish = async (topic, message) => {
      published.push(message);
      return publish(topic, message);
    };
    const emitting = emitBatch(deps, [sqsRecord(delayed(event()), 'a'), sqsRecord(delayed(event({ id: 'm-2' })), 'b')]);
    await vi.waitFor(() => expect(published).toHaveLength(1));
    // The first publish answered; its end is held, so the second waits though it is due.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(published).toHaveLength(1);
    recordFirst();
    expect((await emitting).batchItemFailures).toEqual([]);
    expect(published).toHaveLength(2);
    expect([store.records.get('m-1')?.state, store.records.get('m-2')?.state]).toEqual([EVENT_STATE.emitted, EVENT_STATE.emitted]);
  });

  it('records the ends of publishes that answer together in one write', async () => {
    const { deps, store } = setup();
    store.put(queued(event({ id: 'm-2' })));
    await emitBatch(deps, [sqsRecord(delayed(event()), 'a'), sqsRecord(delayed(event({ id: 'm-2' })), 'b')]);
    expect(store.calls.endEmissions).toBe(1);
    expect([store.records.get('m-1')?.state, store.records.get('m-2')?.state]).toEqual([EVENT_STATE.emitted, EVENT_STATE.emitted]);
  });

  it('waits again when the timer fires a millisecond early: never early', async () => {
    const { deps, publisher, clock } = setup();
    const sleep = clock.sleep;
    let first = true;
    deps.clock.sleep = async (ms) => {
      await sleep(first ? ms - 1 : ms);
      first = false;
    };
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published[0]?.at).toBe(DUE);
  });

  it('drops a redelivery of an event already emitted (a sequential duplicate)', async () => {
    const { deps, publisher, metrics } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1')]);
    const again = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    expect(again.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(1);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it('drops an earlier copy of an event that was sent again with a new token', async () => {
    const { deps, publisher, store, metrics } = setup();
    store.put(queued(event(), { queuedBy: 'copy-2' }));
    await emitBatch(deps, [sqsRecord(delayed(event(), 'copy-1'))]);
    expect(publisher.published).toHaveLength(0);
    expect(metrics.counts.StaleMessagesDropped).toBe(1);
  });

  it('notices two copies emitted at once: counted as DuplicateEmissions, not suppressed', async () => {
    const { deps, publisher, metrics } = setup();
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'a'), sqsRecord(delayed(event()), 'b')]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(2);
    expect(metrics.counts.DuplicateEmissions).toBe(1);
  });

  it('emits an event written before records carried tokens (the shape of earlier versions)', async () => {
    const { deps, publisher, store } = setup();
    store.put({ ...queued(event(), { queuedBy: undefined, payloadKept: 'record' }), payload: 'hello' });
    await emitBatch(deps, [sqsRecord(delayed(event(), null))]);
    expect(publisher.published).toHaveLength(1);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.emitted);
  });

  it('puts a publish that failed for a transient reason back for a retry, later each time, and records nothing', async () => {
    const { deps, store, publisher, delayQueue, metrics } = setup((topic) =>
      topic === topicArn('out') ? new TransientError('throttled') : undefined,
    );
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 5)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(delayQueue.retries).toEqual([
      { receiptHandle: 'rh-sqs-1', delaySeconds: 2 },
      { receiptHandle: 'rh-sqs-1', delaySeconds: 16 },
    ]);
    expect(metrics.counts.PublishRetries).toBe(2);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.queued);
    expect(publisher.published).toHaveLength(0);
  });

  it('keeps retrying a transient failure however many deliveries it takes, while the event is younger than the maximum age', async () => {
    const { deps, clock, delayQueue } = setup((topic) => (topic === topicArn('out') ? new TransientError('throttled') : undefined));
    clock.set(DUE + (MAX_AGE_SECONDS - 1) * 1000);
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 100)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(delayQueue.retries.at(-1)?.delaySeconds).toBe(900);
  });

  it('counts the age of a copy sent after its due time from its send: an event dated two days ago is retried', async () => {
    const { deps, clock, metrics, publisher, store } = setup((topic) =>
      topic === topicArn('out') ? new TransientError('throttled') : undefined,
    );
    const past = event({ dueAt: DUE - 2 * 24 * 3600 * 1000 });
    store.put(queued(past));
    const response = await emitBatch(deps, [sentRecord(delayed(past), clock.now() - 1000)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(metrics.counts.PublishRetries).toBe(1);
    expect(publisher.published).toHaveLength(0);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.queued);
  });

  it('gives a copy up once it has been due for the maximum age, counted from its send when that came after the due time', async () => {
    const { deps, clock, publisher, store } = setup((topic) => (topic === topicArn('out') ? new TransientError('throttled') : undefined));
    const sent = DUE + 60_000;
    clock.set(sent + MAX_AGE_SECONDS * 1000);
    const response = await emitBatch(deps, [sentRecord(delayed(event()), sent)]);
    expect(response.batchItemFailures).toEqual([]);
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({
      reason: REASON.PUBLISH_FAILED,
      message: `publishing to the target kept failing for ${MAX_AGE_SECONDS} s after the copy was due: TransientError: throttled`,
      details: { ageSeconds: MAX_AGE_SECONDS },
    });
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.failed);
  });

  it('reports PUBLISH_FAILED on the failure topic once the event is past the maximum age, and is done with it', async () => {
    const { deps, store, publisher, clock } = setup((topic) => (topic === topicArn('out') ? new TransientError('throttled') : undefined));
    clock.set(DUE + MAX_AGE_SECONDS * 1000);
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 3)]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published.map((p) => p.topic)).toEqual([topicArn('failures')]);
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({ reason: REASON.PUBLISH_FAILED, eventId: 'm-1' });
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.failed, reason: REASON.PUBLISH_FAILED });
  });

  it('hands ends it cannot record over to a later delivery, and lets the messages go', async () => {
    const { deps, store, delayQueue } = setup();
    const endEmissions = store.endEmissions.bind(store);
    store.endEmissions = async () => {
      throw new TransientError('DynamoDB down');
    };
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1')]);
    expect(response.batchItemFailures).toEqual([]);
    expect(delayQueue.handedOver.flat().map(({ event: { id } }) => id)).toEqual(['m-1']);
    // Only what recording it needs: a hundred ends of large payloads would not fit one SQS message.
    expect(Object.keys(delayQueue.handedOver.flat()[0]?.event ?? {}).sort()).toEqual(['dueAt', 'id', 'tenant', 'version']);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.queued);

    store.endEmissions = endEmissions;
    const handedOver = encodeDelayQueueMessage({ kind: 'ends', ends: delayQueue.handedOver.flat() });
    expect((await emitBatch(deps, [sqsRecord(handedOver, 'ends-1')])).batchItemFailures).toEqual([]);
    await emitBatch(deps, [sqsRecord(handedOver, 'ends-1', 2)]);
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.emitted, emittedAt: DUE });
    expect(store.openEvents.get('acme')).toBe(-1);
  });

  it('holds handed-over ends at most endsRetryMaxSeconds, from before it writes them (a crash included), and tries again sooner at first', async () => {
    const { deps, store, delayQueue } = setup();
    const ends = [{ event: event(), end: { state: 'emitted' as const, at: DUE }, expiresAt: DUE / 1000 + 3600, endedBy: 'delivery-1' }];
    const body = encodeDelayQueueMessage({ kind: 'ends', ends });
    const endEmissions = store.endEmissions.bind(store);
    const holdsAtWrite: number[] = [];
    store.endEmissions = async () => {
      holdsAtWrite.push(delayQueue.retries.length);
      throw new TransientError('DynamoDB down');
    };
    const failed = await emitBatch(deps, [sqsRecord(body, 'ends-1', 2)]);
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'ends-1' }]);
    expect(holdsAtWrite).toEqual([1]);
    expect(delayQueue.retries).toEqual([
      { receiptHandle: 'rh-ends-1', delaySeconds: ENDS_RETRY_MAX_SECONDS },
      { receiptHandle: 'rh-ends-1', delaySeconds: 2 },
    ]);
    await emitBatch(deps, [sqsRecord(body, 'ends-1', 50)]);
    expect(delayQueue.retries.at(-1)?.delaySeconds).toBe(ENDS_RETRY_MAX_SECONDS);

    store.endEmissions = endEmissions;
    expect((await emitBatch(deps, [sqsRecord(body, 'ends-1', 51)])).batchItemFailures).toEqual([]);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.emitted);
  });

  it('tries handed-over ends again later while the store cannot say they are recorded, each time after a spread-out wait', async () => {
    const { deps, store, delayQueue } = setup();
    const ends = [{ event: event(), end: { state: 'emitted' as const, at: DUE }, expiresAt: DUE / 1000 + 3600, endedBy: 'delivery-1' }];
    const body = encodeDelayQueueMessage({ kind: 'ends', ends });
    store.endEmissions = async (unsettled) => ({ recorded: [], alreadyEnded: [], unknown: [...unsettled], applied: [] });
    // The lowest spread (random 0) of 4, 8 and 16 s: 20 % shorter.
    const lowest = { ...deps, random: () => 0 };
    for (const receives of [3, 4, 5]) {
      expect((await emitBatch(lowest, [sqsRecord(body, 'ends-1', receives)])).batchItemFailures).toEqual([{ itemIdentifier: 'ends-1' }]);
    }
    expect(delayQueue.retries.map(({ delaySeconds }) => delaySeconds)).toEqual([30, 3, 30, 6, 30, 13]);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.queued);
  });

  it('keeps the messages when the ends can neither be recorded nor handed over', async () => {
    const { deps, store, delayQueue } = setup();
    store.endEmissions = async () => {
      throw new TransientError('DynamoDB down');
    };
    delayQueue.refuseHandOvers = true;
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1')]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
  });

  it('reports a target that refuses the publish at once, without retrying', async () => {
    const denied = new EventRejectedError(REASON.TARGET_ACCESS_DENIED, 'denied');
    const { deps, publisher } = setup((topic) => (topic === topicArn('out') ? denied : undefined));
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    // Refused at its due time: its copy had been due 0 s.
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({
      reason: REASON.TARGET_ACCESS_DENIED,
      details: { ageSeconds: 0 },
    });
  });

  it('lists a failed near-path event with its end, even without SCHEDULER_INDEX_QUEUED_EVENTS; an emitted one and a stored one keep their keys', async () => {
    const missing = new EventRejectedError(REASON.TARGET_NOT_FOUND, 'no such topic');
    const { deps, store } = setup((topic) => (topic === topicArn('gone') ? missing : undefined));
    store.put(queued(event({ id: 'm-2', target: topicArn('gone') })));
    store.put({ ...queued(event({ id: 'm-3', target: topicArn('gone') })), payloadKept: 'record', tenantShard: 'acme#s9' });
    await emitBatch(deps, [
      sqsRecord(delayed(event()), 'sqs-1'),
      sqsRecord(delayed(event({ id: 'm-2', target: topicArn('gone') })), 'sqs-2'),
      sqsRecord(delayed(event({ id: 'm-3', target: topicArn('gone') })), 'sqs-3'),
    ]);
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.emitted, tenantShard: undefined });
    expect(store.records.get('m-2')).toMatchObject({
      state: EVENT_STATE.failed,
      tenantShard: tenantShardKey('acme', 'q', shardOf('m-2', { shardCount: 4 })),
    });
    expect(store.records.get('m-3')).toMatchObject({ state: EVENT_STATE.failed, tenantShard: 'acme#s9' });
  });

  it('quotes an event stored with a lone surrogate well-formed in the notice of its failure', async () => {
    const missing = new EventRejectedError(REASON.TARGET_NOT_FOUND, 'no such topic');
    const { deps, publisher, store } = setup((topic) => (topic === topicArn('out') ? missing : undefined));
    // Stored before ingest refused such strings (INVALID_UNICODE).
    const stored = event({ user: 'bad \ud800' });
    store.put(queued(stored));
    await emitBatch(deps, [sqsRecord(delayed(stored))]);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures')]);
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({
      reason: REASON.TARGET_NOT_FOUND,
      event: { user: 'bad \ufffd' },
    });
  });

  it('publishes a failure notice handed over by ingest to its failure topic, once: a redelivery is a duplicate suppressed', async () => {
    const { deps, publisher, metrics } = setup();
    const notice = INVALID_DATE_NOTICE;
    const body = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', failureTopic: topicArn('failures'), notice });
    await emitBatch(deps, [sqsRecord(body, 'sqs-1')]);
    await emitBatch(deps, [sqsRecord(body, 'sqs-1', 2)]);
    expect(publisher.published).toEqual([
      { topic: topicArn('failures'), message: JSON.stringify(notice), attributes: noticeAttributes(notice), at: DUE - 700 },
    ]);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it('publishes a failure notice delivered twice at once to one process once: its packs go one at a time, and the later copy finds the mark', async () => {
    const { deps, publisher, metrics } = setup();
    const body = invalidDateNotice('n-1', 'failures');
    const responses = await Promise.all([emitBatch(deps, [sqsRecord(body, 'a')]), emitBatch(deps, [sqsRecord(body, 'b')])]);
    expect(responses.map(({ batchItemFailures }) => batchItemFailures)).toEqual([[], []]);
    expect(publisher.published).toHaveLength(1);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it('publishes a failure notice delivered twice at once to two processes by both copies, as it does an event: the second mark counted and logged, not suppressed', async () => {
    const { deps, publisher, metrics, logger } = setup();
    const otherProcess = { ...deps, noticePace: new NoticePace() };
    const body = invalidDateNotice('n-1', 'failures');
    // Both copies read the notice's mark before either marks it: both publish.
    const responses = await Promise.all([emitBatch(deps, [sqsRecord(body, 'a')]), emitBatch(otherProcess, [sqsRecord(body, 'b')])]);
    expect(responses.map(({ batchItemFailures }) => batchItemFailures)).toEqual([[], []]);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures'), topicArn('failures')]);
    expect(metrics.counts.DuplicateEmissions).toBe(1);
    expect(logger.at('warn')).toEqual([
      { level: 'warn', fields: { noticeId: 'n-1' }, message: 'notice published by two deliveries at once' },
    ]);
    // A copy delivered after them finds it marked.
    expect((await emitBatch(deps, [sqsRecord(body, 'c', 2)])).batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(2);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it("sends one process's notice packs one at a time, while an event due publishes on time beside them", async () => {
    const { deps, publisher, store } = setup();
    store.put(queued(event({ id: 'm-2' })));
    let answerFirst = (): void => {};
    const firstAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
    const publish = publisher.publish.bind(publisher);
    publisher.publish = async (topic, message, attributes) => {
      if (topic === topicArn('first')) await firstAnswered;
      return publish(topic, message, attributes);
    };
    const reads = vi.spyOn(deps.notices, 'sent');
    const notice = (noticeId: string, topic: string) => sqsRecord(invalidDateNotice(noticeId, topic), noticeId);
    const first = emitBatch(deps, [notice('n-1', 'first')]);
    const second = emitBatch(deps, [notice('n-2', 'second'), sqsRecord(delayed(event({ id: 'm-2' })), 'e')]);
    // The event is published at its due time while the first pack waits on its topic; the second pack has not begun.
    await vi.waitFor(() => expect(store.records.get('m-2')?.state).toBe(EVENT_STATE.emitted));
    expect(reads).toHaveBeenCalledTimes(1);
    answerFirst();
    expect((await Promise.all([first, second])).map(({ batchItemFailures }) => batchItemFailures)).toEqual([[], []]);
    expect(publisher.published.map(({ topic, at }) => [topic, at])).toEqual([
      [topicArn('out'), DUE],
      [topicArn('first'), DUE],
      [topicArn('second'), DUE],
    ]);
  });

  it('publishes a failure notice on a later delivery when its publish failed for a transient reason', async () => {
    let refuse = true;
    const { deps, publisher } = setup((topic) => (topic === topicArn('failures') && refuse ? new TransientError('throttled') : undefined));
    const notice = INVALID_DATE_NOTICE;
    const body = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', failureTopic: topicArn('failures'), notice });
    expect((await emitBatch(deps, [sqsRecord(body, 'sqs-1')])).batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    refuse = false;
    expect((await emitBatch(deps, [sqsRecord(body, 'sqs-1', 2)])).batchItemFailures).toEqual([]);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures')]);
  });

  it('publishes each notice of a pack once; a pack retried after one failed publishes only that one again', async () => {
    let refuse = true;
    const { deps, publisher } = setup((topic) => (topic === topicArn('throttled') && refuse ? new TransientError('throttled') : undefined));
    const notice = INVALID_DATE_NOTICE;
    const packed = (noticeId: string, topic: string) =>
      encodeDelayQueueMessage({ kind: 'notice', noticeId, failureTopic: topicArn(topic), notice });
    const body = encodeNoticePack([packed('n-1', 'failures'), packed('n-2', 'throttled'), packed('n-3', 'failures')]);
    expect((await emitBatch(deps, [sqsRecord(body, 'pack')])).batchItemFailures).toEqual([{ itemIdentifier: 'pack' }]);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures'), topicArn('failures')]);
    refuse = false;
    expect((await emitBatch(deps, [sqsRecord(body, 'pack', 2)])).batchItemFailures).toEqual([]);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures'), topicArn('failures'), topicArn('throttled')]);
  });

  it('reads neither event records nor pauses, and frees no places, for a batch without events', async () => {
    const { deps, store } = setup();
    const paused = vi.spyOn(deps.pausedTenants, 'of');
    const notice = INVALID_DATE_NOTICE;
    const body = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', failureTopic: topicArn('failures'), notice });
    expect((await emitBatch(deps, [sqsRecord(body, 'a'), sqsRecord('not a message', 'bad')])).batchItemFailures).toEqual([
      { itemIdentifier: 'bad' },
    ]);
    expect(store.calls).toEqual({});
    expect(paused).not.toHaveBeenCalled();
  });

  describe('the registry as it stands at the due time', () => {
    it('fails an event whose target its tenant may no longer use, without publishing it: TARGET_NOT_ALLOWED, told where the tenant may still be told', async () => {
      const { deps, publisher, store } = setup();
      const publicDeadLetters = topicArn('public-dead-letters', 'eu-west-1', '999999999999');
      const scheduled = event({ tenant: 'public' });
      store.put(queued(scheduled));
      // Since the event was scheduled, the target's account was registered as a tenant's own.
      const now = registry({
        public: { deadLetterTopic: publicDeadLetters },
        tenants: [...TENANTS.tenants, { id: 'globex', accounts: [TARGET_ACCOUNT] }],
      });
      const response = await emitBatch({ ...deps, tenants: now }, [sqsRecord(delayed(scheduled))]);
      expect(response.batchItemFailures).toEqual([]);
      // Not to the target, nor to the failure topic in the same account: to the dead-letter topic.
      expect(publisher.published.map(({ topic }) => topic)).toEqual([publicDeadLetters]);
      expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({ reason: REASON.TARGET_NOT_ALLOWED, eventId: 'm-1' });
      expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.failed, reason: REASON.TARGET_NOT_ALLOWED });
    });

    it('fails the event of a tenant no longer registered: UNKNOWN_TENANT, in the logs only', async () => {
      const { deps, publisher, store, metrics } = setup();
      const response = await emitBatch({ ...deps, tenants: registry({}) }, [sqsRecord(delayed(event()))]);
      expect(response.batchItemFailures).toEqual([]);
      expect(publisher.published).toEqual([]);
      expect(metrics.counts.EventsFailed).toBe(1);
      expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.failed, reason: REASON.UNKNOWN_TENANT });
    });

    describe('a notice ingest handed over', () => {
      const notice = INVALID_DATE_NOTICE;
      const publicDeadLetters = topicArn('public-dead-letters', 'eu-west-1', '999999999999');
      const publicFailures = topicArn('failures', 'eu-west-1', '888888888888');
      const handedOver = (tenant?: string) =>
        encodeDelayQueueMessage({
          kind: 'notice',
          noticeId: 'n-1',
          tenant,
          failureTopic: publicFailures,
          deadLetterTopic: publicDeadLetters,
          notice,
        });

      it("goes only where its tenant may still be told: not to a failure topic in an account registered as another tenant's since", async () => {
        const { deps, publisher } = setup();
        const now = registry({
          public: { deadLetterTopic: publicDeadLetters },
          tenants: [...TENANTS.tenants, { id: 'globex', accounts: ['888888888888'] }],
        });
        const response = await emitBatch({ ...deps, tenants: now }, [sqsRecord(handedOver('public'))]);
        expect(response.batchItemFailures).toEqual([]);
        expect(publisher.published.map(({ topic }) => topic)).toEqual([publicDeadLetters]);
      });

      it('goes nowhere but the logs when its tenant is no longer registered', async () => {
        const { deps, publisher, logger } = setup();
        const response = await emitBatch({ ...deps, tenants: registry({}) }, [
          sqsRecord(
            encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', tenant: 'acme', failureTopic: topicArn('failures'), notice }),
          ),
        ]);
        expect(response.batchItemFailures).toEqual([]);
        expect(publisher.published).toEqual([]);
        expect(logger.at('warn')).toEqual([
          {
            level: 'warn',
            fields: { noticeId: 'n-1', tenant: 'acme', reason: REASON.INVALID_DATE },
            message: 'notice not published: its tenant may no longer be told where ingest chose',
          },
        ]);
        // Nothing marked: nothing was published.
        expect(deps.notices.marked.size).toBe(0);
      });

      it('goes where ingest chose when it was queued before notices named their tenant', async () => {
        const { deps, publisher } = setup();
        await emitBatch(deps, [sqsRecord(handedOver())]);
        expect(publisher.published.map(({ topic }) => topic)).toEqual([publicFailures]);
      });
    });

    it('tells a failed emission only on a failure topic the tenant may still use', async () => {
      const missing = new EventRejectedError(REASON.TARGET_NOT_FOUND, 'no such topic');
      const { deps, publisher } = setup((topic) => (topic === topicArn('out') ? missing : undefined));
      // An account acme may no longer target (taken out of its targetAccounts since).
      const scheduled = event({ failureTopic: topicArn('failures', 'eu-west-1', '222222222222') });
      await emitBatch(deps, [sqsRecord(delayed(scheduled))]);
      expect(publisher.published).toEqual([]);
    });
  });

  describe("the tenant's dead-letter topic", () => {
    const deadLetters = topicArn('dead-letters', 'eu-west-1', '111111111111');
    const withDeadLetters = registry({
      tenants: [{ id: 'acme', accounts: ['111111111111'], targetAccounts: [TARGET_ACCOUNT], deadLetterTopic: deadLetters }],
    });
    const missing = (topic: string) => new EventRejectedError(REASON.TARGET_NOT_FOUND, `${topic} does not exist`);

    it('receives the notice of a failed emission whose event named no failure topic', async () => {
      const { deps, publisher, store } = setup((topic) => (topic === topicArn('out') ? missing(topic) : undefined));
      store.put(queued(event({ failureTopic: undefined })));
      await emitBatch({ ...deps, tenants: withDeadLetters }, [sqsRecord(delayed(event({ failureTopic: undefined })))]);
      expect(publisher.published.map(({ topic }) => topic)).toEqual([deadLetters]);
      expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({ reason: REASON.TARGET_NOT_FOUND, eventId: 'm-1' });
    });

    it('receives the notice the failure topic refuses', async () => {
      const { deps, publisher } = setup((topic) =>
        topic === topicArn('out') || topic === topicArn('failures') ? missing(topic) : undefined,
      );
      const response = await emitBatch({ ...deps, tenants: withDeadLetters }, [sqsRecord(delayed(event()))]);
      expect(response.batchItemFailures).toEqual([]);
      expect(publisher.published.map(({ topic }) => topic)).toEqual([deadLetters]);
    });

    it('is not told when the failure topic takes the notice', async () => {
      const { deps, publisher } = setup((topic) => (topic === topicArn('out') ? missing(topic) : undefined));
      await emitBatch({ ...deps, tenants: withDeadLetters }, [sqsRecord(delayed(event()))]);
      expect(publisher.published.map(({ topic }) => topic)).toEqual([topicArn('failures')]);
    });

    it('receives, once, a notice ingest handed over for it, where the request named no failure topic', async () => {
      const { deps, publisher } = setup();
      const notice = { reason: REASON.INVALID_JSON, message: 'not JSON', event: '{', failedAt: '2030-01-01T00:00:00.000Z', details: {} };
      const direct = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', deadLetterTopic: deadLetters, notice });
      await emitBatch(deps, [sqsRecord(direct, 'a')]);
      await emitBatch(deps, [sqsRecord(direct, 'a', 2)]);
      expect(publisher.published.map(({ topic }) => topic)).toEqual([deadLetters]);
    });

    it('costs a refused request one publish at most, a read and a write: a notice its failure topic refuses is not published to the dead-letter topic as well', async () => {
      const attempts: string[] = [];
      const { deps, publisher, logger } = setup((topic) => {
        attempts.push(topic);
        return topic === topicArn('failures') ? missing(topic) : undefined;
      });
      const reads = vi.spyOn(deps.notices, 'sent');
      const writes = vi.spyOn(deps.notices, 'markSent');
      // As ingest hands it over: the tenant, and the failure topic the request named.
      const notice = { reason: REASON.INVALID_DATE, message: 'not a date', event: '{}', failedAt: '2030-01-01T00:00:00.000Z', details: {} };
      const refused = encodeDelayQueueMessage({
        kind: 'notice',
        noticeId: 'n-2',
        tenant: 'acme',
        failureTopic: topicArn('failures'),
        notice,
      });
      const response = await emitBatch({ ...deps, tenants: withDeadLetters }, [sqsRecord(refused, 'b')]);
      expect(response.batchItemFailures).toEqual([]);
      expect(attempts).toEqual([topicArn('failures')]);
      expect(publisher.published).toEqual([]);
      expect({ reads: reads.mock.calls.length, writes: writes.mock.calls.length }).toEqual({ reads: 1, writes: 1 });
      expect(logger.at('warn').map(({ message }) => message)).toEqual(['failure topic cannot take the notice']);
    });
  });

  it('drops a message of a version that was rescheduled since it was queued', async () => {
    const { deps, publisher, store } = setup();
    store.put(queued(event({ version: 2 })));
    const response = await emitBatch(deps, [sqsRecord(delayed(event({ version: 1 })))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(0);
  });

  it('drops the message of an event cancelled since it was queued', async () => {
    const { deps, publisher, store } = setup();
    store.put(queued(event(), { state: EVENT_STATE.cancelled }));
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published).toHaveLength(0);
  });

  it('fails only the record it cannot read, not its batch, puts it off, and keeps why for the dead-letter tools', async () => {
    const { deps, publisher, delayQueue, clock } = setup();
    const lastErrors = new MemoryLastErrors();
    const response = await emitBatch({ ...deps, failureLog: { lastErrors, fn: 'emitter', clock } }, [
      sqsRecord('not a message', 'bad'),
      sqsRecord(delayed(event()), 'good'),
    ]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect(delayQueue.retries.map(({ receiptHandle }) => receiptHandle)).toEqual(['rh-bad']);
    expect(publisher.published).toHaveLength(1);
    // The decoder's own error: the body is not JSON.
    expect(lastErrors.errors.get('bad')?.error.name).toBe('SyntaxError');
  });

  it("reports a failed read of a batch's pauses on the records that need it, never as an unhandled rejection", async () => {
    const { deps, publisher } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1')]);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      // The copy delivered again is dropped without waiting for the pauses, whose read fails.
      const failing = { ...deps, pausedTenants: { of: async () => Promise.reject(new TransientError('DynamoDB down')) } };
      expect((await emitBatch(failing, [sqsRecord(delayed(event()), 'sqs-1', 2)])).batchItemFailures).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(publisher.published).toHaveLength(1);
  });

  it('logs, for a reconcile, the places in the open-events quota it could not free, and fails nothing', async () => {
    const { deps, store, logger } = setup();
    store.releasePlaces = async () => {
      throw new TransientError('DynamoDB down');
    };
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.emitted);
    expect(logger.at('warn').map(({ fields, message }) => ({ fields, message }))).toEqual([
      { fields: { err: expect.any(TransientError) }, message: 'could not free places in the open-events quota' },
      {
        fields: { tenant: 'acme', count: 1 },
        message: 'ends recorded, but their places in the open-events quota could not be freed; the count stays high until reconciled',
      },
    ]);
  });
});

describe('carrying on a rescheduled event whose payload only its delay-queue copy held', () => {
  /** Version 1's copy `copy-1` arrives; the record says the event moved to `dueAt` as version 2. */
  function moved(dueAt: number) {
    const context = setup();
    context.store.put(queued(event(), { version: 2, dueAt, carriedBy: 'copy-1', lastChangeBy: 'input-2', lastChangeAt: DUE - 60_000 }));
    return context;
  }

  it('sends a new copy of the current version, due at the new time, and names it on the record: never published early', async () => {
    const { deps, publisher, store, delayQueue, metrics, clock } = moved(DUE + 60_000);
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toEqual([]);
    const [copy] = delayQueue.sent;
    expect(copy?.event).toMatchObject({ id: 'm-1', version: 2, dueAt: DUE + 60_000, payload: 'hello' });
    expect(copy?.delaySeconds).toBe(Math.floor((DUE + 60_000 - clock.now() - 1300) / 1000));
    expect(store.records.get('m-1')).toMatchObject({
      state: EVENT_STATE.queued,
      version: 2,
      queuedBy: copy?.queuedBy,
      carriedBy: undefined,
    });
    expect(metrics.counts.EventsCarried).toBe(1);

    // The new copy is emitted at the new time; the old one, delivered again, is dropped.
    await emitBatch(deps, [sqsRecord(delayed(copy?.event as ScheduledEvent, copy?.queuedBy ?? null), 'sqs-2')]);
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    expect(publisher.published.map(({ message, at }) => ({ message, at }))).toEqual([{ message: 'hello', at: DUE + 60_000 }]);
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.emitted, version: 2 });
  });

  it('stores the payload for the loader when the new time is beyond the near-path window', async () => {
    const dueAt = DUE + NEAR_PATH_WINDOW_SECONDS * 1000 + 60_000;
    const { deps, publisher, store, delayQueue } = moved(dueAt);
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published).toEqual([]);
    expect(delayQueue.sent).toEqual([]);
    expect(store.records.get('m-1')).toMatchObject({ state: EVENT_STATE.scheduled, version: 2, carriedBy: undefined, queuedBy: undefined });
    // Stored for the loader under the tenant index's stored family.
    expect(store.records.get('m-1')).toMatchObject({ tenantShard: expect.stringMatching(/^acme#s\d$/) });
    expect(await store.storedPayload(store.records.get('m-1') as EventRecord)).toBe('hello');
  });

  it('carries an event moved earlier than its copy at once, late: its new copy is sent without delay', async () => {
    const { deps, delayQueue } = moved(DUE - 10_000);
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(delayQueue.sent[0]).toMatchObject({ delaySeconds: 0, event: { version: 2, dueAt: DUE - 10_000 } });
  });

  it('carries again when a reschedule lands between its read and its write: the copy sent first is stale', async () => {
    const { deps, store, delayQueue } = moved(DUE + 60_000);
    const carry = store.carry.bind(store);
    let rescheduled = false;
    store.carry = async (record, from, onward, now) => {
      if (!rescheduled) {
        rescheduled = true;
        const current = store.records.get('m-1') as EventRecord;
        store.put({ ...current, version: 3, dueAt: DUE + 120_000 });
      }
      return carry(record, from, onward, now);
    };
    expect((await emitBatch(deps, [sqsRecord(delayed(event()))])).batchItemFailures).toEqual([]);
    expect(delayQueue.sent.map(({ event }) => event.version)).toEqual([2, 3]);
    expect(store.records.get('m-1')).toMatchObject({ version: 3, queuedBy: delayQueue.sent[1]?.queuedBy, carriedBy: undefined });
  });

  it('leaves the copy to be retried when the new copy cannot be sent, and drops it once another delivery carried it', async () => {
    const { deps, store, delayQueue, metrics } = moved(DUE + 60_000);
    delayQueue.refuseSends = 1;
    const failed = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(store.records.get('m-1')?.carriedBy).toBe('copy-1');

    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 3)]);
    expect(delayQueue.sent).toHaveLength(1);
    expect(metrics.counts.StaleMessagesDropped).toBe(1);
  });

  it('drops its copy when another delivery carried the event on between its read and its write', async () => {
    const { deps, store, delayQueue, metrics, publisher } = moved(DUE + 60_000);
    const carry = store.carry.bind(store);
    store.carry = async (record, from, onward, now) => {
      // Another delivery of the same copy carried it first, to a copy of its own.
      store.put({ ...(store.records.get('m-1') as EventRecord), queuedBy: 'copy-other', carriedBy: undefined });
      return carry(record, from, onward, now);
    };
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(delayQueue.sent).toHaveLength(1);
    expect(store.records.get('m-1')).toMatchObject({ queuedBy: 'copy-other', carriedBy: undefined });
    expect(metrics.counts.StaleMessagesDropped).toBe(1);
    expect(metrics.counts.EventsCarried).toBeUndefined();
    expect(publisher.published).toEqual([]);
  });

  it('leaves its copy to a later delivery after three attempts when reschedules keep landing between its read and its write', async () => {
    const { deps, store, delayQueue } = moved(DUE + 60_000);
    const carry = store.carry.bind(store);
    store.carry = async (record, from, onward, now) => {
      const current = store.records.get('m-1') as EventRecord;
      store.put({ ...current, version: current.version + 1 });
      return carry(record, from, onward, now);
    };
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(delayQueue.sent.map(({ event }) => event.version)).toEqual([2, 3, 4]);
    expect(store.records.get('m-1')).toMatchObject({ version: 5, carriedBy: 'copy-1' });
  });

  it('drops the copy of a cancelled event: nothing to carry', async () => {
    const { deps, store, delayQueue, publisher } = moved(DUE + 60_000);
    store.put({ ...(store.records.get('m-1') as EventRecord), state: EVENT_STATE.cancelled });
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(delayQueue.sent).toEqual([]);
    expect(publisher.published).toEqual([]);
  });
});

describe("holding a paused tenant's events", () => {
  const pause = { pausedAt: DUE - 60_000, note: 'maintenance', pausedBy: 'input-1', owner: 'tenant' } as const;

  it('holds an event that comes due while its tenant is paused: not published, its payload stored, no expiry', async () => {
    const { deps, publisher, store, metrics } = setup();
    store.pauses.set('acme', pause);
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toEqual([]);
    const held = store.records.get('m-1');
    expect(held).toMatchObject({
      state: EVENT_STATE.held,
      payload: 'hello',
      payloadKept: 'record',
      queuedBy: undefined,
      heldAt: DUE - 700,
    });
    expect(held?.tenantShard).toMatch(/^acme#h\d$/);
    expect(held?.expiresAt).toBeNaN();
    expect(metrics.counts.EventsHeld).toBe(1);
    // Held is open: its place in the quota is kept.
    expect(store.openEvents.get('acme') ?? 0).toBe(0);

    // Its copy delivered again finds it held, and is dropped.
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    expect(publisher.published).toEqual([]);
  });

  it('publishes as usual when the pause ended between its read and the hold, and reads a pause at most once a second', async () => {
    const { deps, publisher, store, clock } = setup();
    store.pauses.set('acme', pause);
    const paused = vi.spyOn(deps.pausedTenants, 'of');
    const read = vi.spyOn(store, 'read');
    // Read as paused, then resumed before the hold's write.
    await deps.pausedTenants.of(['acme']);
    store.pauses.delete('acme');
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published.map(({ message }) => message)).toEqual(['hello']);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.emitted);
    expect(paused).toHaveBeenCalledTimes(2);
    expect(read).toHaveBeenCalledTimes(1);

    // A second later the pause is read anew: a tenant paused since has its events held.
    store.pauses.set('acme', pause);
    const dueAt = clock.now() + 2000;
    store.put(queued(event({ id: 'm-2', dueAt })));
    clock.set(clock.now() + 1000);
    await emitBatch(deps, [sqsRecord(delayed(event({ id: 'm-2', dueAt })), 'sqs-2')]);
    expect(store.records.get('m-2')?.state).toBe(EVENT_STATE.held);
  });

  it('publishes, without holding, a copy from before copies carried tokens while its tenant is paused; one it has no record of waits for the resume, its delivery retried', async () => {
    const { deps, publisher, store } = setup();
    store.pauses.set('acme', pause);
    store.records.delete('m-1');
    store.put({ ...queued(event({ id: 'm-2' }), { queuedBy: undefined, payloadKept: 'record' }), payload: 'hello' });
    const response = await emitBatch(deps, [sqsRecord(delayed(event()), 'a'), sqsRecord(delayed(event({ id: 'm-2' }), null), 'b')]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'a' }]);
    expect(publisher.published.map(({ attributes }) => attributes[EMISSION_ATTRIBUTE.eventId])).toEqual(['m-2']);
    expect(store.records.get('m-2')?.state).toBe(EVENT_STATE.emitted);
  });

  it('leaves the copy to a later delivery when its event changed between the read and the hold', async () => {
    const { deps, publisher, store, metrics } = setup();
    store.pauses.set('acme', pause);
    const hold = store.hold.bind(store);
    store.hold = async (record, from, held) => {
      store.put({ ...(store.records.get('m-1') as EventRecord), state: EVENT_STATE.cancelled });
      return hold(record, from, held);
    };
    const response = await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(metrics.counts.EventsHeld).toBeUndefined();
    expect(publisher.published).toEqual([]);
    expect(store.records.get('m-1')?.state).toBe(EVENT_STATE.cancelled);
  });

  it('publishes the events of tenants that are not paused', async () => {
    const { deps, publisher, store } = setup();
    store.pauses.set('another', pause);
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(publisher.published).toHaveLength(1);
  });
});

describe('the publish window', () => {
  /** Whether a take is granted before the pending callbacks run out, or still waits. */
  const takenAtOnce = async (window: PublishWindow): Promise<boolean> =>
    Promise.race([window.take().then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20))]);

  it('gives a place back to the window when no publish waits, so that as many publishes may go again', async () => {
    const window = new PublishWindow(2);
    expect(await takenAtOnce(window)).toBe(true);
    expect(await takenAtOnce(window)).toBe(true);
    expect(await takenAtOnce(window)).toBe(false);
    // The third take waits; the first place given back is handed to it, the second to the window.
    window.giveBack();
    window.giveBack();
    expect(await takenAtOnce(window)).toBe(true);
    expect(await takenAtOnce(window)).toBe(false);
  });
});

describe('the pause cache', () => {
  it('reads each tenant’s pause once for a batch, at most once a second, and again after', async () => {
    const clock = new FakeClock(DUE);
    const reads: string[][] = [];
    const cache = new PausedTenants(
      {
        paused: async (tenants: readonly string[]) => {
          reads.push([...tenants]);
          return new Map();
        },
      },
      clock,
    );
    await cache.of(['acme', 'acme']);
    await cache.of(['acme']);
    clock.set(DUE + 999);
    await cache.of(['acme']);
    expect(reads).toEqual([['acme']]);
    clock.set(DUE + 1000);
    await cache.of(['acme', 'globex']);
    expect(reads).toEqual([['acme'], ['acme', 'globex']]);
  });

  it('reads a pause again at once after a failed read, and a failed read does not undo a newer one', async () => {
    const clock = new FakeClock(DUE);
    const pause = { pausedAt: DUE - 60_000, note: 'maintenance', pausedBy: 'input-1', owner: 'tenant' } as const;
    const answers: { resolve: (found: ReadonlyMap<string, typeof pause>) => void; reject: (error: Error) => void }[] = [];
    const cache = new PausedTenants({ paused: () => new Promise((resolve, reject) => answers.push({ resolve, reject })) }, clock);
    const first = cache.of(['acme']);
    answers[0]?.reject(new TransientError('DynamoDB down'));
    await expect(first).rejects.toThrow('DynamoDB down');
    // Within the same second: read again, not the failure kept.
    const second = cache.of(['acme']);
    expect(answers).toHaveLength(2);
    answers[1]?.resolve(new Map());
    expect(await second).toEqual(new Map());

    // A slow read outlived by a newer one, and failing after it.
    clock.set(DUE + 1000);
    const slow = cache.of(['acme']);
    clock.set(DUE + 2000);
    const newer = cache.of(['acme']);
    answers[3]?.resolve(new Map([['acme', pause]]));
    expect(await newer).toEqual(new Map([['acme', pause]]));
    answers[2]?.reject(new TransientError('DynamoDB down'));
    await expect(slow).rejects.toThrow('DynamoDB down');
    expect(await cache.of(['acme'])).toEqual(new Map([['acme', pause]]));
    expect(answers).toHaveLength(4);
  });
});

/** The emitter as its function runs it, keeping the last error of each record it fails for the dead-letter tools. */
function keepingLastErrors(context: ReturnType<typeof setup>) {
  const lastErrors = new MemoryLastErrors();
  const deps = { ...context.deps, failureLog: { lastErrors, fn: 'emitter', clock: context.clock } };
  /** The error a record left, as `scripts/admin dead-letters` shows it beside the message. */
  const lastError = (messageId = 'sqs-1') => lastErrors.errors.get(messageId)?.error;
  return { ...context, deps, lastError };
}

describe('why a copy is left to a later delivery, as the dead-letter tools show it', () => {
  const pause = { pausedAt: DUE - 60_000, note: 'maintenance', pausedBy: 'input-1', owner: 'tenant' } as const;

  it('a copy with no record whose tenant is paused', async () => {
    const { deps, store, lastError } = keepingLastErrors(setup());
    store.pauses.set('acme', pause);
    store.records.delete('m-1');
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: 'no record of m-1, and its tenant is paused' });
  });

  it('an event that changed while it was being held', async () => {
    const { deps, store, lastError } = keepingLastErrors(setup());
    store.pauses.set('acme', pause);
    const hold = store.hold.bind(store);
    store.hold = async (record, from, held) => {
      store.put({ ...(store.records.get('m-1') as EventRecord), state: EVENT_STATE.cancelled });
      return hold(record, from, held);
    };
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: 'm-1 changed while it was being held; deciding again later' });
  });

  it('an event rescheduled again at each of three carries', async () => {
    const { deps, store, lastError } = keepingLastErrors(setup());
    store.put(queued(event(), { version: 2, dueAt: DUE + 60_000, carriedBy: 'copy-1' }));
    const carry = store.carry.bind(store);
    store.carry = async (record, from, onward, now) => {
      const current = store.records.get('m-1') as EventRecord;
      store.put({ ...current, version: current.version + 1 });
      return carry(record, from, onward, now);
    };
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: 'm-1 kept being changed while its copy was carried on; retrying' });
  });

  it('a new copy the delay queue refused, with the queue’s reason', async () => {
    const { deps, store, delayQueue, lastError } = keepingLastErrors(setup());
    store.put(queued(event(), { version: 2, dueAt: DUE + 60_000, carriedBy: 'copy-1' }));
    delayQueue.refuseSends = 1;
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: 'carrying m-1 on to the delay queue failed: refused by the test' });
  });

  it('a publish that failed with an error of no known kind: named with the event, the original kept as its cause', async () => {
    const hangUp = new Error('socket hang up');
    const { deps, logger, lastError } = keepingLastErrors(setup(() => hangUp));
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: 'publishing m-1 failed: Error: socket hang up' });
    expect(logger.at('error').map(({ fields }) => (fields as { err: Error }).err.cause)).toEqual([hangUp]);
  });

  it('handed-over ends the store could not yet say are recorded, counted', async () => {
    const { deps, store, lastError } = keepingLastErrors(setup());
    const ends = [{ event: event(), end: { state: 'emitted' as const, at: DUE }, expiresAt: DUE / 1000 + 3600, endedBy: 'delivery-1' }];
    store.endEmissions = async (unsettled) => ({ recorded: [], alreadyEnded: [], unknown: [...unsettled], applied: [] });
    await emitBatch(deps, [sqsRecord(encodeDelayQueueMessage({ kind: 'ends', ends }))]);
    expect(lastError()).toEqual({ name: 'TransientError', message: '1 handed-over ends could not be recorded yet' });
  });
});

describe('the log line naming the event of each copy dropped, held, carried or emitted', () => {
  it('a redelivery of an event already emitted: suppressed', async () => {
    const { deps, logger } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1')]);
    await emitBatch(deps, [sqsRecord(delayed(event()), 'sqs-1', 2)]);
    expect(logger.at('info')).toEqual([{ level: 'info', fields: { eventId: 'm-1' }, message: 'already emitted; duplicate suppressed' }]);
  });

  it('a copy of a version rescheduled since: dropped, with the version it carried', async () => {
    const { deps, store, logger } = setup();
    store.put(queued(event(), { version: 2, dueAt: DUE + 60_000 }));
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(logger.at('info')).toEqual([
      {
        level: 'info',
        fields: { eventId: 'm-1', version: 1 },
        message: 'cancelled, rescheduled or sent again since this copy was queued; dropped',
      },
    ]);
  });

  it('an event held while its tenant is paused, with its tenant and due time', async () => {
    const { deps, store, logger } = setup();
    store.pauses.set('acme', { pausedAt: DUE - 60_000, note: 'maintenance', pausedBy: 'input-1', owner: 'tenant' });
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(logger.at('info')).toEqual([
      {
        level: 'info',
        fields: { eventId: 'm-1', tenant: 'acme', dueAt: DUE },
        message: 'due while its tenant is paused: held until it resumes',
      },
    ]);
  });

  it('a rescheduled event carried on, with its version, new due time and where it went: the delay queue or the table', async () => {
    const farDueAt = DUE + NEAR_PATH_WINDOW_SECONDS * 1000 + 60_000;
    for (const [dueAt, to] of [
      [DUE + 60_000, 'queue'],
      [farDueAt, 'table'],
    ] as const) {
      const { deps, store, logger } = setup();
      store.put(queued(event(), { version: 2, dueAt, carriedBy: 'copy-1' }));
      await emitBatch(deps, [sqsRecord(delayed(event()))]);
      expect(logger.at('info')).toEqual([
        { level: 'info', fields: { eventId: 'm-1', version: 2, dueAt, to }, message: 'rescheduled event carried on' },
      ]);
    }
  });

  it('a copy another delivery carried on between the read and the carry: dropped', async () => {
    const { deps, store, logger } = setup();
    store.put(queued(event(), { version: 2, dueAt: DUE + 60_000, carriedBy: 'copy-1' }));
    const carry = store.carry.bind(store);
    store.carry = async (record, from, onward, now) => {
      store.put({ ...(store.records.get('m-1') as EventRecord), queuedBy: 'copy-other', carriedBy: undefined });
      return carry(record, from, onward, now);
    };
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(logger.at('info')).toEqual([
      {
        level: 'info',
        fields: { eventId: 'm-1' },
        message: 'carried on by another delivery, or cancelled, since this copy was read; dropped',
      },
    ]);
  });

  it('an emission, with its lateness, at debug level', async () => {
    const { deps, logger } = setup();
    await emitBatch(deps, [sqsRecord(delayed(event()))]);
    expect(logger.at('debug')).toEqual([{ level: 'debug', fields: { eventId: 'm-1', latenessMs: 0 }, message: 'emitted' }]);
  });

  it('a retry the delay queue would not put off: warned of by message id, the record failed all the same', async () => {
    const { deps, store, delayQueue, logger } = setup();
    store.records.delete('m-1');
    store.pauses.set('acme', { pausedAt: DUE - 60_000, note: 'maintenance', pausedBy: 'input-1', owner: 'tenant' });
    const refused = new TransientError('SQS down');
    delayQueue.retryLater = async () => {
      throw refused;
    };
    expect((await emitBatch(deps, [sqsRecord(delayed(event()))])).batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(logger.at('warn')).toEqual([
      { level: 'warn', fields: { err: refused, messageId: 'sqs-1' }, message: 'could not delay the retry' },
    ]);
  });
});
