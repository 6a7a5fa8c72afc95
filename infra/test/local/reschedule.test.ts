import { describe, expect, it } from 'vitest';
import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { decodeDelayQueueMessage, EMISSION_ATTRIBUTE, EVENT_STATE } from '@adhoc-scheduler/shared';
import { expectNotEarly, request, scheduledAt, waitFor } from './kit.js';
import { firstIn, inState, sentinelAfter, startTwoTenants } from './changes-kit.js';

describe.concurrent('reschedule', () => {
  it.each([
    ['from the far path to the near path', 14_000, 6_000],
    ['within the far path', 14_000, 18_000],
  ])('moves an event %s: emitted once, at the new time, as a new version', async (_case, firstInMs, newInMs) => {
    const { acme, target, records, stop } = await startTwoTenants();
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
    const { acme, target, records, stop } = await startTwoTenants({
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
