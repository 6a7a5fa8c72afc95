import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_STATE, type EventState } from '@adhoc-scheduler/shared';
import { expectNotEarly, request, waitFor } from './kit.js';
import { KillableService, KilledServiceTarget } from './killed-service.js';

/**
 * A window long enough for the near event to wait out a restart in the delay queue, and a
 * lookahead long enough for the far one to wait out another there after the loader took it.
 */
const TIMINGS = { SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '30', SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '10' };

let service: KillableService | undefined;
afterEach(async () => {
  await service?.dispose();
});

describe('the local service killed with SIGKILL', () => {
  it('loses no scheduled event, and publishes none twice, when killed with the events stored and queued, and again with the stored one taken by the loader', async () => {
    service = await KillableService.create('kill-restart');
    const running = service;
    await running.start({ env: TIMINGS });
    const target = await KilledServiceTarget.create(running, 'target');
    const state = async (id: string): Promise<EventState | undefined> => (await running.records().get(id))?.state;
    const publish = (dueAt: number, payload: string) => running.schedule(request(target.topicArn, dueAt, payload));
    try {
      const windowMs = running.outputs.nearPathWindowSeconds * 1000;
      // Due after the first restart: one on the near path, one stored beyond the window for the loader.
      const nearDue = Date.now() + 15_000;
      const farDue = Date.now() + windowMs + 5_000;
      const near = await publish(nearDue, 'near');
      const far = await publish(farDue, 'far');

      // Kill 1: ingest is done with both. The near event waits in the delay queue, the far one in
      // the table, and no input message is left to deliver either again.
      await waitFor(
        async () => (await state(near)) === EVENT_STATE.queued && (await state(far)) === EVENT_STATE.scheduled,
        'both recorded',
      );
      await waitFor(async () => (await running.depth(running.outputs.delayQueueUrl)).delayed === 1, 'the near event in the delay queue');
      await waitFor(async () => {
        const ingest = await running.depth(running.outputs.publicIngestQueueUrl);
        return ingest.visible + ingest.inFlight === 0;
      }, 'ingest done with both inputs');
      await running.kill();

      // Kill 2: the near event delivered and ended, the far one taken by the loader and waiting
      // in the delay queue, and nothing of the target's in flight.
      await running.start({ env: TIMINGS });
      target.read(running);
      await waitFor(() => target.withPayload('near').length > 0, 'the near event', 30_000);
      await waitFor(async () => (await state(near)) === EVENT_STATE.emitted, 'its end recorded');
      await waitFor(async () => (await state(far)) === EVENT_STATE.queued, 'the far event taken by the loader', 30_000);
      await waitFor(async () => (await running.depth(running.outputs.delayQueueUrl)).delayed === 1, 'the far event in the delay queue');
      expect(Date.now()).toBeLessThan(farDue);
      await waitFor(async () => (await running.depth(target.queueUrl)).inFlight === 0, "the target's deliveries read");
      await running.kill();

      await running.start({ env: TIMINGS });
      target.read(running);
      await waitFor(() => target.withPayload('far').length > 0, 'the far event', 30_000);
      await waitFor(async () => (await state(far)) === EVENT_STATE.emitted, 'its end recorded');
      // A sentinel published after both: what arrived by then is all that arrives.
      await publish(Date.now() + 1_000, 'sentinel');
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');

      expect(target.deliveries.map((delivery) => delivery.body).sort()).toEqual(['far', 'near', 'sentinel']);
      expectNotEarly(target.withPayload('near')[0], nearDue);
      expectNotEarly(target.withPayload('far')[0], farDue);
    } finally {
      await target.stop();
    }
  }, 150_000);
});
