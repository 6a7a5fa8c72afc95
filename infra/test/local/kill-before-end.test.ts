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
  it('without its journal of ends, publishes the event again after a restart: late, twice, never lost', async () => {
    service = await KillableService.create('kill-before-end');
    const running = service;
    await running.start({ entry: HELD_ENDS_SERVICE, args: ['--no-end-journal'] });
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

  it('with its journal (scripts/start on disk), lets the message go once the journal has the end, and the next process records it: published once', async () => {
    service = await KillableService.create('kill-after-journal');
    const running = service;
    await running.start({ entry: HELD_ENDS_SERVICE });
    const target = await KilledServiceTarget.create(running, 'target');
    try {
      const dueAt = Date.now() + 3_000;
      const id = await running.schedule(request(target.topicArn, dueAt, 'journaled before the kill'));
      await waitFor(() => target.withPayload('journaled before the kill').length > 0, 'the publish');
      // Its end not written (the table never answers this service), but in the journal: the
      // delay-queue message is let go.
      await waitFor(async () => (await running.depth(running.outputs.delayQueueUrl)).inFlight === 0, 'the message let go');
      expect((await running.records().get(id))?.state).toBe(EVENT_STATE.queued);
      await running.kill();

      // The next process records the journal's end before anything polls: its message, visible
      // again once its visibility timeout passes, then finds the event ended.
      await running.start();
      expect((await running.records().get(id))?.state).toBe(EVENT_STATE.emitted);
      target.read(running);
      // Past the visibility timeout and a loader sweep's first look, then a sentinel: nothing published again.
      await running.schedule(request(target.topicArn, Date.now() + 12_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel', 60_000);
      expect(target.withPayload('journaled before the kill')).toHaveLength(1);
      expectNotEarly(target.withPayload('journaled before the kill')[0], dueAt);
    } finally {
      await target.stop();
    }
  }, 150_000);
});
