import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../src/app/ingest.js';
import { planIngest, unwrapBatch, unwrapInput } from '../src/app/ingest-plan.js';
import { placementFor } from '../src/domain/placement.js';
import { shardOf } from '../src/domain/sharding.js';
import { snsMessageBytes } from '../src/domain/event.js';
import { noticeAttributes, type FailureNotice } from '../src/domain/failure.js';
import { SNS_MAX_MESSAGE_BYTES } from '../src/domain/limits.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { REASON } from '../src/domain/reasons.js';
import { REFUSALS_KEPT } from '../src/domain/refusals.js';
import { noticeId } from '../src/domain/table-keys.js';
import { inputMessageId, REGION, registry, scheduleRequest, sqsRecord, topicArn } from './factories.js';
import { ACME_TOPIC, acmeTarget, CONFIG, later, NOW, published, setup, soon } from './ingest-kit.js';
import { MemoryTenantPauses } from './memory-event-store.js';

describe('the ingest plan', () => {
  it('turns each message of a batch into its intent, without touching anything', async () => {
    const { deps } = setup();
    const records = [
      published(scheduleRequest({ date: soon, target: acmeTarget })),
      published(scheduleRequest({ date: later, target: acmeTarget })),
      published('not json'),
      published({ action: 'cancel', id: 'x' }),
      published(scheduleRequest(), inputMessageId(), 'arn:aws:sns:us-east-1:000000000000:somebody-else'),
    ];
    const plan = planIngest({ ...deps, tenants: await deps.tenants.lookup(), now: NOW }, unwrapBatch(records));
    expect(plan.map(({ intent }) => intent.kind)).toEqual(['create', 'create', 'refuse', 'cancel', 'unowned']);
    const [near, far] = plan.map(({ intent }) => (intent.kind === 'create' ? intent.entry : undefined));
    expect(near).toMatchObject({ placement: { state: EVENT_STATE.queued }, queuedBy: 'token-1' });
    expect(far).toMatchObject({ placement: { state: EVENT_STATE.scheduled }, queuedBy: undefined });
  });

  it("takes SNS's Timestamp as when the message was published, else when SQS received it", () => {
    const envelope = { Type: 'Notification', MessageId: 'm-1', TopicArn: ACME_TOPIC, Message: '{}' };
    const received = (body: unknown) => ({
      ...sqsRecord(JSON.stringify(body)),
      attributes: { ...sqsRecord('').attributes, SentTimestamp: String(NOW + 500) },
    });
    expect(unwrapInput(received({ ...envelope, Timestamp: new Date(NOW).toISOString() })).publishedAt).toBe(NOW);
    expect(unwrapInput(received(envelope)).publishedAt).toBe(NOW + 500);
    expect(unwrapInput(received({ ...envelope, Timestamp: 2030 })).publishedAt).toBe(NOW + 500);
    expect(unwrapInput(received({ ...envelope, Timestamp: 'not a date' })).publishedAt).toBe(NOW + 500);
  });

  it('sends to the delay queue only the events due before the near-path window ends', () => {
    const end = NOW + CONFIG.nearPathWindowSeconds * 1000;
    expect(placementFor(CONFIG, 'e', end - 1, NOW).state).toBe(EVENT_STATE.queued);
    expect(placementFor(CONFIG, 'e', end, NOW).state).toBe(EVENT_STATE.scheduled);
  });
});

describe('ingest', () => {
  it('records a near event without its payload and sends it, with its token, to the delay queue', async () => {
    const { deps, store, delayQueue, metrics } = setup();
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
    expect(metrics.counts).toEqual({ EventsIngested: 1, EventsDelayed: 1 });
    expect(metrics.flushes).toBe(1);
  });

  it('stores a far event with its payload and sends nothing', async () => {
    const { deps, store, delayQueue, metrics } = setup();
    await ingestBatch(deps, [published(scheduleRequest({ date: later, target: acmeTarget }))]);
    const [record] = store.records.values();
    expect(record?.state).toBe(EVENT_STATE.scheduled);
    expect(record && (await store.storedPayload(record))).toBe('{"reminder":"stand-up"}');
    expect(delayQueue.sent).toEqual([]);
    expect(metrics.counts).toEqual({ EventsIngested: 1, EventsStored: 1 });
    expect(metrics.flushes).toBe(1);
  });

  it("keeps each event in its tenant's shard of the tenant index, by where its payload went, with its labels", async () => {
    const { deps, store, delayQueue } = setup();
    await ingestBatch(deps, [
      published(scheduleRequest({ date: soon, target: acmeTarget, id: 'near', labels: ['billing'] })),
      published(scheduleRequest({ date: later, target: acmeTarget, id: 'far', labels: ['billing', 'eu'] })),
    ]);
    const [near, far] = [...store.records.values()].sort((a, b) => a.dueAt - b.dueAt);
    expect(near).toMatchObject({ labels: ['billing'], tenantShard: `acme#q${shardOf(near?.id ?? '', CONFIG)}` });
    expect(far).toMatchObject({ labels: ['billing', 'eu'], tenantShard: `acme#s${shardOf(far?.id ?? '', CONFIG)}` });
    expect(delayQueue.sent[0]?.event.labels).toEqual(['billing']);
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

  it('suppresses a second ingest of the same input once its event has been emitted, counting it without a write', async () => {
    const { deps, store, delayQueue, metrics } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    const [record] = store.records.values();
    store.put({ ...(record as NonNullable<typeof record>), state: EVENT_STATE.emitted });
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    expect(delayQueue.sent).toHaveLength(1);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
    expect(store.calls.requeue).toBeUndefined();
  });

  it('sends a redelivered input again with a new token while its event waits, so the earlier copy is dropped', async () => {
    const { deps, store, delayQueue, metrics } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    const [first, again] = delayQueue.sent.map(({ queuedBy }) => queuedBy);
    expect(delayQueue.sent).toHaveLength(2);
    expect(again).not.toBe(first);
    expect(again).toMatch(/^token-\d+$/);
    expect([...store.records.values()][0]?.queuedBy).toBe(again);
    // Sent again, not suppressed.
    expect(metrics.counts).toEqual({ EventsIngested: 1, EventsDelayed: 2 });
  });

  it('suppresses a redelivered input whose event moves on before it can be sent again', async () => {
    const { deps, store, delayQueue, metrics } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    // The emitter publishes it between the redelivery's read and its requeue.
    const requeue = store.requeue.bind(store);
    store.requeue = (eventId, change) => {
      const record = store.records.get(eventId);
      if (record !== undefined) store.put({ ...record, state: EVENT_STATE.emitted });
      return requeue(eventId, change);
    };
    const response = await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    expect(response.batchItemFailures).toEqual([]);
    expect(delayQueue.sent).toHaveLength(1);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it('fails the record, to be retried, when the store cannot say whether it recorded the event', async () => {
    const { deps, store, delayQueue, lastErrors } = setup();
    store.createMany = async (entries) => entries.map(() => ({ outcome: 'unknown' }));
    const record = published(
      scheduleRequest({ date: soon, target: acmeTarget, failure_topic: topicArn('failures', REGION, '111111111111') }),
    );
    const response = await ingestBatch(deps, [record]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(lastErrors.errors.get(record.messageId)?.error).toEqual({
      name: 'TransientError',
      message: expect.stringMatching(/^recording \S+ did not complete; retrying$/),
    });
    expect(delayQueue.sent).toEqual([]);
    expect(delayQueue.notices).toEqual([]);
  });

  it("fails the record of a near-path event the delay queue refused, keeping why as the record's last error", async () => {
    const { deps, delayQueue, lastErrors } = setup();
    delayQueue.refuseSends = 1;
    const record = published(scheduleRequest({ date: soon, target: acmeTarget }));
    expect((await ingestBatch(deps, [record])).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(lastErrors.errors.get(record.messageId)).toMatchObject({
      fn: 'ingest',
      error: {
        name: 'TransientError',
        message: expect.stringMatching(/^event m-\S+ could not be sent to the delay queue \(refused by the test\)$/),
      },
    });
  });

  it("refuses an event beyond the tenant's open-events quota as QUOTA_EXCEEDED, saying which quota and its limit", async () => {
    const { deps, store, delayQueue, metrics } = setup();
    const failureTopic = topicArn('failures', REGION, '111111111111');
    const quotaOfOne = { ...deps, tenants: registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents: 1 }] }) };
    const response = await ingestBatch(quotaOfOne, [
      published(scheduleRequest({ id: 'first', date: later, target: acmeTarget, failure_topic: failureTopic })),
      published(scheduleRequest({ id: 'second', date: later, target: acmeTarget, failure_topic: failureTopic })),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(store.records.size).toBe(1);
    expect(delayQueue.notices).toMatchObject([
      {
        failureTopic,
        notice: {
          reason: REASON.QUOTA_EXCEEDED,
          message: 'tenant "acme" is at its maxOpenEvents quota (1)',
          details: { quota: 'maxOpenEvents', limit: 1 },
        },
      },
    ]);
    expect(metrics.counts).toMatchObject({ EventsIngested: 1, EventsRejected: 1 });
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
      expect(created && (await store.storedPayload(created))).toBe('first');
      expect(delayQueue.notices).toHaveLength(1);
      expect(delayQueue.notices[0]).toMatchObject({
        failureTopic,
        notice: {
          reason: REASON.IDEMPOTENCY_KEY_REUSED,
          message: `event ${created?.id} was scheduled by another request with the same id; this one differs in payload; the first one stands`,
          eventId: created?.id,
          details: { field: 'id', eventId: created?.id, differing: ['payload'] },
        },
      });
    });

    it('says which fields differ, as the client wrote them: labels alone, or a date and a user', async () => {
      const { deps, delayQueue } = setup();
      await ingestBatch(deps, [published({ ...first, labels: ['a', 'b'] })]);
      await ingestBatch(deps, [published({ ...first, labels: ['b', 'a'] })]);
      expect(delayQueue.notices).toEqual([]);
      await ingestBatch(deps, [published({ ...first, labels: ['a'] })]);
      await ingestBatch(deps, [published({ ...first, labels: ['a', 'b'], date: soon, user: 'bob' })]);
      expect(
        delayQueue.notices.map(({ notice }) => [notice.message.replace(/^.*differs in (.*); the first.*$/, '$1'), notice.details]),
      ).toEqual([
        ['labels', expect.objectContaining({ differing: ['labels'] })],
        ['date, user', expect.objectContaining({ differing: ['date', 'user'] })],
      ]);
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
      const [kept] = store.records.values();
      expect(kept && (await store.storedPayload(kept))).toBe('first');
    });
  });

  it('costs a request refused at validation one message to the delay queue, and nothing of the store: what the emitter then spends is its notice', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [published(scheduleRequest({ date: 'next tuesday', target: acmeTarget, failure_topic: failureTopic }))]);
    expect(delayQueue.messages).toHaveLength(1);
    expect(delayQueue.notices).toMatchObject([{ failureTopic, notice: { reason: REASON.INVALID_DATE } }]);
    expect(store.calls).toEqual({});
  });

  describe('the refusal log', () => {
    it("keeps each refusal under its tenant, once the batch's accepted events are sent", async () => {
      const { deps, delayQueue, refusals } = setup();
      const order: string[] = [];
      const send = delayQueue.send.bind(delayQueue);
      delayQueue.send = (items) => {
        order.push('send');
        return send(items);
      };
      const keep = refusals.keep.bind(refusals);
      refusals.keep = (batch, expiresAt) => {
        order.push('keep');
        return keep(batch, expiresAt);
      };
      const refused = published(scheduleRequest({ id: 'order-1', date: 'next tuesday', target: acmeTarget }));
      await ingestBatch(deps, [refused, published(scheduleRequest({ date: soon, target: acmeTarget }))]);
      expect(order).toEqual(['send', 'keep']);
      const { refusals: kept } = await refusals.recent('acme');
      expect(kept).toEqual([
        expect.objectContaining({
          tenant: 'acme',
          at: NOW,
          reason: REASON.INVALID_DATE,
          clientId: 'order-1',
          user: 'alice',
          action: 'schedule',
        }),
      ]);
      expect(refusals.writes.map(({ expiresAt }) => expiresAt)).toEqual([NOW / 1000 + CONFIG.retentionSeconds]);
      expect(await refusals.recent('public')).toEqual({ refusals: [], refused: 0, notKept: 0 });
    });

    it('keeps refusals the store decides (a quota), under the id of the event refused', async () => {
      const { deps, refusals } = setup();
      const quotaOfOne = { ...deps, tenants: registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents: 1 }] }) };
      await ingestBatch(quotaOfOne, [
        published(scheduleRequest({ id: 'first', date: later, target: acmeTarget })),
        published(scheduleRequest({ id: 'second', date: later, target: acmeTarget })),
      ]);
      const { refusals: kept } = await refusals.recent('acme');
      expect(kept.map(({ reason, clientId }) => ({ reason, clientId }))).toEqual([{ reason: REASON.QUOTA_EXCEEDED, clientId: 'second' }]);
    });

    it("writes at most a batch's share of one tenant's flood, counting the rest, in one call", async () => {
      const { deps, refusals } = setup();
      const flood = Array.from({ length: 40 }, () => published('not json'));
      expect((await ingestBatch(deps, flood)).batchItemFailures).toEqual([]);
      expect(refusals.writes).toHaveLength(1);
      expect(refusals.writes[0]?.batch.map(({ tenant, kept, notKept }) => ({ tenant, kept: kept.length, notKept }))).toEqual([
        { tenant: 'acme', kept: REFUSALS_KEPT.perTenantPerBatch, notKept: 40 - REFUSALS_KEPT.perTenantPerBatch },
      ]);
    });

    it('writes nothing to the refusal log for a batch that refused nothing', async () => {
      const { deps, refusals } = setup();
      await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }))]);
      expect(refusals.writes).toEqual([]);
    });

    it('fails no record when the refusal log cannot be written: counted and logged', async () => {
      const { deps, refusals, metrics, logger } = setup();
      refusals.refuseWrites = true;
      const response = await ingestBatch(deps, [published('not json')]);
      expect(response.batchItemFailures).toEqual([]);
      expect(metrics.counts).toMatchObject({ EventsRejected: 1, RefusalsNotKept: 1 });
      expect(logger.lines).toContainEqual({
        level: 'warn',
        fields: { err: expect.objectContaining({ message: 'DynamoDB down' }), refusals: 1 },
        message: 'refusals could not be kept for the refusal log',
      });
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

  describe('a message no tenant takes: in the logs and the rejection counts only', () => {
    const request = JSON.stringify(scheduleRequest({ date: soon, target: acmeTarget }));
    const notification = { Type: 'Notification', MessageId: 'm-1', TopicArn: ACME_TOPIC, Message: request };

    function expectRefusedInLogsOnly(context: ReturnType<typeof setup>, reason: string, inputMessageId: string, topic?: string) {
      const { store, delayQueue, logger, metrics } = context;
      expect(store.records.size).toBe(0);
      expect(delayQueue.notices).toEqual([]);
      expect(logger.lines.filter(({ message }) => message === 'input refused: no tenant takes it')).toEqual([
        {
          level: 'warn',
          fields: expect.objectContaining(topic === undefined ? { reason, inputMessageId } : { reason, inputMessageId, topicArn: topic }),
          message: 'input refused: no tenant takes it',
        },
      ]);
      expect(metrics.counts).toEqual({ EventsRejected: 1, EventsFailed: 1 });
    }

    it.each([
      ['another type of SNS message', { ...notification, Type: 'SubscriptionConfirmation' }],
      ['a message that is not text', { ...notification, Message: JSON.parse(request) }],
      ['no message id', { ...notification, MessageId: undefined }],
      ['no topic', { ...notification, TopicArn: undefined }],
      ['no envelope at all', JSON.parse(request)],
    ])('refuses as UNKNOWN_TENANT a body with %s: only a whole SNS notification names its topic', async (_case, body) => {
      const context = setup();
      const record = sqsRecord(JSON.stringify(body), `sqs-${inputMessageId()}`);
      const response = await ingestBatch(context.deps, [record]);
      expect(response.batchItemFailures).toEqual([]);
      // Without SNS's envelope, the message is known by its SQS id.
      expectRefusedInLogsOnly(context, REASON.UNKNOWN_TENANT, record.messageId);
    });

    it.each([
      ['another account', 'arn:aws:sns:eu-west-1:999999999999:scheduler-tenant-acme'],
      ['another region', 'arn:aws:sns:us-east-1:000000000000:scheduler-tenant-acme'],
      ['another account, the shared topic', 'arn:aws:sns:eu-west-1:999999999999:scheduler-input'],
    ])("refuses as FOREIGN_INPUT_TOPIC an envelope naming a tenant's topic in %s: the name alone makes no tenant", async (_case, topic) => {
      const context = setup();
      const messageId = inputMessageId();
      await ingestBatch(context.deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), messageId, topic)]);
      expectRefusedInLogsOnly(context, REASON.FOREIGN_INPUT_TOPIC, messageId, topic);
    });

    it("refuses as TENANT_DISABLED a message on a disabled tenant's topic", async () => {
      const context = setup();
      const publicTopic = 'arn:aws:sns:eu-west-1:000000000000:scheduler-input';
      const deps = {
        ...context.deps,
        tenants: registry({ public: { enabled: false }, tenants: [{ id: 'acme', accounts: ['111111111111'] }] }),
      };
      const messageId = inputMessageId();
      await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), messageId, publicTopic)]);
      expectRefusedInLogsOnly(context, REASON.TENANT_DISABLED, messageId, publicTopic);
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
    const tooClose = [...store.records.values()].find(({ clientId }) => clientId === 'too-close');
    expect(delayQueue.notices.map(({ notice }) => [notice.reason, notice.message])).toEqual([
      [
        REASON.EVENT_EMITTING,
        `cannot cancel ${tooClose?.id}: it is due at ${new Date(NOW + 5_000).toISOString()}, within the change cutoff (5000 ms before): it will be emitted`,
      ],
    ]);
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

  it('reschedules a stored event, sending it anew; and one whose payload only the delay queue holds, naming the copy to carry on', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [
      published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget })),
      published(scheduleRequest({ id: 'queued', date: soon, target: acmeTarget })),
    ]);
    const firstCopy = delayQueue.sent.at(-1);
    const rescheduleQueued = published({ action: 'reschedule', id: 'queued', date: later, failure_topic: failureTopic });
    const response = await ingestBatch(deps, [
      published({ action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic }),
      rescheduleQueued,
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(delayQueue.notices).toEqual([]);
    expect(delayQueue.sent).toHaveLength(2);
    const moved = delayQueue.sent.at(-1);
    expect(moved?.event).toMatchObject({ version: 2, dueAt: NOW + 30_000, payload: '{"reminder":"stand-up"}' });
    const byClientId = (id: string) => [...store.records.values()].find((record) => record.clientId === id);
    expect(byClientId('stored')).toMatchObject({ state: EVENT_STATE.queued, version: 2, queuedBy: moved?.queuedBy });
    // Nothing to send: its payload is in its first copy, which the emitter carries on.
    expect(byClientId('queued')).toMatchObject({
      state: EVENT_STATE.queued,
      version: 2,
      dueAt: Date.parse(later),
      queuedBy: firstCopy?.queuedBy,
      carriedBy: firstCopy?.queuedBy,
      payloadKept: 'queue',
    });

    // Delivered again, it sends nothing either: the input never placed a copy of this version.
    await ingestBatch(deps, [rescheduleQueued]);
    expect(delayQueue.sent).toHaveLength(2);
    expect(delayQueue.notices).toEqual([]);
  });

  it('applies a redelivered reschedule once, and never lets an older reschedule override a newer one', async () => {
    const { deps, delayQueue, store, metrics, logger } = setup();
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
    const olderAgain = await ingestBatch(deps, [published(toFirst, first, ACME_TOPIC, NOW - 2_000)]);
    const record = [...store.records.values()][0];
    expect(record).toMatchObject({ version: 3, dueAt: NOW + 10_800_000, lastChangeBy: second });
    expect(delayQueue.notices).toEqual([]);
    // The older one is dropped for good, not retried: counted as a duplicate, and said in the logs.
    expect(olderAgain.batchItemFailures).toEqual([]);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
    expect(logger.lines.filter(({ message }) => message === 'reschedule superseded by one published later; dropped')).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ eventId: record?.id, inputMessageId: first }),
        message: 'reschedule superseded by one published later; dropped',
      },
    ]);
  });

  it('judges a cancel, and a reschedule published no later than the last change, by the state of the event alone', async () => {
    const { deps, delayQueue, store, clock } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    const moveSoon = { action: 'reschedule', id: 'stored', date: new Date(NOW + 60_000).toISOString(), failure_topic: failureTopic };
    await ingestBatch(deps, [published(moveSoon, inputMessageId(), ACME_TOPIC, NOW - 1_000)]);
    clock.set(NOW + 57_000);
    // Both arrive within the cutoff: a cancel published before the reschedule, and another reschedule published with it.
    await ingestBatch(deps, [
      published({ action: 'cancel', id: 'stored', failure_topic: failureTopic }, inputMessageId(), ACME_TOPIC, NOW - 2_000),
      published({ ...moveSoon, date: later }, inputMessageId(), ACME_TOPIC, NOW - 1_000),
    ]);
    expect(delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.EVENT_EMITTING, REASON.EVENT_EMITTING]);
    expect([...store.records.values()][0]).toMatchObject({ state: EVENT_STATE.queued, version: 2, dueAt: NOW + 60_000 });
  });

  it('refuses a cancel or a reschedule of an event another request cancelled as EVENT_ALREADY_ENDED, naming the field the client named it by', async () => {
    const { deps, delayQueue, store } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    await ingestBatch(deps, [published({ action: 'cancel', id: 'stored' })]);
    const [eventId] = store.records.keys();
    await ingestBatch(deps, [
      published({ action: 'cancel', event_id: eventId, failure_topic: failureTopic }),
      published({ action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic }),
    ]);
    expect(delayQueue.notices.map(({ notice }) => [notice.reason, notice.details])).toEqual([
      [REASON.EVENT_ALREADY_ENDED, { field: 'event_id', state: EVENT_STATE.cancelled }],
      [REASON.EVENT_ALREADY_ENDED, { field: 'id', state: EVENT_STATE.cancelled }],
    ]);
  });

  it('retries a change the store refused though nothing forbids it now: it lost a race with another change', async () => {
    const { deps, store, delayQueue, lastErrors } = setup();
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    store.cancel = async (id) => ({ outcome: 'refused', current: store.records.get(id) });
    const cancel = published({ action: 'cancel', id: 'stored', failure_topic: topicArn('failures', 'eu-west-1', '111111111111') });
    const response = await ingestBatch(deps, [cancel]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: cancel.messageId }]);
    expect(lastErrors.errors.get(cancel.messageId)?.error).toEqual({
      name: 'TransientError',
      message: `cancel of ${[...store.records.keys()][0]} raced with another change; retrying`,
    });
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
      expect(context.metrics.counts).toMatchObject({ EventsRescheduled: 1, EventsDelayed: 0 });
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

  it('starts one job for a cancel by label, named after its input message, however often it is delivered', async () => {
    const { deps, jobs, changesQueue } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
    const messageId = inputMessageId();
    const request = { action: 'cancel', label: 'campaign-7', due_before: later, failure_topic: failureTopic };
    await ingestBatch(deps, [published(request, messageId)]);
    await ingestBatch(deps, [published(request, messageId)]);
    expect([...jobs.jobs.values()]).toEqual([
      expect.objectContaining({
        jobId: `b-${messageId}`,
        tenant: 'acme',
        label: 'campaign-7',
        fromMs: NOW,
        dueBefore: NOW + 3_600_000,
        failureTopic,
        dryRun: false,
        state: 'running',
      }),
    ]);
    // Sent again while no page has moved the job: the first send may have failed.
    expect(changesQueue.sent).toEqual([
      { jobId: `b-${messageId}`, from: 'start' },
      { jobId: `b-${messageId}`, from: 'start' },
    ]);
  });
});

describe("a batch's failure notices", () => {
  const failureTopic = topicArn('failures', REGION, '111111111111');
  /** A cancel naming no event: refused as MISSING_FIELD, with a notice. */
  const nameless = { action: 'cancel', failure_topic: failureTopic };

  it('are handed to the emitter together, ten to an SQS request, once every record is done', async () => {
    const context = setup();
    const response = await ingestBatch(
      context.deps,
      Array.from({ length: 25 }, () => published(nameless)),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(context.delayQueue.noticeSends).toEqual([25]);
    expect(context.delayQueue.notices.map(({ notice }) => notice.reason)).toEqual(Array.from({ length: 25 }, () => REASON.MISSING_FIELD));
  });

  it('fail the records of those SQS does not take; delivered again, each is sent under its notice id', async () => {
    const context = setup();
    const ids = [inputMessageId(), inputMessageId()];
    context.delayQueue.refuseNoticeSends = 1;
    const first = await ingestBatch(
      context.deps,
      ids.map((id) => published(nameless, id)),
    );
    expect(first.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier)).toEqual(ids.map((id) => `sqs-${id}`));
    expect(context.delayQueue.notices).toEqual([]);
    expect(context.lastErrors.errors.size).toBe(2);
    const again = await ingestBatch(
      context.deps,
      ids.map((id) => sqsRecord(published(nameless, id).body, `sqs-${id}`, 2)),
    );
    expect(again.batchItemFailures).toEqual([]);
    expect(context.delayQueue.notices.map(({ noticeId }) => noticeId)).toEqual(ids.map((id) => noticeId(id)));
  });
});

describe('what ingest says in its logs, for an operator following a request', () => {
  const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');
  const said = (logger: ReturnType<typeof setup>['logger'], message: string) => logger.lines.filter((line) => line.message === message);
  const idOf = (store: ReturnType<typeof setup>['store'], clientId: string) =>
    [...store.records.values()].find((record) => record.clientId === clientId)?.id;

  it('names the event and its tenant of a cancel, and of a reschedule when it is now due, with its version or the copy carried on', async () => {
    const { deps, store, logger } = setup();
    await ingestBatch(deps, [
      published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget })),
      published(scheduleRequest({ id: 'queued', date: soon, target: acmeTarget })),
      published(scheduleRequest({ id: 'dropped', date: later, target: acmeTarget })),
    ]);
    await ingestBatch(deps, [
      published({ action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic }),
      published({ action: 'reschedule', id: 'queued', date: later, failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'dropped', failure_topic: failureTopic }),
    ]);
    expect(said(logger, 'event rescheduled')).toEqual([
      {
        level: 'info',
        fields: { eventId: idOf(store, 'stored'), tenant: 'acme', dueAt: NOW + 30_000, version: 2 },
        message: 'event rescheduled',
      },
    ]);
    const carried = 'event rescheduled: its delay-queue copy is carried on when it reaches the emitter';
    expect(said(logger, carried)).toEqual([
      { level: 'info', fields: { eventId: idOf(store, 'queued'), tenant: 'acme', dueAt: Date.parse(later) }, message: carried },
    ]);
    expect(said(logger, 'event cancelled')).toEqual([
      { level: 'info', fields: { eventId: idOf(store, 'dropped'), tenant: 'acme' }, message: 'event cancelled' },
    ]);
  });

  it('names the event and its tenant of a duplicate input suppressed', async () => {
    const { deps, store, logger } = setup();
    const id = inputMessageId();
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    const [record] = store.records.values();
    store.put({ ...(record as NonNullable<typeof record>), state: EVENT_STATE.emitted });
    await ingestBatch(deps, [published(scheduleRequest({ date: soon, target: acmeTarget }), id)]);
    expect(said(logger, 'duplicate input suppressed')).toEqual([
      { level: 'info', fields: { eventId: record?.id, tenant: 'acme' }, message: 'duplicate input suppressed' },
    ]);
  });

  it('warns, naming the event and its tenant, when a duplicate input could not give back its place in the quota, and only then', async () => {
    const { deps, store, logger } = setup();
    const id = inputMessageId();
    const request = published(scheduleRequest({ date: soon, target: acmeTarget }), id);
    await ingestBatch(deps, [request]);
    await ingestBatch(deps, [request]);
    expect(logger.at('warn')).toEqual([]);
    const createMany = store.createMany.bind(store);
    store.createMany = async (entries) =>
      (await createMany(entries)).map((outcome) => (outcome.outcome === 'duplicate' ? { ...outcome, placeKept: true as const } : outcome));
    await ingestBatch(deps, [request]);
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { eventId: [...store.records.keys()][0], tenant: 'acme' },
        message: 'duplicate input: its place in the open-events quota could not be given back; the count stays high until reconciled',
      },
    ]);
  });

  it('names the event, the input message and the version of a reschedule delivered again that sent its event again', async () => {
    const { deps, store, delayQueue, logger } = setup();
    await ingestBatch(deps, [published(scheduleRequest({ id: 'stored', date: later, target: acmeTarget }))]);
    const messageId = inputMessageId();
    const reschedule = published({ action: 'reschedule', id: 'stored', date: soon, failure_topic: failureTopic }, messageId);
    delayQueue.refuseSends = 1;
    await ingestBatch(deps, [reschedule]);
    await ingestBatch(deps, [reschedule]);
    const message = 'reschedule delivered again: its event sent to the delay queue again';
    expect(said(logger, message)).toEqual([
      { level: 'info', fields: { eventId: idOf(store, 'stored'), inputMessageId: messageId, version: 2 }, message },
    ]);
  });

  it('names the tenant of a pause with its note and input message, of a resume with when the pause began, and of one dropped with when it was published', async () => {
    const { deps, logger } = setup();
    const pauseId = inputMessageId();
    const pause = published({ action: 'pause', note: 'target under maintenance' }, pauseId);
    await ingestBatch(deps, [pause]);
    expect(said(logger, 'tenant paused')).toEqual([
      { level: 'info', fields: { tenant: 'acme', note: 'target under maintenance', inputMessageId: pauseId }, message: 'tenant paused' },
    ]);
    await ingestBatch(deps, [published({ action: 'resume' }, inputMessageId(), ACME_TOPIC, NOW + 1_000)]);
    const resumed = 'tenant resumed: its held events are being sent';
    expect(said(logger, resumed)).toEqual([{ level: 'info', fields: { tenant: 'acme', pausedAt: NOW }, message: resumed }]);
    // The pause delivered again, and a resume published before the resume applied: both dropped.
    await ingestBatch(deps, [pause]);
    const lateResume = inputMessageId();
    await ingestBatch(deps, [published({ action: 'resume' }, lateResume, ACME_TOPIC, NOW + 500)]);
    const dropped = (action: string) => `${action} delivered again, or superseded by a pause or resume published later; dropped`;
    expect(logger.lines.filter(({ message }) => message.includes('superseded by a pause or resume'))).toEqual([
      { level: 'info', fields: { tenant: 'acme', inputMessageId: pauseId, publishedAt: NOW }, message: dropped('pause') },
      { level: 'info', fields: { tenant: 'acme', inputMessageId: lateResume, publishedAt: NOW + 500 }, message: dropped('resume') },
    ]);
  });
});

describe('pause and resume', () => {
  const PUBLIC_TOPIC = 'arn:aws:sns:eu-west-1:000000000000:scheduler-input';

  it('pauses the tenant on its own topic, with its note; resume ends the pause and starts the job that sends its held events', async () => {
    const { deps, store, changesQueue } = setup();
    const pauseId = inputMessageId();
    await ingestBatch(deps, [published({ action: 'pause', note: 'target under maintenance' }, pauseId)]);
    expect(store.pauses.get('acme')).toEqual({ pausedAt: NOW, note: 'target under maintenance', pausedBy: pauseId, owner: 'tenant' });

    const resumeId = inputMessageId();
    const resume = published({ action: 'resume' }, resumeId);
    await ingestBatch(deps, [resume]);
    expect(store.pauses.has('acme')).toBe(false);
    expect(changesQueue.sentJobs).toEqual([{ job: { kind: 'resume', jobId: `r-${resumeId}`, tenant: 'acme' }, delaySeconds: 2 }]);

    // Delivered again, it starts the same job again: a page worked twice sends nothing twice.
    expect((await ingestBatch(deps, [resume])).batchItemFailures).toEqual([]);
    expect(changesQueue.sentJobs.map(({ job }) => job.jobId)).toEqual([`r-${resumeId}`, `r-${resumeId}`]);
  });

  it('applies pause and resume in the order their client published them, whatever order they arrive in, each once, counting the others as duplicates', async () => {
    const { deps, store, changesQueue, metrics } = setup();
    const pause = (at: number) => published({ action: 'pause' }, inputMessageId(), ACME_TOPIC, at);
    const resume = (at: number) => published({ action: 'resume' }, inputMessageId(), ACME_TOPIC, at);

    // A resume published after a pause, arriving first (in one batch, or before the pause's redelivery): the tenant is not paused.
    const early = pause(NOW - 2_000);
    await ingestBatch(deps, [resume(NOW - 1_000), early]);
    await ingestBatch(deps, [early]);
    expect(store.pauses.has('acme')).toBe(false);
    expect(changesQueue.sentJobs).toHaveLength(1);

    // A pause published after a resume, arriving first: the late resume neither ends it nor sends anything.
    const late = resume(NOW + 1_000);
    await ingestBatch(deps, [pause(NOW + 2_000)]);
    await ingestBatch(deps, [late]);
    expect(store.pauses.get('acme')).toMatchObject({ owner: 'tenant' });
    expect(changesQueue.sentJobs).toHaveLength(1);
    // The early pause, twice, and the late resume: dropped, not retried.
    expect(metrics.counts.DuplicatesSuppressed).toBe(3);
  });

  it("never lifts its operator's pause: the tenant's resume is refused as PAUSED_BY_OPERATOR on its failure topic, and nothing is sent", async () => {
    const { deps, store, delayQueue, changesQueue } = setup();
    const failureTopic = topicArn('failures', REGION, '111111111111');
    const pauses = new MemoryTenantPauses(store);
    await pauses.pause('acme', { owner: 'operator', name: 'operator jo' }, { pausedAt: NOW - 60_000, note: 'flood under investigation' });
    await ingestBatch(deps, [published({ action: 'pause', note: 'ours' }, inputMessageId(), ACME_TOPIC, NOW - 1_000)]);
    await ingestBatch(deps, [published({ action: 'resume', failure_topic: failureTopic })]);

    expect((await pauses.paused(['acme'])).get('acme')).toMatchObject({ owner: 'operator', pausedBy: 'operator jo' });
    expect(changesQueue.sentJobs).toEqual([]);
    expect(delayQueue.notices.map(({ notice }) => [notice.reason, notice.message, notice.details])).toEqual([
      [
        REASON.PAUSED_BY_OPERATOR,
        `tenant "acme" stays paused: its operator paused it (since ${new Date(NOW - 60_000).toISOString()}: flood under investigation), and only the operator resumes it`,
        { pausedAt: new Date(NOW - 60_000).toISOString(), note: 'flood under investigation' },
      ],
    ]);

    // The operator's resume ends its own pause only: the tenant's, ended by its resume, is not back; its held events are sent.
    expect(await pauses.resume('acme', { owner: 'operator', name: 'operator jo' }, NOW)).toMatchObject({
      applied: true,
      stillPaused: undefined,
    });
    expect((await pauses.paused(['acme'])).has('acme')).toBe(false);
  });

  it('tells a tenant its operator paused without a note since when it is paused, and no more', async () => {
    const { deps, store, delayQueue } = setup();
    await new MemoryTenantPauses(store).pause(
      'acme',
      { owner: 'operator', name: 'operator jo' },
      { pausedAt: NOW - 60_000, note: undefined },
    );
    await ingestBatch(deps, [published({ action: 'resume', failure_topic: topicArn('failures', REGION, '111111111111') })]);
    expect(delayQueue.notices.map(({ notice }) => [notice.message, notice.details])).toEqual([
      [
        `tenant "acme" stays paused: its operator paused it (since ${new Date(NOW - 60_000).toISOString()}), and only the operator resumes it`,
        { pausedAt: new Date(NOW - 60_000).toISOString(), note: null },
      ],
    ]);
  });

  it('refuses both on the shared topic (CONTROL_NOT_ALLOWED): nothing proves who published there', async () => {
    const { deps, store, delayQueue, changesQueue } = setup();
    const failureTopic = topicArn('failures', 'eu-west-1', '123456789012');
    await ingestBatch(deps, [
      published({ action: 'pause', failure_topic: failureTopic }, inputMessageId(), PUBLIC_TOPIC),
      published({ action: 'resume', failure_topic: failureTopic }, inputMessageId(), PUBLIC_TOPIC),
    ]);
    expect(delayQueue.notices.map(({ notice }) => [notice.reason, notice.details])).toEqual([
      [REASON.CONTROL_NOT_ALLOWED, { field: 'action' }],
      [REASON.CONTROL_NOT_ALLOWED, { field: 'action' }],
    ]);
    expect(store.pauses.size).toBe(0);
    expect(changesQueue.sentJobs).toEqual([]);
  });
});
