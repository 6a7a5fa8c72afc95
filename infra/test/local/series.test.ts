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
// series, a pause and resume of one series, the replacement of its
// payload or expression, and a refusal of an invalid expression on the failure topic.

const emulators = sharedEmulators();

const MINUTE = 60_000;

/**
 * Acme's topics are the local account's: its series are published on its own input topic, where
 * a cancel by label is taken (the public tenant may then target none of them).
 */
const TENANTS: TenantsDocument = { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] };

/** A near-path window of 20 s: a first occurrence 12 s ahead is materialised at ingest, and cancelled well before the cutoff. */
const CANCEL_TIMINGS = { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '20', SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '18' };

/**
 * A near-path window of 40 s, for the changes of a series: a first occurrence 30 s ahead (CHANGE_LEAD_MS) is materialised at
 * ingest and stays clear of the cutoff while the change arrives, on a machine busy with other tests.
 */
const CHANGE_TIMINGS = { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '40', SCHEDULER_LOADER_LOOKAHEAD_SECONDS: '38' };
const CHANGE_LEAD_MS = 30_000;

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

/** The deliveries of `payload` a consumer has had, once it has had one (for waitFor). */
function deliveredWith(target: TopicConsumer, payload: string) {
  return () => (target.withPayload(payload).length > 0 ? target.withPayload(payload) : undefined);
}

/**
 * A minute series whose first occurrence is `leadMs` away (12 s by default), published by
 * `client`, once ingest has materialised that occurrence (within CANCEL_TIMINGS' window of 20 s,
 * or CHANGE_TIMINGS', well before the cutoff).
 */
async function publishSeriesDueSoon(
  scheduler: LocalScheduler,
  client: SchedulerClient,
  target: string,
  payload: string,
  fields: Record<string, unknown> = {},
  leadMs = 12_000,
) {
  const firstDue = Date.now() + leadMs;
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

  it('pauses a series by its s- event id on the shared topic: nothing delivered while paused, and the next occurrence after the resume', async () => {
    const { scheduler, client, target, stop } = await setup(CHANGE_TIMINGS);
    try {
      const { firstDue, series, occurrence } = await publishSeriesDueSoon(
        scheduler,
        client,
        target.topicArn,
        'paused series',
        {},
        CHANGE_LEAD_MS,
      );
      await client.publish({ action: 'pause', event_id: series, user: 'tests' });
      await waitFor(async () => (await storedItem(scheduler, series))?.pausedAt !== undefined, 'the series paused');
      expect(await storedItem(scheduler, occurrence)).toMatchObject({ state: 'cancelled' });
      await client.publish(request(target.topicArn, firstDue + 2_000, 'marker'));
      await waitFor(() => target.withPayload('marker').length === 1, 'the marker, due after the first occurrence', 60_000);
      expect(target.withPayload('paused series'), 'nothing while paused').toEqual([]);
      await client.publish({ action: 'resume', event_id: series, user: 'tests' });
      const [next] = await waitFor(deliveredWith(target, 'paused series'), 'the next occurrence after the resume', 90_000);
      expectNotEarly(next);
      expect(next?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(occurrenceId(series, firstDue + MINUTE, 2));
      expect(target.withPayload('paused series')).toHaveLength(1);
    } finally {
      await stop();
    }
  }, 180_000);

  it('replaces the payload of a series: its next occurrence carries the new one, and the one made before is cancelled', async () => {
    const { scheduler, client, target, stop } = await setup(CHANGE_TIMINGS);
    try {
      const { firstDue, series, occurrence } = await publishSeriesDueSoon(
        scheduler,
        client,
        target.topicArn,
        'old payload',
        {},
        CHANGE_LEAD_MS,
      );
      await client.publish({ action: 'reschedule', event_id: series, payload: 'new payload', user: 'tests' });
      const [delivery] = await waitFor(deliveredWith(target, 'new payload'), 'the occurrence with the new payload', 60_000);
      expectNotEarly(delivery);
      expect(delivery?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(occurrenceId(series, firstDue, 2));
      expect(await storedItem(scheduler, occurrence)).toMatchObject({ state: 'cancelled' });
      expect(target.withPayload('old payload')).toEqual([]);
    } finally {
      await stop();
    }
  }, 120_000);

  it('replaces the expression of a series: delivered at the new time, not the old', async () => {
    const { scheduler, client, target, stop } = await setup(CHANGE_TIMINGS);
    try {
      const { firstDue, series } = await publishSeriesDueSoon(scheduler, client, target.topicArn, 'moved series', {}, CHANGE_LEAD_MS);
      const newDue = firstDue + 5_000;
      await client.publish({
        action: 'reschedule',
        event_id: series,
        schedule: 'rate(1 minute)',
        start: new Date(newDue).toISOString(),
        offset: newDue % MINUTE,
        user: 'tests',
      });
      const [delivery] = await waitFor(deliveredWith(target, 'moved series'), 'the occurrence at the new time', 60_000);
      if (delivery === undefined) throw new Error('a delivery');
      expect(scheduledAt(delivery)).toBe(newDue);
      expectNotEarly(delivery);
      expect(target.withPayload('moved series')).toHaveLength(1);
    } finally {
      await stop();
    }
  }, 120_000);

  it('changes nothing with a pause published before a resume that was applied first: the series runs on', async () => {
    const { scheduler, client, target, stop } = await setup(CHANGE_TIMINGS);
    try {
      const { series, occurrence } = await publishSeriesDueSoon(scheduler, client, target.topicArn, 'running series', {}, CHANGE_LEAD_MS);
      const resumeId = await client.publish({ action: 'resume', event_id: series, user: 'tests' });
      await waitFor(async () => (await storedItem(scheduler, series))?.lastChangeBy === resumeId, 'the resume applied');
      // A pause published a minute before the resume, arriving after it.
      await client.redeliver({ action: 'pause', event_id: series, user: 'tests' }, 'older-pause', Date.now() - MINUTE);
      const [delivery] = await waitFor(deliveredWith(target, 'running series'), 'the occurrence, delivered', 60_000);
      expect(delivery?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(occurrence);
      const stored = await storedItem(scheduler, series);
      expect(stored?.pausedAt).toBeUndefined();
      expect(stored?.lastChangeBy).toBe(resumeId);
    } finally {
      await stop();
    }
  }, 120_000);

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
