import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../src/app/ingest.js';
import { loadChunks } from '../src/app/loading.js';
import { encodeLoadingChunk } from '../src/domain/messages.js';
import { expiresAtFor } from '../src/domain/event.js';
import { REASON, TransientError } from '../src/domain/reasons.js';
import { heldShardKey, messageEventId, seriesId } from '../src/domain/table-keys.js';
import { registry, sqsRecord, topicArn } from './factories.js';
import { CONFIG, NOW, published, setup, minuteSeries } from './ingest-kit.js';
import { firstCursor } from '../src/domain/recurrence/occurrences.js';
import type { RecurrenceSpec } from '../src/domain/recurrence/spec.js';
import { materialisation, type OwedOccurrences, type SeriesPosition } from '../src/domain/series.js';
import { DEFAULT_SERIES_OCCURRENCES_PER_MINUTE } from '../src/domain/tenants.js';
import { specOf } from './recurrence-kit.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NEAR_PATH = 10 * MINUTE;
const START = Date.parse('2030-03-17T00:00:00Z');
const everyMinute = specOf('rate(1 minute)', new Date(START).toISOString());

/** Occurrence n of `everyMinute` is due n − 1 minutes after its start. */
const dueOf = (occurrence: number) => START + (occurrence - 1) * MINUTE;

interface Delivery {
  readonly dueAt: number;
  /** When it is published: at its due time if a take made it before then, else as soon as the take sends it. */
  readonly sentAt: number;
}

/**
 * Takes a series at each of `takes`, each from the position the one before left (as the store
 * keeps it), and records what they deliver; an occurrence made twice fails the test.
 */
function taken(spec: RecurrenceSpec, takes: readonly number[], bounds: { catchUpMs: number; perMinute: number }) {
  let position: SeriesPosition = { cursor: firstCursor(spec) };
  const delivered = new Map<number, Delivery>();
  const skippedByTake: number[] = [];
  const nextByTake: (number | undefined)[] = [];
  const owedByTake: (readonly OwedOccurrences[])[] = [];
  for (const now of takes) {
    const plan = materialisation(spec, position, { now, horizonMs: now + NEAR_PATH, ...bounds });
    for (const { dueAt, occurrence } of plan.occurrences) {
      expect(delivered.has(occurrence), `occurrence ${occurrence} made twice`).toBe(false);
      delivered.set(occurrence, { dueAt, sentAt: Math.max(dueAt, now) });
    }
    skippedByTake.push(plan.skipped);
    nextByTake.push(plan.next);
    owedByTake.push(plan.owed);
    position = { cursor: plan.cursor, owed: plan.owed, caughtUp: plan.caughtUp };
  }
  return { delivered, skippedByTake, nextByTake, owedByTake, position };
}

/** The most occurrences published in any one minute. */
function busiestMinute(delivered: ReadonlyMap<number, Delivery>): number {
  const perMinute = new Map<number, number>();
  for (const { sentAt } of delivered.values()) {
    const minute = Math.floor(sentAt / MINUTE);
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
  }
  return Math.max(...perMinute.values());
}

/** Every occurrence up to the cursor was delivered or skipped, once: none left out silently. */
function expectAccounted(run: ReturnType<typeof taken>): void {
  const skipped = run.skippedByTake.reduce((a, b) => a + b, 0);
  const owed = (run.position.owed ?? []).reduce((n, range) => n + (range.through - range.after) / MINUTE, 0);
  expect(run.delivered.size + skipped + owed).toBe(run.position.cursor.fired);
  for (const [occurrence, { dueAt }] of run.delivered) expect(dueAt).toBe(dueOf(occurrence));
}

/** A take each minute, 30 s into it, from `first` on. */
const minutely = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i * MINUTE);

describe('the bound on the occurrences a series is delivered a minute', () => {
  // The loader comes back 3 hours and 30 s after the series' start: 180 occurrences are overdue.
  const back = START + 3 * HOUR + 30_000;

  it('spreads a 3-hour outage over the next minutes, oldest first, none twice, and reports those past the window', () => {
    const run = taken(everyMinute, minutely(back, 10), { catchUpMs: HOUR, perMinute: 10 });
    // Occurrences 1 to 121 are more than an hour overdue: skipped, reported by the first take, and by none after it.
    expect(run.skippedByTake).toEqual([121, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // 122 to 181, overdue within the hour: 10 in the first minute (none is on time in it), then 9 a minute
    // beside the one on time, until none is owed; each minute's on time, from 182 on, at its due time.
    const late = [...run.delivered].filter(([, { dueAt, sentAt }]) => sentAt > dueAt).map(([occurrence]) => occurrence);
    expect(late).toEqual(Array.from({ length: 60 }, (_, i) => 122 + i));
    const sentInTake = (take: number) => late.filter((occurrence) => run.delivered.get(occurrence)?.sentAt === back + take * MINUTE).length;
    expect([0, 1, 2, 3, 4, 5, 6].map(sentInTake)).toEqual([10, 9, 9, 9, 9, 9, 5]);
    expect(busiestMinute(run.delivered)).toBe(10);
    // While some are owed the series is taken again at the horizon; then at its next occurrence.
    expect(run.nextByTake.slice(0, 6)).toEqual(minutely(back, 6).map((now) => now + NEAR_PATH));
    expect(run.nextByTake[6]).toBe(dueOf(Math.floor((back + 6 * MINUTE + NEAR_PATH - START) / MINUTE) + 2));
    expect(run.position.owed).toEqual([]);
    expectAccounted(run);
  });

  it("holds the public tenant's strict default: one on time and one caught up a minute; what ages out of the window meanwhile is reported", () => {
    const perMinute = DEFAULT_SERIES_OCCURRENCES_PER_MINUTE.public;
    // The loader takes the series every other minute.
    const takes = Array.from({ length: 70 }, (_, i) => back + i * 2 * MINUTE);
    const run = taken(everyMinute, takes, { catchUpMs: HOUR, perMinute });
    expect(busiestMinute(run.delivered)).toBe(2);
    // One late occurrence a take while the window's edge moves two a take: from the third take on, each reports one aged out.
    expect(run.skippedByTake.slice(0, 5)).toEqual([121, 0, 1, 1, 1]);
    expect(run.position.owed).toEqual([]);
    expectAccounted(run);
  });

  it('never delays an occurrence due on time, even at a bound of 1, when late ones wait or age out instead', () => {
    const run = taken(everyMinute, minutely(back, 90), { catchUpMs: HOUR, perMinute: 1 });
    for (const [occurrence, { dueAt, sentAt }] of run.delivered) if (dueAt >= back) expect(sentAt, `occurrence ${occurrence}`).toBe(dueAt);
    // A series due every minute leaves a bound of 1 no room for a late one: each is reported as it ages out.
    expect([...run.delivered.values()].filter(({ dueAt, sentAt }) => sentAt > dueAt)).toHaveLength(1);
    expect(run.skippedByTake.reduce((a, b) => a + b, 0)).toBe(180);
    expect(busiestMinute(run.delivered)).toBe(1);
    expectAccounted(run);
  });

  it('holds within a minute however often the series is taken in it', () => {
    // Ingest's take and loading's in the same minute, and another a second later.
    const run = taken(everyMinute, [back, back + 20_000, back + 21_000, back + MINUTE], { catchUpMs: HOUR, perMinute: 10 });
    const sentAt = [...run.delivered.values()].filter(({ dueAt, sentAt }) => sentAt > dueAt).map(({ sentAt }) => sentAt);
    expect(sentAt.filter((at) => at < back + 30_000)).toHaveLength(10);
    expect(sentAt.filter((at) => at === back + MINUTE)).toHaveLength(9);
    expect(busiestMinute(run.delivered)).toBe(10);
    expectAccounted(run);
  });

  it('keeps apart late occurrences of two outages, with those made on time between them, and makes none twice', () => {
    // 122 to 128 are caught up in three minutes, then a second outage of 40 minutes while 129 to 181 are owed.
    const run = taken(everyMinute, [...minutely(back, 3), ...minutely(back + 43 * MINUTE, 20)], { catchUpMs: HOUR, perMinute: 3 });
    // Back at 03:43:30: 129 to 164 have aged out of the window, 165 to 167 are sent; 182 to 193 were made
    // before the outage, on time; 194 to 224 are late, owed after what is left of the first outage's.
    expect(run.skippedByTake[3]).toBe(36);
    expect(run.owedByTake[3]).toEqual([
      { after: dueOf(167), fired: 167, through: dueOf(181) },
      { after: dueOf(193), fired: 193, through: dueOf(224) },
    ]);
    for (let occurrence = 182; occurrence <= 193; occurrence++) expect(run.delivered.get(occurrence)?.sentAt).toBe(dueOf(occurrence));
    expect(busiestMinute(run.delivered)).toBe(3);
    expectAccounted(run);
  });
});

describe("a take of a public series after an outage, by its tenant's bound", () => {
  it("sends late occurrences within the public tenant's 2 a minute, and leaves the rest owed for the next take", async () => {
    const context = setup();
    const loadingDeps = { ...context.deps, config: { ...CONFIG, repairAfterSeconds: 300, repairDelaySeconds: 60 } };
    const load = (id: string, chunkId: string) => loadChunks(loadingDeps, [sqsRecord(encodeLoadingChunk({ ids: [id], chunkId }), chunkId)]);
    const request = { schedule: 'rate(1 minute)', target: topicArn('out'), user: 'alice', payload: 'tick', catch_up_seconds: 3600 };
    await ingestBatch(context.deps, [published(request, 'msg-1', 'arn:aws:sns:eu-west-1:000000000000:scheduler-input')]);
    const id = seriesId(messageEventId('msg-1'));
    /** The late occurrences a take sent: due before it. */
    const takeLate = async (chunkId: string) => {
      const before = context.delayQueue.sent.length;
      await load(id, chunkId);
      return context.delayQueue.sent.slice(before).filter(({ event }) => event.dueAt < context.clock.now()).length;
    };
    // The loader is back 3 hours later: 60 occurrences are overdue within the hour, none of them on time in this minute.
    context.clock.set(context.clock.now() + 3 * HOUR);
    expect(await takeLate('chunk-1')).toBe(2);
    const record = context.series.records.get(id);
    expect(record?.owed).toHaveLength(1);
    expect(record?.dueAt).toBe(context.clock.now() + CONFIG.nearPathWindowSeconds * 1000);
    // A minute on, the occurrence due in it was made on time: room for one late one.
    context.clock.set(context.clock.now() + MINUTE);
    expect(await takeLate('chunk-2')).toBe(1);
  });
});

describe('held occurrences a resume finds past their catch-up window', () => {
  const NEXT_MINUTE = Math.ceil(NOW / MINUTE) * MINUTE;

  /** Minute series of acme's with a catch-up window of 120 s, taken at ingest; acme paused, and the first `held` occurrences of each held as they came due. */
  async function heldWhilePaused(messageIds: readonly string[], held: number) {
    const context = setup();
    const loadingDeps = { ...context.deps, config: { ...CONFIG, repairAfterSeconds: 300, repairDelaySeconds: 60 } };
    const request = minuteSeries({ catch_up_seconds: 120 });
    for (const messageId of messageIds) await ingestBatch(context.deps, [published(request, messageId)]);
    context.store.pauses.set('acme', { pausedAt: NEXT_MINUTE - MINUTE, pausedBy: 'msg-pause', owner: 'tenant' });
    const ids = messageIds.map((messageId) => seriesId(messageEventId(messageId)));
    const heldIds: string[] = [];
    const heldOf = new Map<string, string[]>();
    for (const { event, queuedBy } of context.delayQueue.sent) {
      if ((event.series?.occurrence ?? 0) > held) continue;
      const record = context.store.records.get(event.id);
      if (record === undefined || queuedBy === undefined) throw new Error(`no record of ${event.id}`);
      await context.store.hold(record, queuedBy, { payload: 'tick', heldKey: heldShardKey('acme', 0), now: event.dueAt });
      heldIds.push(event.id);
      heldOf.set(event.series?.id ?? '', [...(heldOf.get(event.series?.id ?? '') ?? []), event.id]);
    }
    context.store.pauses.delete('acme');
    const resume = (chunkIds: readonly string[], chunkId: string, deps: typeof loadingDeps = loadingDeps) =>
      loadChunks(deps, [sqsRecord(encodeLoadingChunk({ ids: chunkIds, chunkId, resume: true }), `sqs-${chunkId}`)]);
    const skipped = () => context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.OCCURRENCE_SKIPPED);
    const sentAgain = () => context.delayQueue.sent.slice(10 * messageIds.length).map(({ event }) => event.id);
    const state = (id: string | undefined) => context.store.records.get(id ?? '')?.state;
    return { ...context, loadingDeps, ids, heldIds, heldOf, resume, skipped, sentAgain, state };
  }

  it('sends one due exactly the window ago, and cancels those due before it, each kept for the retention period', async () => {
    const context = await heldWhilePaused(['msg-1'], 4);
    context.clock.set(NEXT_MINUTE + 4 * MINUTE);
    await context.resume(context.heldIds, 'r-msg-resume#start');
    expect(context.heldIds.map(context.state)).toEqual(['cancelled', 'cancelled', 'queued', 'queued']);
    expect(context.skipped().map(({ notice }) => notice.details)).toEqual([{ skipped: 2, catchUpSeconds: 120 }]);
    expect(context.sentAgain()).toEqual(context.heldIds.slice(2));
    const expiresAt = expiresAtFor(context.clock.now(), CONFIG.retentionSeconds);
    expect(context.heldIds.slice(0, 2).map((id) => context.store.records.get(id)?.expiresAt)).toEqual([expiresAt, expiresAt]);
  });

  it('counts only those it cancelled: one no longer held, or whose cancel was refused, is neither reported nor sent by it', async () => {
    const context = await heldWhilePaused(['msg-1'], 4);
    const [refused, taken, cancelled] = context.heldIds;
    // Another chunk sent the second on already; the first one's cancel loses to another change.
    const record = context.store.records.get(taken ?? '');
    if (record === undefined) throw new Error('the second occurrence');
    context.store.records.set(record.id, { ...record, state: 'queued', heldKey: undefined } as typeof record);
    context.store.refuseCancels = 1;
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    await context.resume(context.heldIds, 'r-msg-resume#start');
    expect([refused, taken, cancelled].map(context.state)).toEqual(['held', 'queued', 'cancelled']);
    expect(context.skipped().map(({ notice }) => notice.details)).toEqual([{ skipped: 1, catchUpSeconds: 120 }]);
    expect(context.sentAgain()).toEqual([context.heldIds[3]]);
  });

  it('reports those it cancelled when its first try failed before reporting them', async () => {
    const context = await heldWhilePaused(['msg-1'], 4);
    const sendNotice = context.delayQueue.sendNotice.bind(context.delayQueue);
    let failed = false;
    context.delayQueue.sendNotice = async (...args) => {
      if (failed) return sendNotice(...args);
      failed = true;
      throw new TransientError('SQS down');
    };
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    const response = await context.resume(context.heldIds, 'r-msg-resume#start');
    expect(response.batchItemFailures).toEqual([]);
    expect(failed).toBe(true);
    expect(context.skipped().map(({ notice }) => notice.details)).toEqual([{ skipped: 3, catchUpSeconds: 120 }]);
  });

  it('reports those its failed deliveries cancelled when the chunk comes again under a new message id, as a redrive from its dead-letter queue', async () => {
    const context = await heldWhilePaused(['msg-1'], 4);
    const sendNotice = context.delayQueue.sendNotice.bind(context.delayQueue);
    let down = true;
    context.delayQueue.sendNotice = async (...args) => {
      if (down) throw new TransientError('SQS down');
      return sendNotice(...args);
    };
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    const chunk = encodeLoadingChunk({ ids: context.heldIds, chunkId: 'r-msg-resume#start', resume: true });
    expect((await loadChunks(context.loadingDeps, [sqsRecord(chunk, 'sqs-first')])).batchItemFailures).toEqual([
      { itemIdentifier: 'sqs-first' },
    ]);
    expect(context.heldIds.map(context.state)).toEqual(['cancelled', 'cancelled', 'cancelled', 'held']);
    down = false;
    expect((await loadChunks(context.loadingDeps, [sqsRecord(chunk, 'sqs-redriven')])).batchItemFailures).toEqual([]);
    expect(context.skipped().map(({ notice }) => notice.details)).toEqual([{ skipped: 3, catchUpSeconds: 120 }]);
    expect(context.sentAgain()).toEqual([context.heldIds[3]]);
  });

  it('reports each series once with a notice of its own, and each chunk of a resume its own', async () => {
    const context = await heldWhilePaused(['msg-1', 'msg-2'], 2);
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    const [first, second] = context.ids.map((id) => context.heldOf.get(id) ?? []) as [string[], string[]];
    expect(first).toHaveLength(2);
    await context.resume([first[0], second[0]] as string[], 'r-msg-resume#start');
    await context.resume([first[1]] as string[], 'r-msg-resume#page-2');
    const notices = context.skipped();
    expect(notices.map(({ notice }) => [notice.eventId, notice.details.skipped])).toEqual([
      [context.ids[0], 1],
      [context.ids[1], 1],
      [context.ids[0], 1],
    ]);
    expect(new Set(notices.map(({ noticeId }) => noticeId)).size).toBe(3);
  });

  it('sends one whose series is gone, and reports none for a tenant no longer registered', async () => {
    const context = await heldWhilePaused(['msg-1', 'msg-2'], 1);
    context.series.records.delete(context.ids[1] ?? '');
    context.clock.set(NEXT_MINUTE + 4.5 * MINUTE);
    const gone = { ...context.loadingDeps, tenants: registry({ tenants: [] }) };
    const response = await context.resume(context.heldIds, 'r-msg-resume#start', gone);
    expect(response.batchItemFailures).toEqual([]);
    expect(context.heldIds.map(context.state)).toEqual(['cancelled', 'queued']);
    expect(context.skipped()).toEqual([]);
  });
});
