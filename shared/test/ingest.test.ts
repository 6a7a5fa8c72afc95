import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ingestBatch, planIngest, type IngestDeps } from '../src/app/ingest.js';
import { snsMessageBytes } from '../src/domain/event.js';
import { noticeAttributes, type FailureNotice } from '../src/domain/failure.js';
import { SNS_MAX_MESSAGE_BYTES } from '../src/domain/limits.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { REASON } from '../src/domain/reasons.js';
import { inputMessageId, REGION, registry, SCHEDULER_TOPICS, scheduleRequest, sqsRecord, topicArn } from './factories.js';
import { FakeClock, MemoryDelayQueue, RecordingMetrics } from './fakes.js';
import { MemoryEventStore } from './memory-event-store.js';

const NOW = 1_900_000_000_000;
const CONFIG = {
  region: REGION,
  nearPathWindowSeconds: 600,
  emitterLeadMs: 300,
  bucketSeconds: 60,
  shardCount: 8,
  retentionSeconds: 3600,
  changeCutoffSeconds: 5,
  ...SCHEDULER_TOPICS,
  maxScheduleAheadSeconds: 365 * 24 * 3600,
};
const ACME_TOPIC = 'arn:aws:sns:us-east-1:000000000000:scheduler-tenant-acme';
const acmeTarget = topicArn('out', 'eu-west-1', '111111111111');

/** What SNS puts on the ingest queue for one publish to a tenant's input topic. */
function published(message: unknown, messageId = inputMessageId(), topic = ACME_TOPIC, publishedAt = NOW) {
  const body = JSON.stringify({
    Type: 'Notification',
    MessageId: messageId,
    TopicArn: topic,
    Timestamp: new Date(publishedAt).toISOString(),
    Message: typeof message === 'string' ? message : JSON.stringify(message),
  });
  return sqsRecord(body, `sqs-${messageId}`);
}

function setup() {
  const clock = new FakeClock(NOW);
  const store = new MemoryEventStore(clock);
  const delayQueue = new MemoryDelayQueue(clock);
  let tokens = 0;
  const deps = {
    config: CONFIG,
    tenants: registry(),
    store,
    delayQueue,
    clock,
    logger: pino({ level: 'silent' }),
    metrics: new RecordingMetrics(),
    newToken: () => `token-${++tokens}`,
  } satisfies IngestDeps;
  return { store, delayQueue, deps, clock };
}

const soon = new Date(NOW + 30_000).toISOString();
const later = new Date(NOW + 3_600_000).toISOString();

describe('the ingest plan', () => {
  it('turns each message of a batch into its intent, without touching anything', () => {
    const { deps } = setup();
    const plan = planIngest({ ...deps, now: NOW }, [
      published(scheduleRequest({ date: soon, target: acmeTarget })),
      published(scheduleRequest({ date: later, target: acmeTarget })),
      published('not json'),
      published({ action: 'cancel', id: 'x' }),
      published(scheduleRequest(), inputMessageId(), 'arn:aws:sns:us-east-1:000000000000:somebody-else'),
    ]);
    expect(plan.map(({ intent }) => intent.kind)).toEqual(['create', 'create', 'refuse', 'cancel', 'unowned']);
    const [near, far] = plan.map(({ intent }) => (intent.kind === 'create' ? intent.entry : undefined));
    expect(near).toMatchObject({ placement: { state: EVENT_STATE.queued }, queuedBy: 'token-1' });
    expect(far).toMatchObject({ placement: { state: EVENT_STATE.scheduled }, queuedBy: undefined });
  });
});

describe('ingest', () => {
  it('records a near event without its payload and sends it, with its token, to the delay queue', async () => {
    const { deps, store, delayQueue } = setup();
    const response = await ingestBatch(deps, [
      published(scheduleRequest({ date: soon, target: acmeTarget, payload: 'x'.repeat(100_000) })),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    const [record] = store.records.values();
    expect(record).toMatchObject({ state: EVENT_STATE.queued, payloadKept: 'queue', queuedBy: 'token-1' });
    expect(record?.payload).toBeUndefined();
    expect(delayQueue.sent).toHaveLength(1);
    expect(delayQueue.sent[0]).toMatchObject({ queuedBy: 'token-1', delaySeconds: 29 });
    expect(delayQueue.sent[0]?.event.payload).toHaveLength(100_000);
  });

  it('stores a far event with its payload and sends nothing', async () => {
    const { deps, store, delayQueue } = setup();
    await ingestBatch(deps, [published(scheduleRequest({ date: later, target: acmeTarget }))]);
    const [record] = store.records.values();
    expect(record?.state).toBe(EVENT_STATE.scheduled);
    expect(store.payloads.size).toBe(1);
    expect(delayQueue.sent).toEqual([]);
  });

  it("hands a batch's new events to the store in one call per tenant", async () => {
    const { deps, store } = setup();
    await ingestBatch(
      deps,
      Array.from({ length: 10 }, () => published(scheduleRequest({ date: soon, target: acmeTarget }))),
    );
    expect(store.calls.createMany).toBe(1);
    expect(store.records.size).toBe(10);
  });

  it('suppresses a second ingest of the same input once its event has been emitted', async () => {
    const { deps, store, delayQueue } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    const [record] = store.records.values();
    store.put({ ...(record as NonNullable<typeof record>), state: EVENT_STATE.emitted });
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    expect(delayQueue.sent).toHaveLength(1);
  });

  it('sends a redelivered input again with a new token while its event waits, so the earlier copy is dropped', async () => {
    const { deps, store, delayQueue } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    const [first, again] = delayQueue.sent.map(({ queuedBy }) => queuedBy);
    expect(delayQueue.sent).toHaveLength(2);
    expect(again).not.toBe(first);
    expect([...store.records.values()][0]?.queuedBy).toBe(again);
  });

  describe('an idempotency key: the first request wins', () => {
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    const first = scheduleRequest({ id: 'invoice-42', date: later, target: acmeTarget, payload: 'first', failure_topic: failureTopic });

    it('refuses a later request with the same id and other content as IDEMPOTENCY_KEY_REUSED, changing nothing', async () => {
      const { deps, store, delayQueue } = setup();
      await ingestBatch(deps, [published(first)]);
      const [created] = store.records.values();
      const response = await ingestBatch(deps, [published({ ...first, payload: 'second' })]);
      expect(response.batchItemFailures).toEqual([]);
      expect([...store.records.values()]).toEqual([created]);
      expect([...store.payloads.values()]).toEqual(['first']);
      expect(delayQueue.notices).toHaveLength(1);
      expect(delayQueue.notices[0]).toMatchObject({
        failureTopic,
        notice: { reason: REASON.IDEMPOTENCY_KEY_REUSED, eventId: created?.id, details: { field: 'id', eventId: created?.id } },
      });
    });

    it('suppresses a later request with the same id and the same content, as a duplicate', async () => {
      const { deps, store, delayQueue } = setup();
      await ingestBatch(deps, [published(first)]);
      await ingestBatch(deps, [published(first)]);
      expect(store.records.size).toBe(1);
      expect(delayQueue.notices).toEqual([]);
    });

    it('takes a record written before request digests were kept as made by the same request', async () => {
      const { deps, store, delayQueue } = setup();
      await ingestBatch(deps, [published(first)]);
      const [created] = store.records.values();
      store.put({ ...(created as NonNullable<typeof created>), requestHash: undefined });
      await ingestBatch(deps, [published({ ...first, payload: 'second' })]);
      expect(delayQueue.notices).toEqual([]);
      expect([...store.payloads.values()]).toEqual(['first']);
    });
  });

  it('refuses a bad message on its failure topic, through the emitter, and goes on with the batch', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    const response = await ingestBatch(deps, [
      published(scheduleRequest({ date: 'next tuesday', target: acmeTarget, failure_topic: failureTopic })),
      published(scheduleRequest({ date: soon, target: acmeTarget })),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.INVALID_DATE]);
    expect(store.records.size).toBe(1);
  });

  it('refuses a lone surrogate under a key as long as SNS allows with a notice that fits, and does not fail the record', async () => {
    const { deps, delayQueue } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    const key = 'k'.repeat(261_500);
    const text = JSON.stringify({
      ...scheduleRequest({ date: soon, target: acmeTarget, failure_topic: failureTopic }),
      [key]: 'bad \ud800',
    });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
    const response = await ingestBatch(deps, [published(text)]);
    expect(response.batchItemFailures).toEqual([]);
    const [sent] = delayQueue.notices;
    expect(sent?.notice).toMatchObject({ reason: REASON.INVALID_UNICODE, details: { field: `${'k'.repeat(1024)}...` } });
    expect(snsMessageBytes(JSON.stringify(sent?.notice), noticeAttributes(sent?.notice as FailureNotice))).toBeLessThanOrEqual(
      SNS_MAX_MESSAGE_BYTES,
    );
  });

  it("refuses a target in another partition than its input topic's, though named with the scheduler's region", async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [
      published(scheduleRequest({ date: soon, target: 'arn:aws-us-gov:sns:eu-west-1:111111111111:out', failure_topic: failureTopic })),
    ]);
    expect(store.records.size).toBe(0);
    expect(delayQueue.notices).toMatchObject([
      { failureTopic, notice: { reason: REASON.TARGET_IN_OTHER_REGION, details: { partition: 'aws-us-gov', schedulerPartition: 'aws' } } },
    ]);
  });

  describe("the tenant's dead-letter topic", () => {
    const deadLetters = topicArn('dead-letters', REGION, '111111111111');
    const setupWithDeadLetters = () => {
      const context = setup();
      const deps = {
        ...context.deps,
        tenants: registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], deadLetterTopic: deadLetters }] }),
      };
      return { ...context, deps };
    };

    it.each([
      ['not JSON', 'not json', REASON.INVALID_JSON],
      ['not an object', '[1]', REASON.NOT_AN_OBJECT],
      ['naming no failure topic', scheduleRequest({ date: 'next tuesday', target: acmeTarget }), REASON.INVALID_DATE],
      [
        'naming a failure topic it may not use',
        scheduleRequest({ target: acmeTarget, failure_topic: topicArn('f', REGION, '999999999999') }),
        REASON.FAILURE_TOPIC_NOT_ALLOWED,
      ],
      [
        'naming a failure topic in another region',
        scheduleRequest({ target: acmeTarget, failure_topic: topicArn('f', 'us-east-1', '111111111111') }),
        REASON.FAILURE_TOPIC_IN_OTHER_REGION,
      ],
    ])('receives the notice of a request %s', async (_case, body, reason) => {
      const { deps, delayQueue } = setupWithDeadLetters();
      await ingestBatch(deps, [published(body)]);
      expect(delayQueue.notices).toEqual([
        {
          noticeId: expect.stringMatching(/^n-/),
          tenant: 'acme',
          deadLetterTopic: deadLetters,
          failureTopic: undefined,
          notice: expect.objectContaining({ reason }),
        },
      ]);
    });

    it("goes with a notice for the request's own failure topic, for the emitter to use if that refuses it", async () => {
      const { deps, delayQueue } = setupWithDeadLetters();
      const failureTopic = topicArn('failures', REGION, '111111111111');
      await ingestBatch(deps, [published(scheduleRequest({ date: 'next tuesday', target: acmeTarget, failure_topic: failureTopic }))]);
      expect(delayQueue.notices).toMatchObject([{ failureTopic, deadLetterTopic: deadLetters }]);
    });

    it('leaves a refusal in the logs only when the tenant has none and the request named no usable failure topic', async () => {
      const { deps, delayQueue } = setup();
      await ingestBatch(deps, [published('not json'), published(scheduleRequest({ date: 'next tuesday', target: acmeTarget }))]);
      expect(delayQueue.notices).toEqual([]);
    });

    it('never receives a message that came through no tenant’s topic', async () => {
      const { deps, delayQueue } = setupWithDeadLetters();
      await ingestBatch(deps, [published('not json', inputMessageId(), 'arn:aws:sns:us-east-1:000000000000:somebody-else')]);
      expect(delayQueue.notices).toEqual([]);
    });
  });

  it('cancels an event due after the cutoff, and refuses one due within it as EVENT_EMITTING', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [
      published(scheduleRequest({ id: 'far-enough', date: new Date(NOW + 5_001).toISOString(), target: acmeTarget })),
      published(scheduleRequest({ id: 'too-close', date: new Date(NOW + 5_000).toISOString(), target: acmeTarget })),
    ]);
    await ingestBatch(deps, [
      published({ action: 'cancel', id: 'far-enough', failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'too-close', failure_topic: failureTopic }),
    ]);
    expect([...store.records.values()].map(({ state }) => state).sort()).toEqual([EVENT_STATE.cancelled, EVENT_STATE.queued]);
    expect(delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.EVENT_EMITTING]);
  });

  it('checks the cutoff when the change is written, not when its batch started', async () => {
    const { deps, delayQueue, store, clock } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [
      published(scheduleRequest({ id: 'due-soon', date: new Date(NOW + 6_000).toISOString(), target: acmeTarget })),
    ]);
    // The write goes out two seconds after the batch started (a slow or retried request): within the cutoff by then.
    const cancel = store.cancel.bind(store);
    store.cancel = (...args) => {
      clock.set(NOW + 2_000);
      return cancel(...args);
    };
    await ingestBatch(deps, [published({ action: 'cancel', id: 'due-soon', failure_topic: failureTopic })]);
    expect([...store.records.values()][0]?.state).toBe(EVENT_STATE.queued);
    expect(delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.EVENT_EMITTING]);
  });

  it('reschedules a stored event, and refuses to reschedule one whose payload only the delay queue holds', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [
      published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget })),
      published(scheduleRequest({ id: 'queued', date: soon, target: acmeTarget })),
    ]);
    await ingestBatch(deps, [
      published({ action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic }),
      published({ action: 'reschedule', id: 'queued', date: later, failure_topic: failureTopic }),
    ]);
    expect(delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.EVENT_QUEUED]);
    const moved = delayQueue.sent.at(-1);
    expect(moved?.event).toMatchObject({ version: 2, dueAt: NOW + 30_000, payload: '{"reminder":"stand-up"}' });
    expect([...store.records.values()].find((record) => record.clientId === 'stored')).toMatchObject({
      state: EVENT_STATE.queued,
      version: 2,
      queuedBy: moved?.queuedBy,
    });
  });

  it('applies a redelivered reschedule once, and never lets an older reschedule override a newer one', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    const first = inputMessageId();
    const second = inputMessageId();
    const toFirst = { action: 'reschedule', id: 'stored', date: new Date(NOW + 7_200_000).toISOString(), failure_topic: failureTopic };
    const toSecond = { ...toFirst, date: new Date(NOW + 10_800_000).toISOString() };
    await ingestBatch(deps, [published(toFirst, first, ACME_TOPIC, NOW - 2_000)]);
    await ingestBatch(deps, [published(toSecond, second, ACME_TOPIC, NOW - 1_000)]);
    // Both delivered again, the older last: nothing changes, nothing is refused.
    await ingestBatch(deps, [published(toSecond, second, ACME_TOPIC, NOW - 1_000)]);
    await ingestBatch(deps, [published(toFirst, first, ACME_TOPIC, NOW - 2_000)]);
    const record = [...store.records.values()][0];
    expect(record).toMatchObject({ version: 3, dueAt: NOW + 10_800_000, lastChangeBy: second });
    expect(delayQueue.notices).toEqual([]);
  });

  describe('a reschedule delivered again after its send to the delay queue failed', () => {
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    const toSoon = { action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic };

    async function rescheduledWithoutSend() {
      const context = setup();
      const { deps, delayQueue } = context;
      await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
      const reschedule = published(toSoon);
      delayQueue.refuseSends = 1;
      expect((await ingestBatch(deps, [reschedule])).batchItemFailures).toEqual([{ itemIdentifier: reschedule.messageId }]);
      return { ...context, reschedule };
    }

    it('finds its change applied and sends the event again, with a new token', async () => {
      const { deps, store, delayQueue, reschedule } = await rescheduledWithoutSend();
      const [before] = store.records.values();
      expect((await ingestBatch(deps, [reschedule])).batchItemFailures).toEqual([]);
      expect(delayQueue.sent).toHaveLength(1);
      const [sent] = delayQueue.sent;
      expect(sent?.event).toMatchObject({ version: 2, dueAt: NOW + 30_000, payload: '{"reminder":"stand-up"}' });
      expect(sent?.queuedBy).not.toBe(before?.queuedBy);
      expect([...store.records.values()][0]).toMatchObject({ version: 2, queuedBy: sent?.queuedBy });
      expect(delayQueue.notices).toEqual([]);
    });

    it('sends nothing once another reschedule has moved the event on', async () => {
      const { deps, delayQueue, reschedule } = await rescheduledWithoutSend();
      await ingestBatch(deps, [published({ ...toSoon, date: later }, inputMessageId(), ACME_TOPIC, NOW + 1)]);
      await ingestBatch(deps, [reschedule]);
      expect(delayQueue.sent).toEqual([]);
      expect(delayQueue.notices).toEqual([]);
    });
  });

  it('finds a redelivered cancel already done, without refusing it', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    const cancel = inputMessageId();
    await ingestBatch(deps, [published({ action: 'cancel', id: 'stored', failure_topic: failureTopic }, cancel)]);
    await ingestBatch(deps, [published({ action: 'cancel', id: 'stored', failure_topic: failureTopic }, cancel)]);
    expect([...store.records.values()][0]?.state).toBe(EVENT_STATE.cancelled);
    expect(store.openEvents.get('acme')).toBe(0);
    expect(delayQueue.notices).toEqual([]);
  });
});
