import { describe, expect, it } from 'vitest';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import {
  decodeDelayQueueMessage,
  DynamoDbEventRecords,
  EMISSION_ATTRIBUTE,
  EVENT_STATE,
  eventIdFor,
  PUBLIC_TENANT_ID,
  REASON,
  type EventRecord,
  type EventState,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, type LocalSchedulerOptions } from '../../src/local/runtime.js';
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
  waitFor,
} from './kit.js';

/** Two tenants whose targets are local topics; no tenant owns the local account, so the public tenant may target it too. */
const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: ['111111111111'], targetAccounts: [LOCAL_ACCOUNT] },
    { id: 'globex', accounts: ['222222222222'], targetAccounts: [LOCAL_ACCOUNT] },
  ],
};

const emulators = sharedEmulators();

/** Events due sooner than this go straight to the delay queue; later ones are stored. */
const NEAR_PATH_WINDOW_MS = 10_000;

/**
 * A scheduler with two tenants in the local account, changes closing 4 s before due (FAST_TIMINGS), a target and a failure topic;
 * events due within `nearPathWindowMs` go straight to the delay queue.
 */
async function setup(
  options: Pick<LocalSchedulerOptions, 'instrumentClients' | 'visibilityTimeoutSeconds'> = {},
  nearPathWindowMs = NEAR_PATH_WINDOW_MS,
) {
  const { logger, lines } = capturingLogger();
  const timings = { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: String(nearPathWindowMs / 1000) };
  const scheduler = await startTestScheduler(emulators, { logger, tenants: TENANTS, env: timings, ...options });
  const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
  const globex = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.globex);
  const shared = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
  const records = new DynamoDbEventRecords(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  const stop = async () => {
    acme.destroy();
    globex.destroy();
    shared.destroy();
    await target.stop();
    await failures.stop();
    await scheduler.stop();
  };
  return { acme, globex, shared, target, failures, records, lines, stop };
}

/** The tenant acme's first event in a state, if any. */
async function firstIn(records: DynamoDbEventRecords, state: EventState): Promise<EventRecord | undefined> {
  return (await records.listEvents('acme', { states: [state], limit: 1 })).events[0];
}

async function inState(records: DynamoDbEventRecords, id: string, state: string): Promise<EventRecord | undefined> {
  const record = await records.get(id);
  return record?.state === state ? record : undefined;
}

/** Publishes a sentinel due a second after `dueAt` and waits for it: whatever was due at `dueAt` has had its chance. */
async function sentinelAfter(client: SchedulerClient, target: TopicConsumer, dueAt: number): Promise<void> {
  await client.publish(request(target.topicArn, Math.max(dueAt, Date.now()) + 1_000, 'sentinel'));
  await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel', 30_000);
}

describe('cancel', () => {
  it.each([
    ['near path (in the delay queue)', 8_000],
    ['far path (stored for the loader)', 14_000],
  ])('stops an event on the %s, and records when', async (_path, inMs) => {
    const { acme, target, records, stop } = await setup();
    try {
      const dueAt = Date.now() + inMs;
      await acme.publish(request(target.topicArn, dueAt, 'cancelled', { id: 'order-1' }));
      const id = eventIdFor('acme', '', 'order-1', '');
      await waitFor(() => inState(records, id, inMs > NEAR_PATH_WINDOW_MS ? EVENT_STATE.scheduled : EVENT_STATE.queued), 'the event');
      await acme.publish({ action: 'cancel', id: 'order-1' });
      const cancelled = await waitFor(() => inState(records, id, EVENT_STATE.cancelled), 'the cancel');
      expect(cancelled.cancelledAt).toBeGreaterThan(cancelled.createdAt);

      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('cancelled')).toHaveLength(0);
    } finally {
      await stop();
    }
  });

  it("refuses another tenant's event exactly like an unknown one, and the event is still emitted", async () => {
    const { acme, globex, target, failures, stop } = await setup();
    try {
      const dueAt = Date.now() + 6_000;
      const snsMessageId = await acme.publish(request(target.topicArn, dueAt, 'mine'));
      await globex.publish({ action: 'cancel', event_id: `m-${snsMessageId}`, failure_topic: failures.topicArn });
      await globex.publish({ action: 'cancel', event_id: 'm-00000000-0000-0000-0000-000000000000', failure_topic: failures.topicArn });
      await waitFor(() => failures.notices().length === 2, 'both refusals');
      expect(failures.notices().map((notice) => notice.reason)).toEqual([REASON.EVENT_NOT_FOUND, REASON.EVENT_NOT_FOUND]);
      expect(failures.notices()[0]).toMatchObject({ details: {} });

      await waitFor(() => target.withPayload('mine').length > 0, "acme's event");
      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('mine')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('refuses an event already emitted, and is silent when its own cancel is delivered again', async () => {
    const { acme, target, failures, records, stop } = await setup();
    try {
      const emittedId = await acme.publish(request(target.topicArn, Date.now(), 'done'));
      await waitFor(() => inState(records, `m-${emittedId}`, EVENT_STATE.emitted), 'the emission');
      await acme.publish({ action: 'cancel', event_id: `m-${emittedId}`, failure_topic: failures.topicArn });
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the refusal');
      expect(notice).toMatchObject({ reason: REASON.EVENT_ALREADY_ENDED, details: { state: EVENT_STATE.emitted } });

      const laterId = await acme.publish(request(target.topicArn, Date.now() + 30_000, 'later'));
      // SQS does not keep order: a cancel sent together with its event may arrive first.
      await waitFor(() => inState(records, `m-${laterId}`, EVENT_STATE.scheduled), 'the event');
      const cancel = { action: 'cancel', event_id: `m-${laterId}`, failure_topic: failures.topicArn };
      const cancelMessageId = await acme.publish(cancel);
      await waitFor(() => inState(records, `m-${laterId}`, EVENT_STATE.cancelled), 'the cancel');
      await acme.redeliver(cancel, cancelMessageId);
      await acme.publish({ action: 'cancel', event_id: `m-${laterId}`, failure_topic: failures.topicArn });
      // The second, distinct cancel is refused; the redelivery of the first is not.
      await waitFor(() => failures.notices().length === 2, 'the second refusal');
      await acme.publish({ action: 'cancel', event_id: 'm-unknown', failure_topic: failures.topicArn });
      await waitFor(() => failures.notices().length === 3, 'the last refusal');
      expect(failures.notices().map((n) => n.reason)).toEqual([
        REASON.EVENT_ALREADY_ENDED,
        REASON.EVENT_ALREADY_ENDED,
        REASON.EVENT_NOT_FOUND,
      ]);
    } finally {
      await stop();
    }
  });

  it('is refused within the cutoff before the due time, and the event is emitted once', async () => {
    const { acme, target, failures, records, stop } = await setup();
    try {
      const dueAt = Date.now() + 2_500;
      const snsMessageId = await acme.publish(request(target.topicArn, dueAt, 'too late', { failure_topic: failures.topicArn }));
      await waitFor(() => inState(records, `m-${snsMessageId}`, EVENT_STATE.queued), 'the event');
      await acme.publish({ action: 'cancel', event_id: `m-${snsMessageId}`, failure_topic: failures.topicArn });
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the refusal');
      expect(notice).toMatchObject({ reason: REASON.EVENT_EMITTING, details: { cutoffMs: 4_000 } });

      await waitFor(() => target.withPayload('too late').length > 0, 'the emission');
      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('too late')).toHaveLength(1);
      await waitFor(() => inState(records, `m-${snsMessageId}`, EVENT_STATE.emitted), 'the emission recorded');
    } finally {
      await stop();
    }
  });

  it('is refused when its write would land within the cutoff, however early its batch started: emitted once, never cancelled', async () => {
    let eventId = '';
    let dueAt = 0;
    let cancel: 'waiting' | 'held' | 'released' = 'waiting';
    let emitterRead = (): void => {};
    const read = new Promise<void>((resolve) => (emitterRead = resolve));
    const { acme, target, failures, records, stop } = await setup({
      // Longer than the cancel is held: its input message is not handed out again meanwhile.
      visibilityTimeoutSeconds: 30,
      instrumentClients: (clients) => {
        // The cancel's first request, its body built, is held until the emitter has read the
        // event's record (at the due time at the latest): as a slow request, or one the SDK sends
        // again, would be.
        clients.dynamodb.middlewareStack.add(
          (next, context) => async (args) => {
            if (
              cancel === 'waiting' &&
              context.commandName === 'TransactWriteItemsCommand' &&
              JSON.stringify(args.input).includes('cancelledBy')
            ) {
              cancel = 'held';
              await Promise.race([read, new Promise((resolve) => setTimeout(resolve, dueAt - Date.now()))]);
              cancel = 'released';
            }
            return next(args);
          },
          { step: 'build', name: 'holdFirstCancel' },
        );
        clients.dynamodb.middlewareStack.add(
          (next, context) => async (args) => {
            const result = await next(args);
            if (cancel === 'held' && context.commandName === 'BatchGetItemCommand' && JSON.stringify(args.input).includes(eventId))
              emitterRead();
            return result;
          },
          { step: 'initialize', name: 'noticeEmitterRead' },
        );
      },
    });
    try {
      dueAt = Date.now() + 8_000;
      const snsMessageId = await acme.publish(request(target.topicArn, dueAt, 'cancelled late', { failure_topic: failures.topicArn }));
      eventId = `m-${snsMessageId}`;
      await waitFor(() => inState(records, eventId, EVENT_STATE.queued), 'the event');
      // Well before the cutoff when ingest takes it.
      await acme.publish({ action: 'cancel', event_id: eventId, failure_topic: failures.topicArn });
      await waitFor(() => cancel === 'released', 'the cancel released');

      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the refusal');
      expect(notice).toMatchObject({ reason: REASON.EVENT_EMITTING, eventId });
      await waitFor(() => inState(records, eventId, EVENT_STATE.emitted), 'the emission recorded');
      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('cancelled late')).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});

describe('on the shared input topic', () => {
  it("names an event only by the m- id of its publish: ids anyone can compute from a user reach nobody's event", async () => {
    const { shared, target, failures, records, stop } = await setup();
    try {
      const dueAt = Date.now() + 8_000;
      // Alice's event, scheduled with a client id: its c- id follows from the public tenant, her user and the id.
      await shared.publish(request(target.topicArn, dueAt, 'alice', { user: 'alice', id: 'order-1' }));
      const aliceEventId = eventIdFor(PUBLIC_TENANT_ID, 'alice', 'order-1', '');
      await waitFor(() => inState(records, aliceEventId, EVENT_STATE.queued), "alice's event");
      // Mallory knows (or guesses) her user and id.
      const newDate = new Date(dueAt + 60_000).toISOString();
      await shared.publish({ action: 'cancel', id: 'order-1', user: 'alice', failure_topic: failures.topicArn });
      await shared.publish({ action: 'reschedule', id: 'order-1', user: 'alice', date: newDate, failure_topic: failures.topicArn });
      await shared.publish({ action: 'cancel', event_id: aliceEventId, failure_topic: failures.topicArn });
      await waitFor(() => failures.notices().length === 3, 'the three refusals');
      expect(failures.notices().map((notice) => notice.reason)).toEqual([
        REASON.CONTROL_NOT_ALLOWED,
        REASON.CONTROL_NOT_ALLOWED,
        REASON.CONTROL_NOT_ALLOWED,
      ]);
      const fields = failures.notices().map((notice) => (notice as { details?: { field?: string } }).details?.field);
      expect(fields.sort()).toEqual(['event_id', 'id', 'id']);

      // Bob cancels his own event by the MessageId SNS returned to him.
      // Due well after the cutoff still, once his cancel has made its way through ingest.
      const bobsDueAt = Date.now() + 9_000;
      const bobsMessageId = await shared.publish(request(target.topicArn, bobsDueAt, 'bob', { user: 'bob' }));
      await waitFor(() => inState(records, `m-${bobsMessageId}`, EVENT_STATE.queued), "bob's event");
      await shared.publish({ action: 'cancel', event_id: `m-${bobsMessageId}` });
      await waitFor(() => inState(records, `m-${bobsMessageId}`, EVENT_STATE.cancelled), "bob's cancel");

      const delivery = await waitFor(() => target.withPayload('alice')[0], "alice's event", 30_000);
      expectNotEarly(delivery, dueAt);
      await sentinelAfter(shared, target, bobsDueAt);
      expect(target.withPayload('alice')).toHaveLength(1);
      expect(target.withPayload('bob')).toHaveLength(0);
    } finally {
      await stop();
    }
  });
});

describe('reschedule', () => {
  it.each([
    ['from the far path to the near path', 14_000, 6_000],
    ['within the far path', 14_000, 18_000],
  ])('moves an event %s: emitted once, at the new time, as a new version', async (_case, firstInMs, newInMs) => {
    const { acme, target, records, stop } = await setup();
    try {
      const start = Date.now();
      const snsMessageId = await acme.publish(request(target.topicArn, start + firstInMs, 'moved'));
      const newDueAt = start + newInMs;
      const { id } = await waitFor(() => firstIn(records, EVENT_STATE.scheduled), 'the event');
      expect(id).toBe(`m-${snsMessageId}`);
      await acme.publish({ action: 'reschedule', event_id: id, date: new Date(newDueAt).toISOString() });

      const delivery = await waitFor(() => target.withPayload('moved')[0], 'the emission', 30_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      expect(delivery.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(id);
      // The emitter records the end after the publish.
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({
        version: 2,
        dueAt: newDueAt,
      });

      await sentinelAfter(acme, target, Math.max(start + firstInMs, newDueAt));
      expect(target.withPayload('moved')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('sends a rescheduled event again when its send to the delay queue failed: emitted once, at the new time', async () => {
    let failed = false;
    const { acme, target, records, stop } = await setup({
      instrumentClients: (clients) =>
        clients.sqs.middlewareStack.add(
          (next, context) => async (args) => {
            const input = args.input as Partial<SendMessageBatchCommandInput>;
            const moved = (input.Entries ?? []).some((entry) => {
              const message = decodeDelayQueueMessage(entry.MessageBody ?? '');
              return message.kind === 'event' && message.event.payload === 'moved' && message.event.version === 2;
            });
            if (failed || context.commandName !== 'SendMessageBatchCommand' || !input.QueueUrl?.endsWith('-delay') || !moved)
              return next(args);
            failed = true;
            throw Object.assign(new Error('SQS unavailable'), { name: 'ServiceUnavailable' });
          },
          { step: 'initialize', name: 'failFirstSendOfReschedule' },
        ),
    });
    try {
      const start = Date.now();
      const snsMessageId = await acme.publish(request(target.topicArn, start + 30_000, 'moved'));
      const id = `m-${snsMessageId}`;
      await waitFor(() => inState(records, id, EVENT_STATE.scheduled), 'the event');
      // Due after the input message's redelivery (the visibility timeout, 3 s here), in the near path.
      const newDueAt = Date.now() + 8_000;
      await acme.publish({ action: 'reschedule', event_id: id, date: new Date(newDueAt).toISOString() });
      await waitFor(() => failed, 'the failed send');

      const delivery = await waitFor(() => target.withPayload('moved')[0], 'the emission', 30_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 2 });
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('moved')).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});

describe('reschedule of an event whose payload only its delay-queue copy holds (near path)', () => {
  /**
   * A wider near-path window than the other tests': an event due in 15 s goes to the delay queue,
   * and its reschedule has 11 s to land before the cutoff, however busy the machine.
   */
  const WINDOW_MS = 20_000;
  const setupNear = (options: Parameters<typeof setup>[0] = {}) => setup(options, WINDOW_MS);

  /** Schedules a near-path event due in `inMs`, and reschedules it to `newInMs` from the same start; waits for the reschedule. */
  async function movedNear(context: Awaited<ReturnType<typeof setup>>, payload: string, inMs: number, newInMs: number) {
    const { acme, target, records } = context;
    const start = Date.now();
    const dueAt = start + inMs;
    const newDueAt = start + newInMs;
    const id = `m-${await acme.publish(request(target.topicArn, dueAt, payload))}`;
    await waitFor(() => inState(records, id, EVENT_STATE.queued), 'the event');
    const messageId = await acme.publish({ action: 'reschedule', event_id: id, date: new Date(newDueAt).toISOString() });
    const moved = await waitFor(async () => {
      const record = await records.get(id);
      return record?.version === 2 && record;
    }, 'the reschedule');
    expect(moved).toMatchObject({ state: EVENT_STATE.queued, dueAt: newDueAt, payloadKept: 'queue', carriedBy: moved.queuedBy });
    return { id, dueAt, newDueAt, messageId };
  }

  it('moved later within the window: its copy carried on to a new one, emitted once at the new time, never early', async () => {
    const context = await setupNear();
    const { acme, target, records, lines, stop } = context;
    try {
      const { id, newDueAt } = await movedNear(context, 'later', 15_000, 25_000);
      const delivery = await waitFor(() => target.withPayload('later')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 2 });
      expect(lines.filter((line) => line.msg === 'rescheduled event carried on' && line.eventId === id)).toMatchObject([{ to: 'queue' }]);
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('later')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('moved far beyond the window: its payload carried into the table, and the loader sends it at the new time', async () => {
    const context = await setupNear();
    const { acme, target, records, stop } = context;
    try {
      const { id, newDueAt } = await movedNear(context, 'far', 15_000, 45_000);
      const stored = await waitFor(() => inState(records, id, EVENT_STATE.scheduled), 'the payload carried into the table');
      expect(stored).toMatchObject({ version: 2, payloadKept: 'record', payload: 'far', carriedBy: undefined });
      const delivery = await waitFor(() => target.withPayload('far')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 2 });
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('far')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('moved twice before its copy arrives: emitted once, at the last time, as the last version', async () => {
    const context = await setupNear();
    const { acme, target, records, stop } = context;
    try {
      const { id, dueAt } = await movedNear(context, 'twice', 15_000, 25_000);
      const lastDueAt = dueAt + 14_000;
      await acme.publish({ action: 'reschedule', event_id: id, date: new Date(lastDueAt).toISOString() });
      const again = await waitFor(async () => {
        const record = await records.get(id);
        return record?.version === 3 && record;
      }, 'the second reschedule');
      // Still the first copy's to carry: the only one that holds the payload.
      expect(again.carriedBy).toBe(again.queuedBy);

      const delivery = await waitFor(() => target.withPayload('twice')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(lastDueAt);
      expectNotEarly(delivery, lastDueAt);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 3 });
      await sentinelAfter(acme, target, lastDueAt);
      expect(target.withPayload('twice')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('a failure between sending the new copy and recording it: carried again, the first new copy dropped, emitted once', async () => {
    let failed = false;
    const context = await setupNear({
      instrumentClients: (clients) =>
        clients.dynamodb.middlewareStack.add(
          (next) => async (args) => {
            if (failed || !JSON.stringify(args.input).includes('REMOVE carriedBy')) return next(args);
            failed = true;
            throw Object.assign(new Error('DynamoDB unavailable'), { name: 'ServiceUnavailable' });
          },
          { step: 'initialize', name: 'failFirstCarryRecord' },
        ),
    });
    const { acme, target, records, lines, stop } = context;
    try {
      const { id, newDueAt } = await movedNear(context, 'crash', 15_000, 25_000);
      await waitFor(() => failed, 'the failed record of the carry');
      const delivery = await waitFor(() => target.withPayload('crash')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 2 });
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('crash')).toHaveLength(1);
      // The copy sent before the failure reached the emitter, and was dropped.
      expect(
        lines.some(
          (line) => line.eventId === id && line.version === 2 && String(line.msg).startsWith('cancelled, rescheduled or sent again'),
        ),
      ).toBe(true);
    } finally {
      await stop();
    }
  });

  it('drops a reschedule published before the one already applied', async () => {
    const context = await setupNear();
    const { acme, target, records, lines, stop } = context;
    try {
      const before = Date.now();
      const { id, newDueAt } = await movedNear(context, 'ordered', 15_000, 27_000);
      // Published before the one applied, and arriving after it.
      const older = { action: 'reschedule', event_id: id, date: new Date(newDueAt - 3_000).toISOString() };
      await acme.redeliver(older, '00000000-0000-0000-0000-00000000000a', before);
      await waitFor(
        () => lines.some((line) => line.eventId === id && line.msg === 'reschedule superseded by one published later; dropped'),
        'the older reschedule dropped',
      );
      expect(await records.get(id)).toMatchObject({ version: 2, dueAt: newDueAt });

      const delivery = await waitFor(() => target.withPayload('ordered')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('ordered')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('moved earlier than its copy: emitted when the copy arrives, at its old due time, late', async () => {
    const context = await setupNear();
    const { acme, target, records, stop } = context;
    try {
      const { id, dueAt, newDueAt } = await movedNear(context, 'earlier', 15_000, 7_000);
      const delivery = await waitFor(() => target.withPayload('earlier')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      // The copy reaches the emitter at most its lead (1.3 s by default) and a second before its due time.
      expect(delivery.receivedAt).toBeGreaterThanOrEqual(dueAt - 2_300);
      expect(delivery.receivedAt).toBeGreaterThan(newDueAt + 1_000);
      expect(await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded')).toMatchObject({ version: 2 });
      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('earlier')).toHaveLength(1);
    } finally {
      await stop();
    }
  });
});
