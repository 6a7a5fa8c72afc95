import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_STATE } from '@adhoc-scheduler/shared';
import { expectNotEarly, publishedAt, request, waitFor } from './kit.js';
import { KillableService, KilledServiceTarget } from './killed-service.js';

/** The lateness a kill may cost an event at most (the hot path's target after a kill -9). */
const MAX_LATENESS_AFTER_KILL_MS = 35_000;
/**
 * How soon after the restarted service is ready the events it held come back and are published:
 * the local queues' short visibility timeout (10 s), counted from before the kill, and a margin.
 * With the 30 s timeout held for the whole of a batch, they came back about 20 s after the restart.
 */
const BACK_AFTER_RESTART_MS = 15_000;
const EVENTS = 20;
/**
 * The emitter's longest lead, so that it holds the events for seconds before they are due: time
 * to kill the service while it does, on a busy machine too (the cutoff and the window follow).
 */
const TIMINGS = {
  SCHEDULER_EMITTER_LEAD_MS: '5000',
  SCHEDULER_CHANGE_CUTOFF_SECONDS: '10',
  SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '30',
};

let service: KillableService | undefined;
afterEach(async () => {
  await service?.dispose();
});

describe('the local service killed with SIGKILL while the emitter holds events until they are due', () => {
  it('publishes each of them once after the restart, never early, and soon: at most 35 s late', async () => {
    service = await KillableService.create('kill-in-flight');
    const running = service;
    await running.start({ env: TIMINGS });
    const target = await KilledServiceTarget.create(running, 'target');
    try {
      const dueAt = Date.now() + 10_000;
      const payloads = Array.from({ length: EVENTS }, (_, index) => `held ${index}`);
      const ids = await Promise.all(payloads.map((payload) => running.schedule(request(target.topicArn, dueAt, payload))));
      // Every copy received by the emitter, waiting for its due time: held, none published.
      await waitFor(
        async () => (await running.depth(running.outputs.delayQueueUrl)).inFlight === EVENTS,
        'the copies in the emitter’s hands',
      );
      expect(Date.now()).toBeLessThan(dueAt);
      await running.kill();
      expect(target.deliveries).toHaveLength(0);

      await running.start({ env: TIMINGS });
      const readyAt = Date.now();
      target.read(running);
      await waitFor(() => payloads.every((payload) => target.withPayload(payload).length > 0), 'every held event', 60_000);
      await waitFor(async () => {
        const records = await running.records().get(ids[EVENTS - 1] ?? '');
        return records?.state === EVENT_STATE.emitted;
      }, 'the ends recorded');
      await running.schedule(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');

      for (const payload of payloads) {
        // Killed before any was due, so none was published before the kill: each once.
        const deliveries = target.withPayload(payload);
        expect(deliveries, payload).toHaveLength(1);
        const [delivery] = deliveries;
        expectNotEarly(delivery, dueAt);
        expect(publishedAt(delivery) - dueAt, `${payload}: lateness`).toBeLessThanOrEqual(MAX_LATENESS_AFTER_KILL_MS);
        expect(publishedAt(delivery) - readyAt, `${payload}: published after the restart`).toBeLessThanOrEqual(BACK_AFTER_RESTART_MS);
      }
    } finally {
      await target.stop();
    }
  }, 150_000);
});
