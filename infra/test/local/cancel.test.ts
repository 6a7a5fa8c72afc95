import { describe, expect, it } from 'vitest';
import { EVENT_STATE, eventIdFor, PUBLIC_TENANT_ID, REASON } from '@adhoc-scheduler/shared';
import { expectNotEarly, request, waitFor } from './kit.js';
import { NEAR_PATH_WINDOW_MS, inState, sentinelAfter, startTwoTenants } from './changes-kit.js';

describe.concurrent('cancel', () => {
  it.each([
    ['near path (in the delay queue)', 8_000],
    ['far path (stored for the loader)', 14_000],
  ])('stops an event on the %s, and records when', async (_path, inMs) => {
    const { acme, target, records, stop } = await startTwoTenants();
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
    const { acme, globex, target, failures, stop } = await startTwoTenants();
    try {
      const dueAt = Date.now() + 6_000;
      const snsMessageId = await acme.publish(request(target.topicArn, dueAt, 'mine'));
      await globex.publish({ action: 'cancel', event_id: `m-${snsMessageId}`, failure_topic: failures.topicArn });
      await globex.publish({ action: 'cancel', event_id: 'm-00000000-0000-0000-0000-000000000000', failure_topic: failures.topicArn });
      await waitFor(() => failures.notices().length === 2, 'both refusals');
      expect(failures.notices().map((notice) => notice.reason)).toEqual([REASON.EVENT_NOT_FOUND, REASON.EVENT_NOT_FOUND]);
      expect(failures.notices()[0]).toMatchObject({ details: { field: 'event_id' } });

      await waitFor(() => target.withPayload('mine').length > 0, "acme's event");
      await sentinelAfter(acme, target, dueAt);
      expect(target.withPayload('mine')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('refuses an event already emitted, and is silent when its own cancel is delivered again', async () => {
    const { acme, target, failures, records, stop } = await startTwoTenants();
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
    const { acme, target, failures, records, stop } = await startTwoTenants();
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
    const { acme, target, failures, records, stop } = await startTwoTenants({
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

describe.concurrent('on the shared input topic', () => {
  it("names an event only by the m- id of its publish: ids anyone can compute from a user reach nobody's event", async () => {
    const { shared, target, failures, records, stop } = await startTwoTenants();
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
