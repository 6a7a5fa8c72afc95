import { describe, expect, it } from 'vitest';
import { EVENT_STATE } from '@adhoc-scheduler/shared';
import { expectNotEarly, scheduledAt, waitFor } from './kit.js';
import { inState, movedNear, sentinelAfter, startForCarry } from './changes-kit.js';
import { shownSteps } from './shown-steps.js';

/** The steps `event show` prints first for a near-path event rescheduled by `messageId`. */
const rescheduledNear = (messageId: string) => ['created by ingest', 'queued by ingest', `rescheduled by input message ${messageId}`];

describe.concurrent('reschedule of an event whose payload only its delay-queue copy holds (near path)', () => {
  it('moved later within the window: its copy carried on to a new one, emitted once at the new time, never early', async () => {
    const context = await startForCarry();
    const { acme, target, records, lines, stop } = context;
    try {
      const { id, newDueAt, messageId } = await movedNear(context, 'later', 15_000, 25_000);
      const delivery = await waitFor(() => target.withPayload('later')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      const emitted = await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded');
      expect(emitted).toMatchObject({ version: 2 });
      // Its first queueing kept, the carry's its own, each named.
      expect(shownSteps(emitted)).toEqual([...rescheduledNear(messageId), 'queued by the emitter carry', 'emitted by the emitter']);
      expect(lines.filter((line) => line.msg === 'rescheduled event carried on' && line.eventId === id)).toMatchObject([{ to: 'queue' }]);
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('later')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('moved far beyond the window: its payload carried into the table, and the loader sends it at the new time', async () => {
    const context = await startForCarry();
    const { acme, target, records, stop } = context;
    try {
      const { id, newDueAt, messageId } = await movedNear(context, 'far', 15_000, 45_000);
      const stored = await waitFor(() => inState(records, id, EVENT_STATE.scheduled), 'the payload carried into the table');
      expect(stored).toMatchObject({ version: 2, payloadKept: 'record', payload: 'far', carriedBy: undefined });
      const delivery = await waitFor(() => target.withPayload('far')[0], 'the emission', 60_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      const emitted = await waitFor(() => inState(records, id, EVENT_STATE.emitted), 'the emission recorded');
      expect(emitted).toMatchObject({ version: 2 });
      expect(shownSteps(emitted)).toEqual([
        ...rescheduledNear(messageId),
        'scheduled by the emitter carry',
        'queued by the loader',
        'emitted by the emitter',
      ]);
      await sentinelAfter(acme, target, newDueAt);
      expect(target.withPayload('far')).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('moved earlier than its copy: emitted when the copy arrives, at its old due time, late', async () => {
    const context = await startForCarry();
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
