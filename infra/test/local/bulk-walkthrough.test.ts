import { describe, expect, it } from 'vitest';
import { EVENT_STATE } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT } from '../../src/local/runtime.js';
import { admin } from './admin-run.js';
import {
  expectNotEarly,
  FAST_TIMINGS,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();

/** A wider near-path window than FAST_TIMINGS': a near-path event due in 12 s leaves its reschedule 8 s before the change cutoff. */
const NEAR_PATH_WINDOW_SECONDS = 20;

interface Listed {
  readonly events: { readonly id: string; readonly state: string; readonly labels?: readonly string[] }[];
  readonly next: string | null;
}

describe('a tenant’s events by label, as the operators’ page walks through them', () => {
  it('lists the 20 events labelled order-7, cancels exactly those with one control request, and delivers a near-path event rescheduled by id once, at its new time', async () => {
    const service = await startServiceWithFiles(emulators, {
      env: { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: String(NEAR_PATH_WINDOW_SECONDS) },
    });
    const { scheduler, where } = service;
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    let acme: SchedulerClient | undefined;
    const events = async (...args: string[]): Promise<Listed> => {
      const run = await admin('events', '--tenant', 'acme', ...args, '--json', ...where);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Listed;
    };
    try {
      // As the operators' page registers it: the local account is acme's.
      const added = await admin('tenant', 'add', 'acme', '--account', LOCAL_ACCOUNT, ...where);
      expect(added.code, added.stderr).toBe(0);
      acme = new SchedulerClient(scheduler, added.stdout);

      // Stored for the loader (due beyond the window): 20 labelled order-7, 5 order-8, 5 without a label.
      const farDueAt = Date.now() + 120_000;
      const far = [
        ...Array.from({ length: 20 }, (_, i) => request(target.topicArn, farDueAt + i, `order-7-${i}`, { labels: ['order-7'] })),
        ...Array.from({ length: 5 }, (_, i) => request(target.topicArn, farDueAt + i, `order-8-${i}`, { labels: ['order-8'] })),
        ...Array.from({ length: 5 }, (_, i) => request(target.topicArn, farDueAt + i, `plain-${i}`)),
      ];
      for (let first = 0; first < far.length; first += 10) await acme.publishBatch(far.slice(first, first + 10));

      const labelled = await waitFor(async () => {
        const listed = await events('--label', 'order-7');
        return listed.events.length === 20 && listed;
      }, 'the 20 events labelled order-7 listed');
      expect(labelled.next).toBeNull();
      expect(labelled.events.every((event) => event.state === EVENT_STATE.scheduled && event.labels?.includes('order-7'))).toBe(true);

      await acme.publish({ action: 'cancel', label: 'order-7' });
      const cancelled = await waitFor(async () => {
        const listed = await events('--label', 'order-7', '--state', 'cancelled', '--limit', '100');
        return listed.events.length === 20 && listed;
      }, 'the 20 cancelled');
      expect(new Set(cancelled.events.map(({ id }) => id))).toEqual(new Set(labelled.events.map(({ id }) => id)));
      expect((await events('--label', 'order-7')).events).toEqual([]);
      // The others are still scheduled: the 5 labelled order-8 and the 5 without a label.
      const open = await events('--limit', '100');
      expect(open.events.map(({ state }) => state)).toEqual(Array.from({ length: 10 }, () => EVENT_STATE.scheduled));
      expect(open.events.filter((event) => event.labels?.includes('order-8'))).toHaveLength(5);

      // A near-path event (its payload only in the delay queue), rescheduled by its id.
      const start = Date.now();
      const id = `m-${await acme.publish(request(target.topicArn, start + 12_000, 'moved'))}`;
      await waitFor(
        async () => (await admin('event', 'show', id, ...where)).stdout.match(/^state +queued$/m),
        'the near-path event queued',
      );
      const newDueAt = start + 16_000;
      await acme.publish({ action: 'reschedule', event_id: id, date: new Date(newDueAt).toISOString() });
      const delivery = await waitFor(() => target.withPayload('moved')[0], 'the rescheduled event delivered', 40_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expectNotEarly(delivery, newDueAt);
      // Once: a sentinel due after it arrives, and still one delivery.
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel', 30_000);
      expect(target.withPayload('moved')).toHaveLength(1);
      expect(target.deliveries.filter((each) => each.body.startsWith('order-'))).toEqual([]);
    } finally {
      acme?.destroy();
      await target.stop();
      await service.stop();
    }
  });
});
