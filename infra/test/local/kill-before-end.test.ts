import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_STATE } from '@adhoc-scheduler/shared';
import { expectNotEarly, publishedAt, request, waitFor } from './kit.js';
import { KillableService, KilledServiceTarget } from './killed-service.js';

/** The local service whose end writes never answer (held-ends-service.ts). */
const HELD_ENDS_SERVICE = resolve(import.meta.dirname, 'held-ends-service.ts');

let service: KillableService | undefined;
afterEach(async () => {
  await service?.dispose();
});

describe('the emitter killed with SIGKILL between a publish and the record of its end', () => {
  it('publishes the event again after a restart: late, twice, never lost', async () => {
    service = await KillableService.create('kill-before-end');
    const running = service;
    await running.start({ entry: HELD_ENDS_SERVICE });
    const target = await KilledServiceTarget.create(running, 'target');
    try {
      const dueAt = Date.now() + 3_000;
      const id = await running.schedule(request(target.topicArn, dueAt, 'killed before its end'));
      await waitFor(() => target.withPayload('killed before its end').length > 0, 'the publish');
      // Published, and its end not written: the record is still open, its delay-queue message
      // still in the emitter's hands, and the target's copy read.
      expect((await running.records().get(id))?.state).toBe(EVENT_STATE.queued);
      expect((await running.depth(running.outputs.delayQueueUrl)).inFlight).toBe(1);
      await waitFor(async () => (await running.depth(target.queueUrl)).inFlight === 0, "the target's delivery read");
      await running.kill();
      const killedAt = Date.now();

      // scripts/start's service on the same data: the message comes back once its visibility
      // timeout has passed, finds no end recorded, and is published again.
      await running.start();
      target.read(running);
      await waitFor(() => target.withPayload('killed before its end').length === 2, 'the second publish', 60_000);
      await waitFor(async () => (await running.records().get(id))?.state === EVENT_STATE.emitted, 'the end recorded');
      await running.schedule(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');

      const [first, second] = target.withPayload('killed before its end');
      expect(target.withPayload('killed before its end')).toHaveLength(2);
      expectNotEarly(first, dueAt);
      expectNotEarly(second, dueAt);
      expect(publishedAt(second)).toBeGreaterThan(killedAt);
    } finally {
      await target.stop();
    }
  }, 150_000);
});
