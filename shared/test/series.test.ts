import { describe, expect, it } from 'vitest';
import { workBulkCancelPages } from '../src/app/bulk-cancel.js';
import { ingestBatch } from '../src/app/ingest.js';
import { loadChunks } from '../src/app/loading.js';
import { takeSeries, takeSeriesTogether } from '../src/app/series.js';
import { emissionAttributes, expiresAtFor } from '../src/domain/event.js';
import { REASON } from '../src/domain/reasons.js';
import { DEFAULT_QUOTAS } from '../src/domain/tenants.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { shardOf } from '../src/domain/sharding.js';
import { tenantIndexKeyAt } from '../src/domain/tenant-index.js';
import { materialisation, occurrenceEvent, SERIES_STATE, upcomingOccurrences } from '../src/domain/series.js';
import { encodeBulkCancelPage } from '../src/domain/bulk-cancel.js';
import { encodeLoadingChunk } from '../src/domain/messages.js';
import { heldShardKey, messageEventId, occurrenceId, seriesId } from '../src/domain/table-keys.js';
import { registry, topicArn, REGION, sqsRecord } from './factories.js';
import { acmeTarget, CONFIG, NOW, published, setup, minuteSeries } from './ingest-kit.js';
import { MemoryEventListing, MemoryLabelledEvents } from './memory-event-store.js';
import { specOf } from './recurrence-kit.js';

const MINUTE = 60_000;
const failureTopic = topicArn('failures', REGION, '111111111111');
/** NOW is 2030-03-17T17:46:40Z: the next minutes start 20 s on. */
const NEXT_MINUTE = Math.ceil(NOW / MINUTE) * MINUTE;

describe('materialisation: which occurrences a take makes', () => {
  const spec = specOf('rate(1 minute)', new Date(NEXT_MINUTE).toISOString(), { offsetMs: 250 });
  const first = NEXT_MINUTE + 250;

  it('makes every occurrence due before the horizon, and names the next one as the series moves on', () => {
    const plan = materialisation(
      spec,
      { cursor: { after: spec.start - 1, fired: 0 } },
      { now: NOW, horizonMs: first + 2 * MINUTE + 1, catchUpMs: 3_600_000, perMinute: 10 },
    );
    expect(plan.occurrences).toEqual([
      { dueAt: first, occurrence: 1 },
      { dueAt: first + MINUTE, occurrence: 2 },
      { dueAt: first + 2 * MINUTE, occurrence: 3 },
    ]);
    expect(plan).toMatchObject({ skipped: 0, cursor: { after: first + 2 * MINUTE, fired: 3 }, next: first + 3 * MINUTE });
  });

  it('skips and counts the occurrences older than the catch-up window, and delivers late those within it', () => {
    const now = first + 10 * MINUTE;
    const plan = materialisation(
      spec,
      { cursor: { after: spec.start - 1, fired: 0 } },
      { now, horizonMs: now + 1, catchUpMs: 3 * MINUTE, perMinute: 10 },
    );
    // 0 to 6 are older than 3 minutes; 7, 8, 9 and 10 are late within the window.
    expect(plan.skipped).toBe(7);
    expect(plan.occurrences.map(({ occurrence }) => occurrence)).toEqual([8, 9, 10, 11]);
    expect(plan.cursor).toEqual({ after: now, fired: 11 });
  });

  it('ends with the series: after count, or before end, no next occurrence', () => {
    const counted = materialisation(
      { ...spec, count: 2 },
      { cursor: { after: spec.start - 1, fired: 0 } },
      { now: NOW, horizonMs: first + 10 * MINUTE, catchUpMs: MINUTE, perMinute: 10 },
    );
    expect(counted).toMatchObject({ occurrences: [{ occurrence: 1 }, { occurrence: 2 }], next: undefined });
    const ended = materialisation(
      { ...spec, end: first + MINUTE },
      { cursor: { after: spec.start - 1, fired: 0 } },
      { now: NOW, horizonMs: first + 10 * MINUTE, catchUpMs: MINUTE, perMinute: 10 },
    );
    expect(ended).toMatchObject({ occurrences: [{ dueAt: first }], next: undefined });
  });

  it('gives each occurrence an id of its series and due time, and the attributes of its place in the series', () => {
    const event = occurrenceEvent({ id: 's-m-1', tenant: 'acme', target: acmeTarget }, 'hi', { dueAt: first, occurrence: 3 });
    expect(event.id).toBe(occurrenceId('s-m-1', first));
    const attributes = emissionAttributes(event, first);
    expect(attributes['scheduler-series-id']).toBe('s-m-1');
    expect(attributes['scheduler-occurrence']).toBe('3');
    expect(emissionAttributes({ ...event, series: undefined }, first)['scheduler-series-id']).toBeUndefined();
  });
});

describe('ingest of a series', () => {
  const series = minuteSeries;

  it('stores the series at its first occurrence beyond the near-path window and sends those within it, with their series', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series(), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const stored = context.series.records.get(id);
    // A window of 600 s: ten minutes' occurrences, from the minute after it was published.
    expect(context.delayQueue.sent).toHaveLength(10);
    const [sent] = context.delayQueue.sent;
    expect(sent?.event).toMatchObject({ id: occurrenceId(id, NEXT_MINUTE), dueAt: NEXT_MINUTE, series: { id, occurrence: 1 } });
    // Keyed after its first occurrence beyond the window by the lookahead less half the window (540 - 300 s): taken again once that occurrence is 5 minutes away.
    expect(stored).toMatchObject({ state: SERIES_STATE.active, version: 2, cursor: { fired: 10 }, dueAt: NEXT_MINUTE + 14 * MINUTE });
    // The series and each materialised occurrence hold a place.
    expect(context.store.openEvents.get('acme')).toBe(11);
    expect(context.metrics.counts.EventsDelayed).toBe(10);
    // Kept until the retention period after it is next due.
    expect(stored?.expiresAt).toBe(expiresAtFor(NEXT_MINUTE + 14 * MINUTE, CONFIG.retentionSeconds));
  });

  it('keeps a completed series for the retention period after its last occurrence', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series({ count: 3 }), 'msg-1')]);
    const stored = context.series.records.get(seriesId(messageEventId('msg-1')));
    expect(stored).toMatchObject({ state: SERIES_STATE.completed, dueAt: undefined });
    expect(stored?.expiresAt).toBe(expiresAtFor(NEXT_MINUTE + 2 * MINUTE, CONFIG.retentionSeconds));
  });

  it('lists its occurrences with the series, not on their own: only under their labels, and once one fails', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series({ labels: ['reports'] }), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const listing = new MemoryEventListing(context.store);
    const open = { limit: 100 };
    expect(context.delayQueue.sent).toHaveLength(10);
    // No key of their own: a listing without a label leaves them out, as the operators' tools say (SERIES_OCCURRENCES_NOTE).
    expect((await listing.listEvents('acme', open)).events).toEqual([]);
    expect((await listing.listEvents('acme', { ...open, label: 'reports' })).events).toHaveLength(10);
    const first = occurrenceId(id, NEXT_MINUTE);
    expect(context.store.records.get(first)?.tenantShard).toBeUndefined();
    // Failed, it has the key a failed near-path event gets, and is listed.
    const record = context.store.records.get(first);
    if (record === undefined) throw new Error('the first occurrence recorded');
    const shard = shardOf(first, CONFIG);
    await context.store.endEmissions([
      {
        event: record,
        end: { state: 'failed', at: NEXT_MINUTE, reason: REASON.TARGET_NOT_FOUND },
        expiresAt: record.expiresAt,
        endedBy: 'delivery-1',
        listedUnder: tenantIndexKeyAt('failed', { tenant: 'acme', shard, payloadIn: 'queue', occurrence: true }, true),
      },
    ]);
    expect((await listing.listEvents('acme', { ...open, states: [EVENT_STATE.failed] })).events.map((event) => event.id)).toEqual([first]);
  });

  it('says so when a take alone completed the series and its place could not be freed: the count errs high, never low', async () => {
    const context = setup();
    // The store completes the series, but the write that frees its place fails.
    const advance = context.series.advance.bind(context.series);
    context.series.advance = async (record, step) => {
      const outcome = await advance(record, step);
      if (!outcome.advanced || step.next !== undefined || step.placeFreedByCaller === true) return outcome;
      context.store.openEvents.set('acme', (context.store.openEvents.get('acme') ?? 0) + 1);
      return { advanced: true, placeKept: true };
    };
    // Stored with a count of 3 and no take yet; then taken alone (no places held), as a take made again after a failed one is.
    const created = await context.series.create({
      series: {
        id: 's-m-alone',
        tenant: 'acme',
        target: acmeTarget,
        payload: 'tick',
        spec: specOf('rate(1 minute)', new Date(NEXT_MINUTE).toISOString(), { count: 3 }),
        catchUpMs: 3_600_000,
        clientId: undefined,
        requestHash: 'hash',
        cursor: { after: NEXT_MINUTE - 1, fired: 0 },
      },
      dueAt: NEXT_MINUTE,
      inputMessageId: 'msg-1',
      shard: 0,
      quotas: DEFAULT_QUOTAS,
      now: NOW,
      expiresAt: 0,
    });
    if (created.outcome !== 'created') throw new Error('the series stored');
    await takeSeries(context.deps, created.record, NOW);
    expect(context.series.records.get('s-m-alone')).toMatchObject({ state: SERIES_STATE.completed });
    expect(context.logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { seriesId: 's-m-alone', tenant: 'acme' },
        message: 'series completed: its place in the open-events quota could not be freed; the count stays high until reconciled',
      },
    ]);
    // Its three occurrences and the place kept.
    expect(context.store.openEvents.get('acme')).toBe(4);
  });

  it('says so when the places held for a take could not be settled: the count errs high, never low', async () => {
    const context = setup();
    context.store.settlePlaces = async () => false;
    await ingestBatch(context.deps, [published(series({ count: 3 }), 'msg-1')]);
    expect(context.logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { tenant: 'acme', heldAt: NOW, unused: 0, freed: 1 },
        message: "places held for series' takes could not be settled; the open-events count stays high until reconciled",
      },
    ]);
  });

  it('tells its next occurrences: first those materialised and not yet due, then those after its cursor; none once it has ended', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series(), 'msg-1')]);
    const stored = context.series.records.get(seriesId(messageEventId('msg-1')));
    if (stored === undefined) throw new Error('the series stored');
    // Three minutes on, the first three have come due; seven are materialised still to come.
    const upcoming = upcomingOccurrences(stored, NEXT_MINUTE + 2 * MINUTE, 9);
    expect(upcoming.map(({ occurrence, materialised }) => [occurrence, materialised])).toEqual([
      ...[4, 5, 6, 7, 8, 9, 10].map((n) => [n, true]),
      [11, false],
      [12, false],
    ]);
    expect(upcoming.map(({ dueAt }) => dueAt)).toEqual(upcoming.map(({ occurrence }) => NEXT_MINUTE + (occurrence - 1) * MINUTE));
    expect(upcomingOccurrences({ ...stored, state: SERIES_STATE.cancelled }, NOW, 5)).toEqual([]);
  });

  it('sends nothing twice when the same request is delivered again, nor writes an occurrence', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series(), 'msg-1')]);
    const writes = context.store.calls.createMany;
    await ingestBatch(context.deps, [published(series(), 'msg-1')]);
    expect(context.delayQueue.sent).toHaveLength(10);
    expect(context.store.calls.createMany, 'a take with nothing due writes nothing').toBe(writes);
  });

  it.each([
    ['schedule and date together', { date: new Date(NOW + MINUTE).toISOString() }, REASON.INVALID_FIELD],
    ['an invalid expression', { schedule: 'rate(30 seconds)' }, REASON.INVALID_SCHEDULE_EXPRESSION],
    ['an unknown zone', { timezone: 'Nowhere/Land' }, REASON.UNKNOWN_TIMEZONE],
    ['an offset of a minute', { offset: 60_000 }, REASON.INVALID_OFFSET],
    [
      'a series that never fires',
      { end: new Date(NOW - MINUTE).toISOString(), start: new Date(NOW - 2 * MINUTE).toISOString() },
      REASON.SCHEDULE_NEVER_FIRES,
    ],
  ])('refuses %s with its code, storing and sending nothing', async (_name, fields, reason) => {
    const context = setup();
    await ingestBatch(context.deps, [published(series(fields))]);
    expect(context.series.records.size).toBe(0);
    expect(context.delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([reason]);
  });

  it('refuses, on its failure topic, a series whose id an earlier request with other content took: the first one stands', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series({ id: 'ticks' }))]);
    await ingestBatch(context.deps, [published(series({ id: 'ticks', payload: 'tock' }))]);
    const notices = context.delayQueue.notices.map(({ notice }) => notice);
    expect(notices.map(({ reason }) => reason)).toEqual([REASON.IDEMPOTENCY_KEY_REUSED]);
    const [record] = [...context.series.records.values()];
    expect(notices[0]?.eventId).toBe(record?.id);
    expect(context.series.records.size).toBe(1);
    // Only the first request's ten occurrences were sent.
    expect(context.delayQueue.sent).toHaveLength(10);
  });

  it('refuses a series field given with a date', async () => {
    const context = setup();
    const { schedule: _schedule, ...oneOff } = series({ date: new Date(NOW + MINUTE).toISOString(), timezone: 'Europe/Berlin' });
    await ingestBatch(context.deps, [published(oneOff)]);
    expect(context.delayQueue.notices.map(({ notice }) => [notice.reason, notice.details.field])).toEqual([
      [REASON.INVALID_FIELD, 'timezone'],
    ]);
  });

  it('cancels a series by the client id: the series and its occurrences not yet due, their places freed', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series({ id: 'ticks' }))]);
    await ingestBatch(context.deps, [published({ action: 'cancel', id: 'ticks', user: 'alice' })]);
    const [record] = [...context.series.records.values()];
    expect(record?.state).toBe(SERIES_STATE.cancelled);
    const cancelled = [...context.store.records.values()].filter(({ state }) => state === 'cancelled');
    expect(cancelled).toHaveLength(10);
    expect(context.store.openEvents.get('acme')).toBe(0);
  });

  it('refuses a reschedule of a series', async () => {
    const context = setup();
    await ingestBatch(context.deps, [published(series({ id: 'ticks' }))]);
    await ingestBatch(context.deps, [
      published({
        action: 'reschedule',
        id: 'ticks',
        user: 'alice',
        date: new Date(NOW + 3_600_000).toISOString(),
        failure_topic: failureTopic,
      }),
    ]);
    expect(context.delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([REASON.SERIES_CHANGE_NOT_SUPPORTED]);
  });
});

describe("loading's take of a series", () => {
  function loaded() {
    const context = setup();
    const loadingDeps = { ...context.deps, config: { ...context.deps.config, repairAfterSeconds: 300, repairDelaySeconds: 60 } };
    const load = (ids: string[], messageId = 'sqs-load') =>
      loadChunks(loadingDeps, [sqsRecord(encodeLoadingChunk({ ids, chunkId: messageId }), messageId)]);
    return { ...context, load, loadingDeps };
  }

  /** A minute series of acme's (`msg-1`) with a catch-up window of 120 s and a failure topic, taken at ingest. */
  async function withCatchUpSeries() {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries({ catch_up_seconds: 120 }), 'msg-1')]);
    return context;
  }

  it('materialises the occurrences now within the window and moves the series on, once however often the chunk comes', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [
      published({ schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: 'tick' }, 'msg-1'),
    ]);
    const id = seriesId(messageEventId('msg-1'));
    // Keyed 4 minutes past its next occurrence (lookahead 540 s less half the 600 s window): not yet to be taken two minutes on.
    expect(context.series.records.get(id)).toMatchObject({ version: 2, cursor: { fired: 10 }, dueAt: NEXT_MINUTE + 14 * MINUTE });
    context.clock.set(context.clock.now() + 2 * MINUTE);
    await context.load([id]);
    expect(context.delayQueue.sent).toHaveLength(10);
    // Once its next occurrence is half a window away, one take makes the six now within the window.
    context.clock.set(context.clock.now() + 4 * MINUTE);
    await context.load([id]);
    await context.load([id], 'sqs-again');
    expect(context.delayQueue.sent.map(({ event }) => event.series?.occurrence)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    ]);
    expect(context.series.records.get(id)).toMatchObject({ version: 3, cursor: { fired: 16 }, dueAt: NEXT_MINUTE + 20 * MINUTE });
  });

  it("takes a series due within the near-path window, and not one due at the window's edge", async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const dueAt = context.series.records.get(id)?.dueAt ?? Number.NaN;
    context.clock.set(dueAt - CONFIG.nearPathWindowSeconds * 1000);
    await context.load([id]);
    expect(context.series.records.get(id)?.version).toBe(2);
    expect(context.delayQueue.sent).toHaveLength(10);
    context.clock.set(dueAt - CONFIG.nearPathWindowSeconds * 1000 + 1);
    await context.load([id], 'sqs-later');
    expect(context.series.records.get(id)?.version).toBe(3);
    expect(context.delayQueue.sent.length).toBeGreaterThan(10);
  });

  it('takes, in a repair chunk, a series whose take is overdue by repairAfterSeconds, and not one whose chunk may still be on its way', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const dueAt = context.series.records.get(id)?.dueAt ?? Number.NaN;
    const repair = (messageId: string) =>
      loadChunks(context.loadingDeps, [sqsRecord(encodeLoadingChunk({ ids: [id], chunkId: messageId, repair: true }), messageId)]);
    context.clock.set(dueAt + 300_000);
    await repair('sqs-repair-1');
    expect(context.series.records.get(id)?.version).toBe(2);
    expect(context.delayQueue.sent).toHaveLength(10);
    context.clock.set(dueAt + 300_001);
    await repair('sqs-repair-2');
    expect(context.series.records.get(id)?.version).toBe(3);
    expect(context.delayQueue.sent.length).toBeGreaterThan(10);
  });

  it('leaves a series its client paused after the loader handed it out: nothing made while it is paused', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    await ingestBatch(context.deps, [published({ event_id: id, failure_topic: failureTopic, action: 'pause' }, 'msg-pause')]);
    const paused = context.series.records.get(id);
    expect(paused).toMatchObject({ state: SERIES_STATE.active, dueAt: undefined });
    const sent = context.delayQueue.sent.length;
    context.clock.set(context.clock.now() + 6 * MINUTE);
    expect((await context.load([id])).batchItemFailures).toEqual([]);
    expect(context.delayQueue.sent).toHaveLength(sent);
    expect(context.series.records.get(id)).toBe(paused);
  });

  it('takes a chunk of series without a take of stored events: no event read, and none counted as a duplicate', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const takes = context.store.calls.takeForLoading;
    context.clock.set(context.clock.now() + 6 * MINUTE);
    await context.load([id]);
    expect(context.series.records.get(id)?.version).toBe(3);
    expect(context.store.calls.takeForLoading).toBe(takes);
    expect(context.metrics.counts.DuplicatesSuppressed).toBeUndefined();
  });

  it('moves the series of a chunk whose occurrences went out, and takes again only the one whose sends failed: none sent twice, none lost', async () => {
    const context = loaded();
    const names = ['msg-1', 'msg-2', 'msg-3'];
    await ingestBatch(
      context.deps,
      names.map((id) => published({ schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: id }, id)),
    );
    context.clock.set(context.clock.now() + 6 * MINUTE);
    const [first, failing, third] = names.map((id) => seriesId(messageEventId(id))) as [string, string, string];
    const sentOf = (id: string) => context.delayQueue.sent.filter(({ event }) => event.series?.id === id).map(({ event }) => event.id);
    const send = context.delayQueue.send.bind(context.delayQueue);
    let refused = false;
    context.delayQueue.send = async (items) => {
      if (refused || !items.some(({ event }) => event.series?.id === failing)) return send(items);
      refused = true;
      return items.map(({ event }) => ({ eventId: event.id, reason: 'refused' }));
    };
    const response = await context.load([first, failing, third]);
    expect(response.batchItemFailures).toEqual([]);
    expect(refused).toBe(true);
    // Moved once each: the chunk's next try found the first past the horizon, and the failed one still to take.
    for (const id of [first, failing, third]) {
      expect(sentOf(id)).toHaveLength(16);
      expect(new Set(sentOf(id)).size).toBe(16);
      expect(context.series.records.get(id)).toMatchObject({ version: 3, cursor: { fired: 16 } });
    }
  });

  it('cancels the held occurrences a resume finds past their catch-up window, reports them once with their count, and sends the others', async () => {
    const context = await withCatchUpSeries();
    // The tenant is paused, and its first four occurrences are held as they come due.
    context.store.pauses.set('acme', { pausedAt: NEXT_MINUTE - MINUTE, pausedBy: 'msg-pause', owner: 'tenant' });
    const held = context.delayQueue.sent.slice(0, 4);
    for (const { event, queuedBy } of held) {
      const record = context.store.records.get(event.id);
      if (record === undefined || queuedBy === undefined) throw new Error(`no record of ${event.id}`);
      expect(await context.store.hold(record, queuedBy, { payload: 'tick', heldKey: heldShardKey('acme', 0), now: event.dueAt })).toBe(
        'held',
      );
    }
    // Resumed 4.5 minutes after the first was due: three of them are more than 120 s overdue.
    context.store.pauses.delete('acme');
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    const chunk = encodeLoadingChunk({ ids: held.map(({ event }) => event.id), chunkId: 'r-msg-resume#start', resume: true });
    await loadChunks(context.loadingDeps, [sqsRecord(chunk, 'sqs-resume')]);
    await loadChunks(context.loadingDeps, [sqsRecord(chunk, 'sqs-resume')]);
    expect(held.map(({ event }) => context.store.records.get(event.id)?.state)).toEqual(['cancelled', 'cancelled', 'cancelled', 'queued']);
    const notices = context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.OCCURRENCE_SKIPPED);
    expect(new Set(notices.map(({ noticeId }) => noticeId)).size, 'one notice, however often the chunk comes').toBe(1);
    expect(notices[0]?.notice.details).toEqual({ skipped: 3, catchUpSeconds: 120 });
    expect(context.delayQueue.sent.slice(10).map(({ event }) => event.id)).toContain(held[3]?.event.id);
    expect(context.delayQueue.sent.slice(10).map(({ event }) => event.id)).not.toContain(held[0]?.event.id);
    // Said in the logs with the series, their count and the chunk that cancelled them.
    expect(context.logger.lines).toContainEqual({
      level: 'info',
      fields: { seriesId: seriesId(messageEventId('msg-1')), skipped: 3, chunkId: 'r-msg-resume#start#catch-up' },
      message: 'resume: held occurrences past their catch-up window cancelled',
    });
  });

  it('reports the occurrences past the catch-up window once, and delivers the others late', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    // An outage: the loader comes back an hour later.
    context.clock.set(context.clock.now() + 60 * MINUTE);
    await context.load([id], 'sqs-repair');
    const notices = context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.OCCURRENCE_SKIPPED);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.notice.details).toEqual({ skipped: 48, catchUpSeconds: 120 });
    const late = context.delayQueue.sent.slice(10).filter(({ event }) => event.dueAt < context.clock.now());
    expect(late).toHaveLength(2);
  });

  it.each([
    [
      'its user, failure topic and labels',
      { labels: ['b', 'a'] },
      { schedule: 'rate(1 minute)', timezone: 'UTC', target: acmeTarget, user: 'alice', failure_topic: failureTopic, labels: ['b', 'a'] },
    ],
    [
      'no user, failure topic or labels',
      { user: undefined, failure_topic: undefined },
      { schedule: 'rate(1 minute)', timezone: 'UTC', target: acmeTarget },
    ],
  ])('quotes the series in its skipped notice as its request says it: %s, no payload', async (_name, fields, quote) => {
    const context = loaded();
    const deadLetterTopic = topicArn('dead-letters', REGION, '111111111111');
    const deps = {
      ...context.loadingDeps,
      tenants: registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], requireUser: false, deadLetterTopic }] }),
    };
    await ingestBatch(deps, [published(minuteSeries({ catch_up_seconds: 120, ...fields }), 'msg-1')]);
    context.clock.set(context.clock.now() + 60 * MINUTE);
    const id = seriesId(messageEventId('msg-1'));
    await loadChunks(deps, [sqsRecord(encodeLoadingChunk({ ids: [id], chunkId: 'sqs-repair' }), 'sqs-repair')]);
    const [skipped] = context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.OCCURRENCE_SKIPPED);
    expect(skipped?.notice.event).toStrictEqual(quote);
    expect(skipped?.notice.eventId).toBe(id);
  });

  it('leaves a series whose tenant is no longer registered where it is, making nothing', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    const before = context.series.records.get(id);
    context.clock.set(context.clock.now() + 6 * MINUTE);
    const gone = { ...context.loadingDeps, tenants: registry({ tenants: [] }) };
    const response = await loadChunks(gone, [sqsRecord(encodeLoadingChunk({ ids: [id], chunkId: 'sqs-load' }), 'sqs-load')]);
    expect(response.batchItemFailures).toEqual([]);
    expect(context.delayQueue.sent).toHaveLength(10);
    expect(context.series.records.get(id)).toBe(before);
  });

  it('gives each copy it sends a token of its own when none is given', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    context.clock.set(context.clock.now() + 6 * MINUTE);
    const { newToken: _given, ...deps } = context.loadingDeps;
    await loadChunks(deps, [sqsRecord(encodeLoadingChunk({ ids: [id], chunkId: 'sqs-load' }), 'sqs-load')]);
    const tokens = context.delayQueue.sent.slice(10).map(({ queuedBy }) => queuedBy);
    expect(tokens).toHaveLength(6);
    expect(new Set(tokens).size).toBe(6);
    for (const { event, queuedBy } of context.delayQueue.sent.slice(10))
      expect(context.store.records.get(event.id)?.queuedBy).toBe(queuedBy);
  });

  it('makes an occurrence whose write was not answered again, and moves the series only once it is sent', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    context.clock.set(context.clock.now() + 6 * MINUTE);
    const createMany = context.store.createMany.bind(context.store);
    let lost = false;
    context.store.createMany = async (entries) => {
      const outcomes = await createMany(entries);
      if (lost || entries.length === 0) return outcomes;
      lost = true;
      return [{ outcome: 'unknown' }, ...outcomes.slice(1)];
    };
    const response = await context.load([id]);
    expect(response.batchItemFailures).toEqual([]);
    expect(lost).toBe(true);
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.id);
    expect(made).toHaveLength(6);
    expect(new Set(made).size).toBe(6);
    expect(made).toContain(occurrenceId(id, NEXT_MINUTE + 10 * MINUTE));
    expect(context.series.records.get(id)).toMatchObject({ version: 3, cursor: { fired: 16 } });
  });

  it('answers what a take did: the occurrences it sent and skipped, and whether it moved the series, which its second try finds moved', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    const read = context.series.records.get(id);
    if (read === undefined) throw new Error('the series stored');
    const now = context.clock.now() + 6 * MINUTE;
    expect(await takeSeries(context.loadingDeps, read, now)).toEqual({ sent: 6, skipped: 0, advanced: true });
    // The same take made again (of the version it read): its occurrences sent again, the series already moved by its first try.
    expect(await takeSeries(context.loadingDeps, read, now)).toEqual({ sent: 6, skipped: 0, advanced: false });
  });

  it('answers that a take of a series whose tenant is no longer registered sent nothing and left it, and warns with the series and tenant', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    const read = context.series.records.get(id);
    if (read === undefined) throw new Error('the series stored');
    const gone = { ...context.loadingDeps, tenants: registry({ tenants: [] }) };
    expect(await takeSeries(gone, read, context.clock.now() + 6 * MINUTE)).toEqual({ sent: 0, skipped: 0, advanced: false });
    expect(context.logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { seriesId: id, tenant: 'acme' },
        message: 'series of a tenant no longer registered; left as it is',
      },
    ]);
  });

  it('says in its logs each take of a series: what it sent, skipped and still owes, where the series goes next, and whether it moved it', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries({ catch_up_seconds: 3600 }), 'msg-1')]);
    const id = seriesId(messageEventId('msg-1'));
    const taken = () => context.logger.lines.filter(({ message }) => message === 'series taken');
    expect(taken()).toEqual([
      {
        level: 'info',
        fields: {
          seriesId: id,
          version: 1,
          sent: 10,
          skipped: 0,
          owed: false,
          next: context.series.records.get(id)?.dueAt,
          advanced: true,
        },
        message: 'series taken',
      },
    ]);
    // An outage: an hour later, ten of the late ones are sent beside the ten now within the window; the other late ones are owed.
    context.clock.set(context.clock.now() + 60 * MINUTE);
    await context.load([id], 'sqs-repair');
    expect(taken()[1]).toEqual({
      level: 'info',
      fields: { seriesId: id, version: 2, sent: 20, skipped: 0, owed: true, next: context.series.records.get(id)?.dueAt, advanced: true },
      message: 'series taken',
    });
  });

  it('says in its logs when a take made the last occurrences of its series, which is then completed', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries({ count: 3 }), 'msg-1')]);
    const message = 'series taken: its last occurrences materialised, completed';
    expect(context.logger.lines.filter((line) => line.message.startsWith('series taken'))).toEqual([
      {
        level: 'info',
        fields: {
          seriesId: seriesId(messageEventId('msg-1')),
          version: 1,
          sent: 3,
          skipped: 0,
          owed: false,
          next: undefined,
          advanced: true,
        },
        message,
      },
    ]);
  });

  it('keeps, as the last error of an input message whose take failed, which occurrence was not recorded or how many were not sent', async () => {
    const context = loaded();
    const id = seriesId(messageEventId('msg-1'));
    const createMany = context.store.createMany.bind(context.store);
    let lost = false;
    context.store.createMany = async (entries) => {
      const outcomes = await createMany(entries);
      if (lost) return outcomes;
      lost = true;
      return [{ outcome: 'unknown' }, ...outcomes.slice(1)];
    };
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    expect(context.lastErrors.errors.get('sqs-msg-1')?.error).toEqual({
      name: 'TransientError',
      message: `recording occurrence ${occurrenceId(id, NEXT_MINUTE)} of ${id} did not complete; retrying`,
    });
    context.delayQueue.refuseSends = 1;
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    expect(context.lastErrors.errors.get('sqs-msg-1')?.error).toEqual({
      name: 'TransientError',
      message: `10 occurrences of ${id} could not be sent to the delay queue (refused by the test)`,
    });
  });

  it('sends again only those of its occurrences still as its failed try left them', async () => {
    const context = await withCatchUpSeries();
    const id = seriesId(messageEventId('msg-1'));
    context.clock.set(context.clock.now() + 6 * MINUTE);
    context.delayQueue.refuseSends = 1;
    // Between the tries, the first new occurrence is taken by another writer: it is not this take's to send.
    const requeue = context.store.requeue.bind(context.store);
    const first = occurrenceId(id, NEXT_MINUTE + 10 * MINUTE);
    context.store.requeue = async (eventId, change) => (eventId === first ? false : requeue(eventId, change));
    const response = await context.load([id]);
    expect(response.batchItemFailures).toEqual([]);
    const made = context.delayQueue.sent.slice(10).map(({ event }) => event.id);
    expect(made).toHaveLength(5);
    expect(made).not.toContain(first);
  });
});

describe('a cancel by label of a series', () => {
  /** Ingest, and the changes function working the pages of the jobs ingest starts, on the same stores. */
  function labelled() {
    const context = setup();
    const changesDeps = { ...context.deps, labelled: new MemoryLabelledEvents(context.store, context.series) };
    let deliveries = 0;
    const drain = async () => {
      for (let page = context.changesQueue.sent.shift(); page !== undefined; page = context.changesQueue.sent.shift()) {
        const response = await workBulkCancelPages(changesDeps, [sqsRecord(encodeBulkCancelPage(page), `page-${++deliveries}`)]);
        expect(response.batchItemFailures).toEqual([]);
      }
    };
    const publishSeries = (messageId: string, fields: Record<string, unknown> = {}) =>
      ingestBatch(context.deps, [
        published(
          { schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: 'tick', labels: ['campaign-7'], ...fields },
          messageId,
        ),
      ]);
    const cancelByLabel = (fields: Record<string, unknown> = {}) =>
      ingestBatch(context.deps, [published({ action: 'cancel', label: 'campaign-7', ...fields }, 'cancel-1')]);
    const occurrences = (id: string) => [...context.store.records.values()].filter(({ series }) => series?.id === id);
    return { ...context, drain, publishSeries, cancelByLabel, occurrences };
  }

  it('cancels the series as a cancel by its id does, its materialised occurrences with it; the series counts once, each occurrence as an event', async () => {
    const context = labelled();
    await context.publishSeries('msg-1');
    const id = seriesId(messageEventId('msg-1'));
    await context.cancelByLabel();
    await context.drain();
    expect(context.series.records.get(id)).toMatchObject({ state: SERIES_STATE.cancelled, cancelledBy: 'b-cancel-1' });
    expect(context.occurrences(id).map(({ state }) => state)).toEqual(Array(10).fill('cancelled'));
    expect(context.store.openEvents.get('acme')).toBe(0);
    expect(await context.deps.jobs.get('b-cancel-1')).toMatchObject({ state: 'done', counts: { cancelled: 11 } });
    expect(context.logger.at('warn', 'error')).toEqual([]);
    // No occurrence after it: a take of the series, once the loader hands it out again, makes none.
    const sent = context.delayQueue.sent.length;
    context.clock.set(NOW + 15 * MINUTE);
    await loadChunks({ ...context.deps, config: { ...context.deps.config, repairAfterSeconds: 300, repairDelaySeconds: 60 } }, [
      sqsRecord(encodeLoadingChunk({ ids: [id], chunkId: 'sqs-load' }), 'sqs-load'),
    ]);
    expect(context.delayQueue.sent).toHaveLength(sent);
  });

  it('with due_before, cancels a series that ends by then, and leaves one that goes on past it running, cancelling only its occurrences before the bound', async () => {
    const context = labelled();
    // Both active after ingest's take (which reaches 9 min 40 s ahead): the first has 2 of its 4 occurrences materialised.
    const bound = NEXT_MINUTE + 12 * MINUTE;
    await context.publishSeries('msg-ends', {
      start: new Date(NEXT_MINUTE + 8 * MINUTE).toISOString(),
      end: new Date(bound).toISOString(),
    });
    await context.publishSeries('msg-goes-on');
    const ends = seriesId(messageEventId('msg-ends'));
    const goesOn = seriesId(messageEventId('msg-goes-on'));
    await context.cancelByLabel({ due_before: new Date(bound).toISOString() });
    await context.drain();
    expect(context.series.records.get(ends)?.state).toBe(SERIES_STATE.cancelled);
    expect(context.occurrences(ends).map(({ state }) => state)).toEqual(['cancelled', 'cancelled']);
    expect(context.series.records.get(goesOn)?.state).toBe(SERIES_STATE.active);
    expect(context.occurrences(goesOn).map(({ state }) => state)).toEqual(Array(10).fill('cancelled'));
    expect((await context.deps.jobs.get('b-cancel-1'))?.counts).toEqual({ cancelled: 1 + 2 + 10, refused: { ended: 0, emitting: 0 } });
  });

  it('counts a series and its occurrences in a dry run, and changes nothing', async () => {
    const context = labelled();
    await context.publishSeries('msg-1');
    const job = await context.deps.jobs.create({
      jobId: 'b-dry',
      tenant: 'acme',
      label: 'campaign-7',
      fromMs: NOW,
      dueBefore: undefined,
      failureTopic: undefined,
      dryRun: true,
      createdAt: NOW,
      expiresAt: NOW / 1000 + 3600,
    });
    context.changesQueue.sent.push({ jobId: job.job.jobId, from: 'start' });
    await context.drain();
    expect((await context.deps.jobs.get('b-dry'))?.counts.cancelled).toBe(11);
    expect(context.series.records.get(seriesId(messageEventId('msg-1')))?.state).toBe(SERIES_STATE.active);
    expect(context.store.openEvents.get('acme')).toBe(11);
  });
});

describe("places held for a batch of series' takes", () => {
  function loaded(tenants = registry()) {
    const context = setup();
    const deps = { ...context.deps, tenants };
    const loadingDeps = { ...deps, config: { ...deps.config, repairAfterSeconds: 300, repairDelaySeconds: 60 } };
    const load = (ids: string[], messageId = 'sqs-load') =>
      loadChunks(loadingDeps, [sqsRecord(encodeLoadingChunk({ ids, chunkId: messageId }), messageId)]);
    // Whether each createMany took its entries' places itself or found them held.
    const creates: boolean[] = [];
    const createMany = context.store.createMany.bind(context.store);
    context.store.createMany = (entries, options) => {
      creates.push(options?.placesHeld === true);
      return createMany(entries, options);
    };
    return { ...context, deps, load, creates };
  }

  it("holds a new series' place and its first take's occurrences in one write at ingest, and frees the place of one completed there with the settle", async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    expect(context.store.calls.holdPlaces).toBe(1);
    expect(context.creates).toEqual([true]);
    expect(context.store.openEvents.get('acme')).toBe(11);
    await ingestBatch(context.deps, [published(minuteSeries({ count: 3 }), 'msg-2')]);
    expect(context.store.calls.holdPlaces).toBe(2);
    expect(context.series.records.get(seriesId(messageEventId('msg-2')))?.state).toBe(SERIES_STATE.completed);
    // Its three occurrences: its own place was freed when it completed.
    expect(context.store.openEvents.get('acme')).toBe(14);
  });

  it("holds the places of a chunk's takes of one tenant in one write, and frees those of the series that completed in one settle", async () => {
    const context = loaded();
    const ids = ['msg-1', 'msg-2', 'msg-3'].map((message) => seriesId(messageEventId(message)));
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1'), published(minuteSeries(), 'msg-2')]);
    await ingestBatch(context.deps, [published(minuteSeries({ count: 12 }), 'msg-3')]);
    expect(context.store.openEvents.get('acme')).toBe(33);
    const before = { holds: context.store.calls.holdPlaces ?? 0, settles: context.store.calls.settlePlaces ?? 0 };
    context.clock.set(context.clock.now() + 6 * MINUTE);
    await context.load(ids);
    expect(context.store.calls.holdPlaces).toBe(before.holds + 1);
    expect(context.store.calls.settlePlaces).toBe(before.settles + 1);
    expect(context.creates.slice(3)).toEqual([true, true, true]);
    // Six more of each open series; two more of the third, which completed and freed its place.
    expect(context.series.records.get(ids[2] ?? '')?.state).toBe(SERIES_STATE.completed);
    expect(context.store.openEvents.get('acme')).toBe(33 + 12 + 2 - 1);
  });

  it('gives back the places of occurrences a take finds made already, and of a take a failure stopped, so that the count stays exact', async () => {
    const context = loaded();
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1'), published(minuteSeries(), 'msg-2')]);
    const ids = ['msg-1', 'msg-2'].map((message) => seriesId(messageEventId(message)));
    const stale = context.series.records.get(ids[0] ?? '');
    if (stale === undefined) throw new Error('the first series stored');
    context.clock.set(context.clock.now() + 6 * MINUTE);
    // The first try's send fails after the first series' occurrences are created: the chunk is tried again.
    context.delayQueue.refuseSends = 1;
    await context.load(ids);
    expect(context.store.openEvents.get('acme')).toBe(2 * 17);
    // A take at the version already moved on (a chunk delivered late): its occurrences exist, their places go back.
    await takeSeriesTogether(context.deps, [stale], context.clock.now());
    expect(context.store.openEvents.get('acme')).toBe(2 * 17);
  });

  it("takes each take's places itself, as alone, when the batch's do not all fit the quota: the first that fit are made", async () => {
    const context = loaded(registry({ tenants: [{ id: 'acme', accounts: ['111111111111'], maxOpenEvents: 13 }] }));
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-1')]);
    expect(context.store.openEvents.get('acme')).toBe(11);
    // 11 more do not fit: the series takes its own place, and its take the one place left of its ten.
    await ingestBatch(context.deps, [published(minuteSeries(), 'msg-2')]);
    expect(context.creates).toEqual([true, false]);
    expect(context.store.openEvents.get('acme')).toBe(13);
    expect(context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.QUOTA_EXCEEDED)).toHaveLength(9);
  });
});
