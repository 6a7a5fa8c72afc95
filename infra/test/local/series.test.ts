import { describe, expect, it } from 'vitest';
import {
  EMISSION_ATTRIBUTE,
  labelEntryId,
  messageEventId,
  occurrenceId,
  REASON,
  seriesId,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, type LocalScheduler } from '../../src/local/runtime.js';
import {
  expectNotEarly,
  FAST_TIMINGS,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  storedItem,
  TopicConsumer,
  waitFor,
} from './kit.js';

// Recurring series through the local service: occurrences materialised at ingest and by the
// loader, each delivered to the millisecond with its series' attributes, a cancel that stops the
// series, and a refusal of an invalid expression on the failure topic.

const emulators = sharedEmulators();

const MINUTE = 60_000;

/**
 * Acme's topics are the local account's: its series are published on its own input topic, where
 * a cancel by label is taken (the public tenant may then target none of them).
 */
const TENANTS: TenantsDocument = { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] };

/** A near-path window of 20 s: a first occurrence 12 s ahead is materialised at ingest, and cancelled well before the cutoff. */
const CANCEL_TIMINGS = { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '20', SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '18' };

async function setup(env: Record<string, string> = FAST_TIMINGS, tenants?: TenantsDocument) {
  const scheduler = await startTestScheduler(emulators, { env, ...(tenants === undefined ? {} : { tenants }) });
  const client = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'series-target');
  return {
    scheduler,
    client,
    target,
    async stop() {
      await target.stop();
      client.destroy();
      await scheduler.stop();
    },
  };
}

/** A series request of the public tenant's (no date). */
function seriesRequest(target: string, payload: string, fields: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, ...rest } = request(target, 0, payload, fields);
  return rest;
}

/**
 * A minute series whose first occurrence is 12 s away, published by `client`, once ingest has
 * materialised that occurrence (within CANCEL_TIMINGS' window of 20 s, well before the cutoff).
 */
async function publishSeriesDueSoon(
  scheduler: LocalScheduler,
  client: SchedulerClient,
  target: string,
  payload: string,
  fields: Record<string, unknown> = {},
) {
  const firstDue = Date.now() + 12_000;
  const messageId = await client.publish(
    seriesRequest(target, payload, {
      schedule: 'rate(1 minute)',
      start: new Date(firstDue).toISOString(),
      offset: firstDue % MINUTE,
      ...fields,
    }),
  );
  const series = seriesId(messageEventId(messageId));
  const occurrence = occurrenceId(series, firstDue);
  await waitFor(async () => (await storedItem(scheduler, occurrence))?.state === 'queued', 'the first occurrence, materialised at ingest');
  return { firstDue, series, occurrence };
}

describe.concurrent('recurring series', () => {
  it('delivers each occurrence of a minute series with an offset of 250 ms at or after its :00.250, once, with its series attributes; those beyond the near-path window through the loader', async () => {
    // A near-path window of 6 s: ingest materialises at most the first occurrence, the loader the others.
    const { scheduler, client, target, stop } = await setup();
    try {
      const messageId = await client.publish(
        seriesRequest(target.topicArn, 'every minute', { schedule: 'cron(* * * * ? *)', offset: 250 }),
      );
      const series = seriesId(messageEventId(messageId));
      const deliveries = await waitFor(
        () => (target.withPayload('every minute').length >= 2 ? target.withPayload('every minute') : undefined),
        'two occurrences',
        150_000,
      );
      const [first, second] = deliveries;
      for (const delivery of [first, second]) {
        expectNotEarly(delivery);
        if (delivery === undefined) continue;
        expect(scheduledAt(delivery) % MINUTE).toBe(250);
        expect(delivery.attributes[EMISSION_ATTRIBUTE.seriesId]).toBe(series);
        expect(delivery.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(occurrenceId(series, scheduledAt(delivery)));
      }
      if (first === undefined || second === undefined) throw new Error('two deliveries');
      expect(scheduledAt(second) - scheduledAt(first)).toBe(MINUTE);
      const numbers = [first, second].map((delivery) => Number(delivery.attributes[EMISSION_ATTRIBUTE.occurrence]));
      expect(numbers[1]).toBe((numbers[0] ?? 0) + 1);
      // Taken by ingest and then by loading at least once: each take advanced its version.
      const stored = await storedItem(scheduler, series);
      expect(stored).toMatchObject({ kind: 'series', seriesState: 'active' });
      expect(Number(stored?.version)).toBeGreaterThanOrEqual(3);
      // Once each: a later delivery of the same occurrence would be a duplicate.
      const ids = target.withPayload('every minute').map((delivery) => delivery.attributes[EMISSION_ATTRIBUTE.eventId]);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await stop();
    }
  }, 180_000);

  it('stops a series cancelled by its s- event id: its materialised occurrence is cancelled, and nothing is delivered', async () => {
    const { scheduler, client, target, stop } = await setup(CANCEL_TIMINGS);
    try {
      const { firstDue, series, occurrence } = await publishSeriesDueSoon(scheduler, client, target.topicArn, 'cancelled series');
      await client.publish({ action: 'cancel', event_id: series, user: 'tests' });
      await waitFor(async () => (await storedItem(scheduler, series))?.seriesState === 'cancelled', 'the series cancelled');
      expect(await storedItem(scheduler, occurrence)).toMatchObject({ state: 'cancelled' });
      // A marker due after the occurrence: once it arrives, the occurrence would have.
      await client.publish(request(target.topicArn, firstDue + 2_000, 'marker'));
      await waitFor(() => target.withPayload('marker').length === 1, 'the marker', 30_000);
      expect(target.withPayload('cancelled series')).toEqual([]);
      const stored = await storedItem(scheduler, series);
      expect(stored?.tenantShard, 'out of the tenant index: the loader finds it no more').toBeUndefined();
    } finally {
      await stop();
    }
  }, 60_000);

  it('stops a series a cancel by label reaches, as a cancel by its id does, and counts it once and its materialised occurrence once', async () => {
    const { scheduler, target, stop } = await setup(CANCEL_TIMINGS, TENANTS);
    const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'series-label-failures');
    try {
      const { firstDue, series, occurrence } = await publishSeriesDueSoon(scheduler, acme, target.topicArn, 'labelled series', {
        labels: ['campaign-9'],
      });
      await acme.publish({ action: 'cancel', label: 'campaign-9', failure_topic: failures.topicArn });
      const done = () => failures.notices().filter((notice) => notice.reason === REASON.BULK_CANCEL_DONE);
      await waitFor(() => done().length > 0, 'the counts on the failure topic');
      expect(done()).toMatchObject([{ details: { label: 'campaign-9', cancelled: 2, refused: { ended: 0, emitting: 0 } } }]);
      expect(await storedItem(scheduler, series)).toMatchObject({ seriesState: 'cancelled', cancelledBy: expect.stringMatching(/^b-/) });
      expect(
        await storedItem(scheduler, labelEntryId(series, 'campaign-9')),
        'its label entry goes with it: nothing left to reach',
      ).toBeUndefined();
      expect(await storedItem(scheduler, occurrence)).toMatchObject({ state: 'cancelled' });
      // A marker due after the occurrence: once it arrives, the occurrence would have.
      await acme.publish(request(target.topicArn, firstDue + 2_000, 'marker'));
      await waitFor(() => target.withPayload('marker').length === 1, 'the marker', 30_000);
      expect(target.withPayload('labelled series')).toEqual([]);
    } finally {
      acme.destroy();
      await failures.stop();
      await stop();
    }
  }, 60_000);

  it('refuses an invalid expression at ingest, with its reason code on the failure topic', async () => {
    const { scheduler, client, target, stop } = await setup();
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'series-failures');
    try {
      await client.publish(seriesRequest(target.topicArn, 'never', { schedule: 'cron(0 9 * * * *)', failure_topic: failures.topicArn }));
      const [notice] = await waitFor(() => (failures.deliveries.length > 0 ? failures.notices() : undefined), 'the notice');
      expect(notice).toMatchObject({ reason: REASON.INVALID_SCHEDULE_EXPRESSION });
      expect(notice?.event).toMatchObject({ schedule: 'cron(0 9 * * * *)' });
    } finally {
      await failures.stop();
      await stop();
    }
  });
});
