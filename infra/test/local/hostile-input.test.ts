import { describe, expect, it } from 'vitest';
import { clientsFor, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import {
  EMISSION_ATTRIBUTE,
  eventIdFor,
  firstIllFormedString,
  noticeAttributes,
  REASON,
  SNS_MAX_MESSAGE_BYTES,
  snsMessageBytes,
  type FailureNotice,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { ODD_CHARACTERS, objectText } from '../../../shared/test/hostile-input.js';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import {
  capturingLogger,
  expectNotEarly,
  FAST_TIMINGS,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

/**
 * The nastiest kinds of input the property tests (shared/test/trust.properties.test.ts) generate,
 * as a fixed sample through the real local service: SNS, SQS, DynamoDB Local and the functions.
 * Whatever the sample holds, every refusal has a stable code and a well-formed notice that fits,
 * nothing reaches another tenant's event or the scheduler's own topics, and a clean event
 * published beside it is on time.
 */
const emulators = sharedEmulators();

const ACME_ACCOUNT = '111111111111';
const GLOBEX_ACCOUNT = '222222222222';
/** Neither tenant owns the emulators' account, where every local topic is: both may target it. */
const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: [ACME_ACCOUNT], targetAccounts: [LOCAL_ACCOUNT] },
    { id: 'globex', accounts: [GLOBEX_ACCOUNT], targetAccounts: [LOCAL_ACCOUNT] },
  ],
};

/** Odd characters a client's queue can take (SQS refuses some, such as NUL and U+FFFF) and SNS can carry (no lone surrogate). */
const ODD_BUT_DELIVERABLE = ODD_CHARACTERS.filter(
  (text) => text.isWellFormed() && /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u.test(text),
).join('');
/** More than a fifth of SQS's 1 MiB: five of them do not fit in one SendMessageBatch. */
const LARGE_PAYLOAD_BYTES = 220_000;
/** Beyond the near-path window of FAST_TIMINGS (6 s): stored, then loaded together in one chunk. */
const FAR_MS = 7_000;

/** Every message published to a topic, read from a queue of the test's own subscribed to it. */
async function watch(endpoint: string, topicArn: string): Promise<{ readonly received: Received[]; stop(): Promise<void> }> {
  const received: Received[] = [];
  const subscriber = await TopicSubscriber.subscribe(
    clientsFor({ region: LOCAL_REGION, endpoint, credentials: LOCAL_CREDENTIALS }),
    topicArn,
    uniqueName('watch'),
    (message) => received.push(message),
  );
  return { received, stop: () => subscriber.stop() };
}

describe('hostile input, end to end', () => {
  it('is refused with stable codes and well-formed notices, reaches no other tenant and none of the scheduler’s topics, and a clean event beside it is on time', async () => {
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: TENANTS, env: FAST_TIMINGS });
    const { endpoint, inputTopicArn } = scheduler.outputs;
    const acmeTopic = scheduler.outputs.tenantInputTopicArns.acme ?? '';
    const globexTopic = scheduler.outputs.tenantInputTopicArns.globex ?? '';
    const acme = new SchedulerClient(scheduler, acmeTopic);
    const globex = new SchedulerClient(scheduler, globexTopic);
    const shared = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(endpoint, 'target');
    const failures = await TopicConsumer.create(endpoint, 'failures');
    const inputTopics = [await watch(endpoint, inputTopicArn), await watch(endpoint, acmeTopic)];
    try {
      // 5 s ahead, within the near-path window (6 s): on a loaded 2-core run these batches' ingest
      // took over 3 s, and a clean event due 3 s ahead reached the emitter after its due time.
      const dueAt = Date.now() + 5_000;
      const farDueAt = dueAt + FAR_MS;
      const failureTopic = failures.topicArn;
      const valid = (payload: string, extra: Record<string, unknown> = {}) =>
        request(target.topicArn, dueAt, payload, { failure_topic: failureTopic, ...extra });
      const withLoneSurrogate = (text: string) => text.replace('MARK', '\\ud800');
      const acmeOrder = eventIdFor('acme', '', 'order-1', '');

      // The payloads of the requests that are taken.
      const [clean, cleanStored, odd, prototypeKeys, globexOrder, publicOrder] = [
        'clean',
        'clean, stored',
        `odd ${ODD_BUT_DELIVERABLE}`,
        'own keys only',
        'globex order-1',
        'public order-1',
      ] as const;
      const large = ['a', 'b', 'c', 'd', 'e'].map((tag) => tag.repeat(LARGE_PAYLOAD_BYTES));
      const accepted = [clean, cleanStored, odd, prototypeKeys, globexOrder, publicOrder, ...large];
      await acme.publishBatch([
        valid(clean, { id: 'order-1' }),
        request(target.topicArn, farDueAt, cleanStored),
        valid(odd),
        // Own keys that pollute nothing: JSON.parse makes `__proto__` an own key.
        objectText([
          ['__proto__', { target: `arn:aws:sns:${LOCAL_REGION}:${GLOBEX_ACCOUNT}:theirs` }],
          ['constructor', 'x'],
          ...Object.entries(valid(prototypeKeys)),
        ]),
        withLoneSurrogate(JSON.stringify(valid('lone surrogate', { user: 'MARK' }))),
        // The notice quotes it in a message cut to 1,024 characters.
        valid('emoji date', { date: '😀'.repeat(600) }),
        valid('other partition', { target: target.topicArn.replace(/^arn:aws:/, 'arn:aws-cn:') }),
        valid(JSON.stringify({ action: 'cancel', id: 'order-1' }), { target: acmeTopic }),
        valid('shared topic as failure topic', { failure_topic: inputTopicArn }),
        // JSON.parse takes the last of two keys.
        objectText([...Object.entries(valid('second target')), ['target', `arn:aws:sns:${LOCAL_REGION}:${GLOBEX_ACCOUNT}:theirs`]]),
      ]);
      await acme.publishBatch([
        valid('far ahead', { date: '9999-12-31T23:59:59.999Z' }),
        valid('date as a number', { date: dueAt }),
        `{"failure_topic":${JSON.stringify(failureTopic)},"nested":${'['.repeat(5_000)}${']'.repeat(5_000)}}`,
        `not JSON ${ODD_BUT_DELIVERABLE}`,
      ]);
      // As large as SNS takes: each in a publish of its own (a PublishBatch carries 256 KiB in all).
      await Promise.all([
        // Its path is the notice's details.field: with the notice's message, more than SNS takes, unless cut.
        acme.publish(withLoneSurrogate(JSON.stringify({ ...valid('long key'), [`${'k'.repeat(SNS_MAX_MESSAGE_BYTES - 800)}MARK`]: 1 }))),
        // Stored, and loaded with the clean stored event: more than one SendMessageBatch takes.
        ...large.map((payload) => acme.publish(request(target.topicArn, farDueAt, payload))),
      ]);
      await globex.publishBatch([
        { action: 'cancel', event_id: acmeOrder, failure_topic: failureTopic },
        { action: 'reschedule', event_id: acmeOrder, date: new Date(dueAt + 60_000).toISOString(), failure_topic: failureTopic },
        valid(globexOrder, { id: 'order-1' }),
      ]);
      await shared.publishBatch([
        { action: 'cancel', event_id: acmeOrder, failure_topic: failureTopic },
        valid('into acme’s input topic', { target: acmeTopic }),
        valid(publicOrder, { id: 'order-1', user: 'acme' }),
      ]);

      const expectedReasons = [
        REASON.INVALID_UNICODE,
        REASON.INVALID_DATE,
        REASON.INVALID_UNICODE,
        REASON.TARGET_IN_OTHER_REGION,
        REASON.TARGET_IS_SCHEDULER_TOPIC,
        REASON.TARGET_NOT_ALLOWED,
        REASON.DATE_TOO_FAR,
        REASON.INVALID_FIELD,
        REASON.TOO_DEEPLY_NESTED,
        REASON.EVENT_NOT_FOUND,
        REASON.EVENT_NOT_FOUND,
        REASON.CONTROL_NOT_ALLOWED,
        REASON.TARGET_IS_SCHEDULER_TOPIC,
      ].sort();
      await waitFor(() => accepted.every((payload) => target.withPayload(payload).length > 0), 'every accepted event', 30_000);
      await waitFor(() => failures.deliveries.length >= expectedReasons.length, 'every refusal on the failure topic', 30_000);

      // The clean events are on time, though their batches held all of the above.
      for (const [payload, due] of [
        [clean, dueAt],
        [cleanStored, farDueAt],
      ] as const) {
        const [delivery] = target.withPayload(payload);
        expect(scheduledAt(delivery as Received)).toBe(due);
        expectNotEarly(delivery, due);
        expect((delivery?.receivedAt ?? Infinity) - due).toBeLessThan(1_000);
      }

      // A sentinel after everything: what arrived by then is all that arrives.
      await acme.publish(request(target.topicArn, Date.now() + 500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');

      // Each accepted event once, never early, byte for byte, as the tenant whose topic it came through.
      expect(target.deliveries.map(({ body }) => body).sort()).toEqual([...accepted, 'sentinel'].sort());
      for (const delivery of target.deliveries) expectNotEarly(delivery);
      expect(target.withPayload(globexOrder)[0]?.attributes[EMISSION_ATTRIBUTE.tenant]).toBe('globex');
      expect(target.withPayload(publicOrder)[0]?.attributes[EMISSION_ATTRIBUTE.tenant]).toBe('public');
      expect(target.withPayload(clean)[0]?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(acmeOrder);

      // Every refusal a stable code, its notice JSON, well-formed and within one SNS message.
      const notices = failures.deliveries.map(({ body }) => JSON.parse(body) as FailureNotice);
      expect(notices.map(({ reason }) => reason).sort()).toEqual(expectedReasons);
      for (const [index, notice] of notices.entries()) {
        expect(firstIllFormedString(notice)).toBeUndefined();
        expect(snsMessageBytes(failures.deliveries[index]?.body ?? '', noticeAttributes(notice))).toBeLessThanOrEqual(
          SNS_MAX_MESSAGE_BYTES,
        );
      }
      const reasons = new Set<string>(Object.values(REASON));
      expect(lines.filter((line) => 'reason' in line && !reasons.has(String(line.reason)))).toEqual([]);
      for (const reason of [REASON.FAILURE_TOPIC_IS_SCHEDULER_TOPIC, REASON.INVALID_JSON])
        expect(lines.filter((line) => line.reason === reason)).toHaveLength(1);
      // No message failed its batch.
      expect(lines.filter((line) => line.msg === 'record failed; it will be retried')).toEqual([]);
      // Nothing the scheduler published reached its own topics: only the test's requests are there.
      for (const { received } of inputTopics)
        expect(received.filter(({ attributes }) => Object.keys(attributes).some((name) => name.startsWith('scheduler-')))).toEqual([]);
    } finally {
      for (const client of [acme, globex, shared]) client.destroy();
      for (const watched of inputTopics) await watched.stop();
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });
});
