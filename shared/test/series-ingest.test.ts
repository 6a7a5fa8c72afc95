import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../src/app/ingest.js';
import { REASON } from '../src/domain/reasons.js';
import { SERIES_STATE } from '../src/domain/series.js';
import { messageEventId, occurrenceId, seriesId } from '../src/domain/table-keys.js';
import { REGION, registry, topicArn } from './factories.js';
import { ACME_TOPIC, acmeTarget, NOW, published, setup, minuteSeries } from './ingest-kit.js';

const MINUTE = 60_000;
/** NOW is 2030-03-17T17:46:40Z: the next minutes start 20 s on. */
const NEXT_MINUTE = Math.ceil(NOW / MINUTE) * MINUTE;
const failureTopic = topicArn('failures', REGION, '111111111111');
const ID = seriesId(messageEventId('msg-1'));
const BETA_TOPIC = ACME_TOPIC.replace('scheduler-tenant-acme', 'scheduler-tenant-beta');
const twoTenants = registry({
  tenants: [
    { id: 'acme', accounts: ['111111111111'] },
    { id: 'beta', accounts: ['222222222222'] },
  ],
});

const series = minuteSeries;

/** Ingest with acme and beta registered, and what its refusals told. */
function withTenants(tenants = twoTenants) {
  const context = setup();
  const deps = { ...context.deps, tenants };
  const publish = (message: Record<string, unknown>, messageId: string, topic = ACME_TOPIC) =>
    ingestBatch(deps, [published(message, messageId, topic)]);
  const notices = () => context.delayQueue.notices.map(({ notice }) => notice);
  return { ...context, deps, publish, notices };
}

describe('a series request whose id an earlier request with other content took', () => {
  const all = ['payload', 'timezone', 'start', 'end', 'count', 'offset', 'dst', 'catch_up_seconds'];
  it.each([
    ['its schedule', {}, { schedule: 'rate(2 minutes)' }, ['schedule']],
    ['its target', {}, { target: topicArn('other-out', 'eu-west-1', '111111111111') }, ['target']],
    ['another failure topic', {}, { failure_topic: topicArn('other-failures', REGION, '111111111111') }, ['failure_topic']],
    ['a failure topic the first had not', { failure_topic: undefined }, {}, ['failure_topic']],
    ['its user', {}, { user: 'bob' }, ['user']],
    ['labels the first had not', {}, { labels: ['campaign-7'] }, ['labels']],
    ['its schedule and its user', {}, { schedule: 'rate(2 minutes)', user: 'bob' }, ['schedule', 'user']],
    ['its payload alone', {}, { payload: 'tock' }, all],
    ["its payload, its labels' order aside", { labels: ['a', 'b'] }, { labels: ['b', 'a'], payload: 'tock' }, all],
  ])('is refused, naming what differs (%s), and the first one stands', async (_name, first, second, differing) => {
    const context = withTenants();
    await context.publish(series({ id: 'ticks', ...first }), 'msg-1');
    await context.publish(series({ id: 'ticks', ...second }), 'msg-2');
    const [notice, ...others] = context.notices();
    expect(others).toEqual([]);
    expect(notice?.reason).toBe(REASON.IDEMPOTENCY_KEY_REUSED);
    const [record] = [...context.series.records.values()];
    expect(notice?.details).toEqual({ field: 'id', eventId: record?.id, differing });
    expect(notice?.message).toContain(`this one differs in ${differing.join(', ')}; the first one stands`);
    expect(context.delayQueue.sent).toHaveLength(10);
  });
});

describe('a series request accepted', () => {
  it('says in its logs which series of which tenant it stored, from which input message, and how many occurrences it sent', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    expect(context.logger.lines.filter(({ message }) => message === 'series accepted')).toEqual([
      { level: 'info', fields: { seriesId: ID, tenant: 'acme', sent: 10, inputMessageId: 'msg-1' }, message: 'series accepted' },
    ]);
  });
});

describe('a series request delivered again', () => {
  it('takes its series when its first take failed: its occurrences sent once, the duplicate counted, nothing refused', async () => {
    const context = withTenants();
    context.delayQueue.refuseSends = 5;
    const failed = await context.publish(series(), 'msg-1');
    expect(failed.batchItemFailures).toHaveLength(1);
    expect(context.delayQueue.sent).toEqual([]);
    context.delayQueue.refuseSends = 0;
    await context.publish(series(), 'msg-1');
    expect(context.delayQueue.sent.map(({ event }) => event.dueAt)).toEqual(Array.from({ length: 10 }, (_, n) => NEXT_MINUTE + n * MINUTE));
    expect(context.notices()).toEqual([]);
    expect(context.metrics.counts).toMatchObject({ EventsIngested: 1, DuplicatesSuppressed: 1 });
  });

  it('makes nothing for a series cancelled since, however much later it comes', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    context.clock.set(NOW + 15 * MINUTE);
    await context.publish(series(), 'msg-1');
    expect(context.delayQueue.sent).toHaveLength(10);
    expect(context.series.records.get(ID)?.state).toBe(SERIES_STATE.cancelled);
    expect(context.notices()).toEqual([]);
  });
});

describe("a series over its tenant's open-events quota", () => {
  const quotaOf = (maxOpenEvents: number) => registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents }] });

  it('is refused as QUOTA_EXCEEDED, naming the quota and its limit, and is not stored', async () => {
    const context = withTenants(quotaOf(1));
    await context.publish({ date: new Date(NOW + MINUTE).toISOString(), target: acmeTarget, user: 'alice', payload: 'once' }, 'msg-once');
    await context.publish(series(), 'msg-1');
    expect(context.notices().map(({ reason, message, details }) => ({ reason, message, details }))).toEqual([
      {
        reason: REASON.QUOTA_EXCEEDED,
        message: 'tenant "acme" is at its maxOpenEvents quota (1)',
        details: { quota: 'maxOpenEvents', limit: 1 },
      },
    ]);
    expect(context.series.records.has(ID)).toBe(false);
  });

  it('sends the occurrences the quota leaves room for, refuses each other one once on its failure topic, and goes on', async () => {
    // Three places: the series' own and two occurrences'.
    const context = withTenants(quotaOf(3));
    await context.publish(series(), 'msg-1');
    expect(context.delayQueue.sent.map(({ event }) => event.dueAt)).toEqual([NEXT_MINUTE, NEXT_MINUTE + MINUTE]);
    const refused = context.delayQueue.notices;
    expect(refused).toHaveLength(8);
    const third = occurrenceId(ID, NEXT_MINUTE + 2 * MINUTE);
    expect(refused[0]).toMatchObject({
      failureTopic,
      tenant: 'acme',
      notice: {
        reason: REASON.QUOTA_EXCEEDED,
        eventId: third,
        message: `occurrence ${third} of series ${ID}: tenant "acme" is at its maxOpenEvents quota (3)`,
        details: { quota: 'maxOpenEvents', limit: 3 },
      },
    });
    expect(new Set(refused.map(({ noticeId }) => noticeId)).size, 'a notice of its own for each occurrence').toBe(8);
    expect(context.series.records.get(ID)).toMatchObject({ state: SERIES_STATE.active, cursor: { fired: 10 } });
    // Cancelled, its occurrences that were never made with it: every place freed.
    const cancel = await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    expect(cancel.batchItemFailures).toEqual([]);
    expect(context.series.records.get(ID)?.state).toBe(SERIES_STATE.cancelled);
    expect(context.store.openEvents.get('acme')).toBe(0);
  });
});

describe('a cancel naming a series', () => {
  it('cancels it and counts it, refusing nothing, however often it is delivered', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    expect(context.metrics.counts.EventsCancelled).toBe(1);
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    expect(context.series.records.get(ID)?.state).toBe(SERIES_STATE.cancelled);
    expect(context.notices()).toEqual([]);
  });

  it('counts a cancel delivered again once, as a cancel of an event delivered again is counted', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    const again = await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    expect(again.batchItemFailures).toEqual([]);
    expect(context.metrics.counts.EventsCancelled).toBe(1);
  });

  it('says in its logs which series of which tenant it cancelled, with the number of its occurrences cancelled', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    expect(context.logger.lines.filter(({ message }) => message === 'series cancelled')).toEqual([
      { level: 'info', fields: { seriesId: ID, tenant: 'acme', occurrencesCancelled: 10 }, message: 'series cancelled' },
    ]);
  });

  it('made by another request once the series is cancelled, is refused as EVENT_ALREADY_ENDED with its state', async () => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel');
    await context.publish({ action: 'cancel', event_id: ID, failure_topic: failureTopic }, 'msg-cancel-2');
    expect(context.notices().map(({ reason, details, message }) => [reason, details, message])).toEqual([
      [
        REASON.EVENT_ALREADY_ENDED,
        { field: 'event_id', state: SERIES_STATE.cancelled },
        `cannot cancel series ${ID}: it has already ended: cancelled`,
      ],
    ]);
  });
});

describe("another tenant's series or event", () => {
  it.each([
    ['a cancel', { action: 'cancel' }],
    ['a reschedule to a date', { action: 'reschedule', date: new Date(NOW + 60 * MINUTE).toISOString() }],
    ['a pause', { action: 'pause' }],
  ])('is not found by %s naming it, and is left as it is', async (_name, change) => {
    const context = withTenants();
    await context.publish(series(), 'msg-1');
    await context.publish(
      { date: new Date(NOW + 2 * MINUTE).toISOString(), target: acmeTarget, user: 'alice', payload: 'once' },
      'msg-once',
    );
    const betaFailures = topicArn('failures', REGION, '222222222222');
    for (const eventId of [ID, messageEventId('msg-once')])
      await context.publish({ ...change, event_id: eventId, failure_topic: betaFailures }, `msg-beta-${eventId}`, BETA_TOPIC);
    expect(context.notices().map(({ reason, details }) => [reason, details.field])).toEqual([
      [REASON.EVENT_NOT_FOUND, 'event_id'],
      [REASON.EVENT_NOT_FOUND, 'event_id'],
    ]);
    expect(context.series.records.get(ID)).toMatchObject({ state: SERIES_STATE.active, version: 2 });
    expect(context.series.records.get(ID)?.pausedAt).toBeUndefined();
    expect(context.store.records.get(messageEventId('msg-once'))?.state).toBe('queued');
  });

  it('is not found by a reschedule naming a series the tenant does not have', async () => {
    const context = withTenants();
    await context.publish(
      { action: 'reschedule', event_id: 's-m-nothing', date: new Date(NOW + 60 * MINUTE).toISOString(), failure_topic: failureTopic },
      'msg-reschedule',
    );
    expect(context.notices().map(({ reason }) => reason)).toEqual([REASON.EVENT_NOT_FOUND]);
  });
});
