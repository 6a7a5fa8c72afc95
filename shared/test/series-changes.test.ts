import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../src/app/ingest.js';
import { expiresAtFor } from '../src/domain/event.js';
import { REASON } from '../src/domain/reasons.js';
import { SERIES_STATE } from '../src/domain/series.js';
import { cursorMovedTo, followsLastChange } from '../src/domain/series-changes.js';
import { messageEventId, occurrenceId, seriesId } from '../src/domain/table-keys.js';
import { REGION, topicArn } from './factories.js';
import { acmeTarget, CONFIG, NOW, published, setup, minuteSeries } from './ingest-kit.js';
import { specOf } from './recurrence-kit.js';

const MINUTE = 60_000;
const failureTopic = topicArn('failures', REGION, '111111111111');
/** NOW is 2030-03-17T17:46:40Z: the next minutes start 20 s on. */
const NEXT_MINUTE = Math.ceil(NOW / MINUTE) * MINUTE;
const ID = seriesId(messageEventId('msg-series'));

/** A minute series of acme's, taken at ingest: its ten occurrences within the 600 s window materialised and sent. */
async function withSeries(fields: Record<string, unknown> = {}) {
  const context = setup();
  const request = minuteSeries(fields);
  await ingestBatch(context.deps, [published(request, 'msg-series')]);
  const change = (message: Record<string, unknown>, messageId: string, publishedAt = context.clock.now()) =>
    ingestBatch(context.deps, [published({ event_id: ID, failure_topic: failureTopic, ...message }, messageId, undefined, publishedAt)]);
  const record = () => context.series.records.get(ID);
  const occurrence = (dueAt: number, revision = 1) => context.store.records.get(occurrenceId(ID, dueAt, revision));
  const reasons = () => context.delayQueue.notices.map(({ notice }) => [notice.reason, notice.details.field]);
  return { ...context, change, record, occurrence, reasons };
}

describe('the order of a series’ changes', () => {
  it('follows the last change when published after it, or at the same time by another message', () => {
    expect(followsLastChange({}, { publishedAt: 1, by: 'a' })).toBe(true);
    expect(followsLastChange({ lastChangeAt: 5, lastChangeBy: 'a' }, { publishedAt: 6, by: 'b' })).toBe(true);
    expect(followsLastChange({ lastChangeAt: 5, lastChangeBy: 'a' }, { publishedAt: 5, by: 'b' })).toBe(true);
    expect(followsLastChange({ lastChangeAt: 5, lastChangeBy: 'a' }, { publishedAt: 5, by: 'a' })).toBe(false);
    expect(followsLastChange({ lastChangeAt: 5, lastChangeBy: 'a' }, { publishedAt: 4, by: 'b' })).toBe(false);
  });

  it('moves a cursor over a pause: a series with count counts the occurrences passed, one without keeps its number', () => {
    const spec = specOf('rate(1 minute)', new Date(NEXT_MINUTE).toISOString());
    const cursor = { after: NEXT_MINUTE, fired: 1 };
    expect(cursorMovedTo(spec, cursor, NEXT_MINUTE + 3 * MINUTE)).toEqual({ after: NEXT_MINUTE + 3 * MINUTE, fired: 1 });
    expect(cursorMovedTo({ ...spec, count: 10 }, cursor, NEXT_MINUTE + 3 * MINUTE)).toEqual({ after: NEXT_MINUTE + 3 * MINUTE, fired: 4 });
    expect(cursorMovedTo({ ...spec, count: 2 }, cursor, NEXT_MINUTE + 3 * MINUTE)).toEqual({ after: NEXT_MINUTE + 3 * MINUTE, fired: 2 });
    expect(cursorMovedTo(spec, cursor, NEXT_MINUTE - 1)).toBe(cursor);
  });
});

describe('pause and resume of one series', () => {
  it('pauses a series: out of the index, its materialised occurrences cancelled and their places freed, nothing sent', async () => {
    const context = await withSeries();
    const sent = context.delayQueue.sent.length;
    await context.change({ action: 'pause' }, 'msg-pause');
    expect(context.record()).toMatchObject({ state: SERIES_STATE.active, pausedAt: NOW, dueAt: undefined, revision: 2 });
    for (let n = 0; n < 10; n++) expect(context.occurrence(NEXT_MINUTE + n * MINUTE)?.state).toBe('cancelled');
    expect(context.store.openEvents.get('acme'), 'the series alone holds a place').toBe(1);
    expect(context.delayQueue.sent).toHaveLength(sent);
    expect(context.reasons()).toEqual([]);
  });

  it('resumes with the first occurrence after the resume, under a new revision: none of those due while paused is owed', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    context.clock.set(NOW + 5 * MINUTE);
    await context.change({ action: 'resume' }, 'msg-resume');
    const resumedAt = NOW + 5 * MINUTE;
    const firstAfter = Math.ceil(resumedAt / MINUTE) * MINUTE;
    expect(context.record()).toMatchObject({ pausedAt: undefined, revision: 2 });
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event);
    expect(made[0]).toMatchObject({ id: occurrenceId(ID, firstAfter, 2), dueAt: firstAfter });
    expect(made.every(({ dueAt }) => dueAt > resumedAt)).toBe(true);
  });

  it('owes nothing a take left for later once the series is paused: what an outage left is not delivered after a pause', async () => {
    const context = await withSeries();
    const owed = [{ after: NOW - 30 * MINUTE, fired: 0, through: NOW - 5 * MINUTE }];
    context.series.records.set(ID, { ...(context.record() as NonNullable<ReturnType<typeof context.record>>), owed });
    await context.change({ action: 'pause' }, 'msg-pause');
    expect(context.record()?.owed).toBeUndefined();
  });

  it('changes nothing with a pause published before the resume applied last, however late it arrives', async () => {
    const context = await withSeries();
    await context.change({ action: 'resume' }, 'msg-resume', NOW);
    const duplicates = context.metrics.counts.DuplicatesSuppressed ?? 0;
    await context.change({ action: 'pause' }, 'msg-pause', NOW - 1_000);
    expect(context.record()?.pausedAt).toBeUndefined();
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('queued');
    expect(context.reasons()).toEqual([]);
    expect(context.metrics.counts.DuplicatesSuppressed, 'the late pause counted as a duplicate').toBe(duplicates + 1);
  });

  it('says in its logs which series of which tenant changed, how, under which revision, whether paused, and when it is next due', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    context.clock.set(NOW + 5 * MINUTE);
    await context.change({ action: 'resume' }, 'msg-resume');
    const changed = context.logger.lines.filter(({ message }) => message === 'series changed');
    expect(changed).toEqual([
      {
        level: 'info',
        fields: { seriesId: ID, tenant: 'acme', change: 'pause', revision: 2, paused: true, dueAt: undefined },
        message: 'series changed',
      },
      {
        level: 'info',
        fields: { seriesId: ID, tenant: 'acme', change: 'resume', revision: 2, paused: false, dueAt: expect.any(Number) },
        message: 'series changed',
      },
    ]);
  });

  it('says in its logs which change of which series it dropped as published before the last applied, and from which message', async () => {
    const context = await withSeries();
    await context.change({ action: 'resume' }, 'msg-resume', NOW);
    await context.change({ action: 'pause' }, 'msg-pause', NOW - 1_000);
    const message = 'series pause superseded by a change published later; dropped';
    expect(context.logger.lines.filter((line) => line.message === message)).toEqual([
      {
        level: 'info',
        fields: { seriesId: ID, tenant: 'acme', change: 'pause', inputMessageId: 'msg-pause', publishedAt: NOW - 1_000 },
        message,
      },
    ]);
  });

  it('applies a pause once, however often it is delivered', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    await context.change({ action: 'pause' }, 'msg-pause');
    expect(context.record()).toMatchObject({ revision: 2, lastChangeBy: 'msg-pause' });
  });

  it('takes the series when a resume is delivered again after its take failed, and counts no duplicate', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    context.clock.set(NOW + 5 * MINUTE);
    context.delayQueue.refuseSends = 1;
    expect((await context.change({ action: 'resume' }, 'msg-resume')).batchItemFailures).toHaveLength(1);
    expect(context.delayQueue.sent).toHaveLength(10);
    // Written, and kept until the retention period after it is next due, though not taken yet.
    const resumed = context.record();
    expect(resumed?.expiresAt).toBe(expiresAtFor(resumed?.dueAt ?? 0, CONFIG.retentionSeconds));
    await context.change({ action: 'resume' }, 'msg-resume');
    expect(context.delayQueue.sent.slice(10).map(({ event }) => event.id)).toEqual(
      Array.from({ length: 10 }, (_, n) => occurrenceId(ID, NEXT_MINUTE + (5 + n) * MINUTE, 2)),
    );
    expect(context.metrics.counts.DuplicatesSuppressed).toBeUndefined();
    expect(context.reasons()).toEqual([]);
  });

  it('makes nothing when a resume is delivered again after the series was cancelled', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    await context.change({ action: 'resume' }, 'msg-resume');
    await context.change({ action: 'cancel' }, 'msg-cancel');
    const sent = context.delayQueue.sent.length;
    context.clock.set(NOW + 15 * MINUTE);
    await context.change({ action: 'resume' }, 'msg-resume');
    expect(context.delayQueue.sent).toHaveLength(sent);
    expect(context.record()?.state).toBe(SERIES_STATE.cancelled);
  });

  it('refuses a pause of a cancelled series as EVENT_ALREADY_ENDED, with its state', async () => {
    const context = await withSeries();
    await context.change({ action: 'cancel' }, 'msg-cancel');
    await context.change({ action: 'pause' }, 'msg-pause');
    expect(context.delayQueue.notices.map(({ notice }) => [notice.reason, notice.details, notice.message])).toEqual([
      [
        REASON.EVENT_ALREADY_ENDED,
        { field: 'event_id', state: SERIES_STATE.cancelled },
        `cannot pause series ${ID}: it has already ended: cancelled`,
      ],
    ]);
  });

  it.each([
    [
      'an occurrence',
      { event_id: occurrenceId(ID, NEXT_MINUTE) },
      REASON.INVALID_FIELD,
      'event_id',
      'is one occurrence of a series: pause takes a whole series',
    ],
    [
      'a one-off event',
      { event_id: undefined, id: 'one-off', user: 'alice' },
      REASON.INVALID_FIELD,
      'id',
      'is an event, not a series: a pause of one event is not taken',
    ],
    [
      'nothing',
      { event_id: 's-m-nothing' },
      REASON.EVENT_NOT_FOUND,
      'event_id',
      'cannot pause s-m-nothing: the tenant has no series with that id',
    ],
  ])('refuses a pause of %s, saying why', async (_name, naming, reason, field, says) => {
    const context = await withSeries();
    await ingestBatch(context.deps, [
      published({ date: new Date(NOW + 2 * MINUTE).toISOString(), target: acmeTarget, user: 'alice', payload: 'once', id: 'one-off' }),
    ]);
    await context.change({ action: 'pause', ...naming }, 'msg-pause');
    expect(context.reasons()).toEqual([[reason, field]]);
    expect(context.delayQueue.notices[0]?.notice.message).toContain(says);
  });
});

describe('replacing a series’ payload or schedule', () => {
  it('replaces the payload of the occurrences due after the cutoff: made again under a new revision, with the new payload', async () => {
    const context = await withSeries();
    await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('cancelled');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event);
    expect(made.map(({ id }) => id)).toEqual(Array.from({ length: 10 }, (_, n) => occurrenceId(ID, NEXT_MINUTE + n * MINUTE, 2)));
    expect(made.every(({ payload }) => payload === 'tock')).toBe(true);
    expect(await context.series.payload(context.record() as never)).toBe('tock');
    expect(context.store.openEvents.get('acme')).toBe(11);
  });

  it('replaces the schedule: the new expression from its own start, its fields left out at their defaults', async () => {
    const context = await withSeries();
    await context.change({ action: 'reschedule', schedule: 'rate(5 minutes)', offset: 250 }, 'msg-schedule');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.dueAt);
    // rate() counts from the start's minute (the change's publish time), each at :00.250.
    const base = Math.floor(NOW / MINUTE) * MINUTE + 250;
    expect(made).toEqual([base + 5 * MINUTE, base + 10 * MINUTE]);
    expect(context.record()?.spec.expression.text).toBe('rate(5 minutes)');
  });

  it('keeps an occurrence due within the change cutoff, and makes nothing again at or before it', async () => {
    const context = await withSeries();
    context.clock.set(NEXT_MINUTE - 2_000);
    await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('queued');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.dueAt);
    expect(made[0]).toBe(NEXT_MINUTE + MINUTE);
  });

  it('goes on with a new schedule after the change cutoff: an occurrence of it due within the cutoff is not made', async () => {
    const context = await withSeries({ schedule: 'rate(5 minutes)' });
    context.clock.set(NEXT_MINUTE - 2_000);
    await context.change({ action: 'reschedule', schedule: 'rate(1 minute)' }, 'msg-schedule');
    const made = context.delayQueue.sent.slice(2).map(({ event }) => event.dueAt);
    expect(made[0]).toBe(NEXT_MINUTE + MINUTE);
  });

  it('is written on a third try when takes moved the series twice meanwhile, its occurrences made again from the first after the cutoff', async () => {
    const context = await withSeries();
    const change = context.series.change.bind(context.series);
    let lost = 0;
    context.series.change = async (...args) => (++lost <= 2 ? undefined : change(...args));
    const response = await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    expect(response.batchItemFailures).toEqual([]);
    expect(lost).toBe(3);
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event);
    expect(made.map(({ id }) => id)).toEqual(Array.from({ length: 10 }, (_, n) => occurrenceId(ID, NEXT_MINUTE + n * MINUTE, 2)));
    expect(context.record()).toMatchObject({ revision: 2, lastChangeBy: 'msg-payload' });
  });

  it('leaves its input message to be retried, saying why, when takes moved the series three times in a row', async () => {
    const context = await withSeries();
    let lost = 0;
    context.series.change = async () => {
      lost++;
      return undefined;
    };
    const response = await ingestBatch(context.deps, [
      published({ event_id: ID, failure_topic: failureTopic, action: 'reschedule', payload: 'tock' }, 'msg-payload'),
    ]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-msg-payload' }]);
    expect(lost).toBe(3);
    expect(context.lastErrors.errors.get('sqs-msg-payload')?.error).toEqual({
      name: 'TransientError',
      message: `series ${ID} kept moving while it was being changed; retrying`,
    });
    expect(context.reasons()).toEqual([]);
  });

  it('keeps an occurrence whose cancel was refused, and makes nothing again at or before it', async () => {
    const context = await withSeries();
    context.store.refuseCancels = 1;
    await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('queued');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.dueAt);
    expect(made[0]).toBe(NEXT_MINUTE + MINUTE);
    expect(made).toHaveLength(9);
  });

  it('makes again the occurrences before one the client had cancelled itself', async () => {
    const context = await withSeries();
    await context.change({ action: 'cancel', event_id: occurrenceId(ID, NEXT_MINUTE + 2 * MINUTE) }, 'msg-cancel-one');
    await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.dueAt);
    expect(made.slice(0, 2)).toEqual([NEXT_MINUTE, NEXT_MINUTE + MINUTE]);
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('cancelled');
  });

  it('replaces the payload of a paused series: nothing made while paused, the new payload once resumed', async () => {
    const context = await withSeries();
    await context.change({ action: 'pause' }, 'msg-pause');
    await context.change({ action: 'reschedule', payload: 'tock' }, 'msg-payload');
    expect(context.reasons()).toEqual([]);
    expect(context.delayQueue.sent).toHaveLength(10);
    await context.change({ action: 'resume' }, 'msg-resume');
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event);
    expect(made).toHaveLength(10);
    expect(made.every(({ payload }) => payload === 'tock')).toBe(true);
  });

  it.each([
    ['an invalid expression', { schedule: 'rate(30 seconds)' }, REASON.INVALID_SCHEDULE_EXPRESSION, 'schedule'],
    ['an unknown zone', { schedule: 'cron(0 9 * * ? *)', timezone: 'Nowhere/Land' }, REASON.UNKNOWN_TIMEZONE, 'timezone'],
    ['a zone without schedule', { payload: 'tock', timezone: 'Europe/Berlin' }, REASON.INVALID_FIELD, 'timezone'],
    ['a date with a payload', { payload: 'tock', date: new Date(NOW + MINUTE).toISOString() }, REASON.INVALID_FIELD, 'date'],
    ['an empty payload', { payload: '' }, REASON.INVALID_FIELD, 'payload'],
    ['a payload too large for SNS', { payload: 'x'.repeat(262_144) }, REASON.PAYLOAD_TOO_LARGE, undefined],
    ['a new target', { payload: 'tock', target: acmeTarget }, REASON.SERIES_CHANGE_NOT_SUPPORTED, 'target'],
    ['a date alone', { date: new Date(NOW + MINUTE).toISOString() }, REASON.SERIES_CHANGE_NOT_SUPPORTED, 'event_id'],
  ])('refuses %s with the code a series request would get, changing nothing', async (_name, fields, reason, field) => {
    const context = await withSeries();
    await context.change({ action: 'reschedule', ...fields }, 'msg-change');
    expect(context.reasons()).toEqual([[reason, field]]);
    expect(context.record()?.version, 'unchanged since its take at ingest').toBe(2);
    expect(context.occurrence(NEXT_MINUTE)?.state).toBe('queued');
  });
});
