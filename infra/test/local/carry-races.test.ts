import { describe, expect, it } from 'vitest';
import { EVENT_STATE } from '@adhoc-scheduler/shared';
import { expectNotEarly, scheduledAt, waitFor } from './kit.js';
import { inState, movedNear, sentinelAfter, startForCarry } from './changes-kit.js';

describe.concurrent('reschedule of a near-path event racing its copy: moved twice, a crash mid-carry, reschedules out of order', () => {
  it('moved twice before its copy arrives: emitted once, at the last time, as the last version', async () => {
    const context = await startForCarry();
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
    const context = await startForCarry({
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
    const context = await startForCarry();
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
});
