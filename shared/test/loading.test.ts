import { describe, expect, it } from 'vitest';
import { loadChunks, type LoadingDeps } from '../src/app/loading.js';
import { QUICK_RETRY_PAUSES_MS } from '../src/app/quick-retry.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { encodeLoadingChunk, type LoadingChunk } from '../src/domain/messages.js';
import { TransientError } from '../src/domain/reasons.js';
import { seriesId } from '../src/domain/table-keys.js';
import { registry, sqsRecord, storedRecord } from './factories.js';
import { MemorySeriesStore } from './memory-series-store.js';
import { FakeClock, MemoryDelayQueue, MemoryLastErrors, RecordingLogger, RecordingMetrics } from './fakes.js';
import { MemoryEventStore } from './memory-event-store.js';

const NOW = 1_900_000_000_000;
const config = {
  emitterLeadMs: 300,
  repairAfterSeconds: 300,
  repairDelaySeconds: 60,
  retentionSeconds: 3600,
  nearPathWindowSeconds: 600,
  loaderLookaheadSeconds: 540,
  shardCount: 8,
};

function setup() {
  const clock = new FakeClock(NOW);
  const store = new MemoryEventStore(clock);
  const delayQueue = new MemoryDelayQueue(clock);
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const lastErrors = new MemoryLastErrors();
  const series = new MemorySeriesStore(store);
  const deps = {
    config,
    tenants: registry(),
    store,
    series,
    delayQueue,
    clock,
    logger,
    metrics,
    failureLog: { lastErrors, fn: 'loading', clock },
  } satisfies LoadingDeps;
  /** Stores an event for the loader, due at `dueAt`. */
  const stored = (id: string, dueAt: number) => store.put(storedRecord(id, dueAt));
  const load = (chunk: LoadingChunk, messageId = 'sqs-1') => loadChunks(deps, [sqsRecord(encodeLoadingChunk(chunk), messageId)]);
  const sentIds = () => delayQueue.sent.map(({ event }) => event.id);
  return { store, series, clock, delayQueue, metrics, logger, lastErrors, deps, stored, load, sentIds };
}

describe('loading', () => {
  it("takes a chunk's stored events and sends them to the delay queue, each with its delay and the chunk's copy token", async () => {
    const { store, delayQueue, stored, load, sentIds } = setup();
    stored('a', NOW + 30_000);
    stored('b', NOW + 120_500);
    const response = await load({ ids: ['a', 'b'], chunkId: 'chunk-1' });
    expect(response.batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['a', 'b']);
    // Received the emitter lead before the due time, in whole seconds of SQS delay.
    expect(delayQueue.sent.map(({ delaySeconds }) => delaySeconds)).toEqual([29, 120]);
    const [token] = new Set(delayQueue.sent.map(({ queuedBy }) => queuedBy));
    expect(delayQueue.sent.every(({ queuedBy }) => queuedBy === token)).toBe(true);
    expect(store.records.get('a')).toMatchObject({ state: EVENT_STATE.queued, loadedBy: 'chunk-1', queuedBy: token });
    expect(delayQueue.sent[0]?.event.payload).toBe('hello');
  });

  it('sends nothing twice when the same events come in another chunk (a loader tick run twice): they were taken', async () => {
    const { metrics, stored, load, sentIds } = setup();
    stored('a', NOW + 30_000);
    await load({ ids: ['a'], chunkId: 'chunk-1' });
    const response = await load({ ids: ['a'], chunkId: 'chunk-2' }, 'sqs-2');
    expect(response.batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['a']);
    expect(metrics.counts.DuplicatesSuppressed).toBe(1);
  });

  it('sends its events again, with a new token, when the same chunk is delivered again: the earlier copy is then stale', async () => {
    const { store, delayQueue, stored, load, sentIds } = setup();
    stored('a', NOW + 30_000);
    await load({ ids: ['a'], chunkId: 'chunk-1' });
    await load({ ids: ['a'], chunkId: 'chunk-1' });
    expect(sentIds()).toEqual(['a', 'a']);
    const [first, again] = delayQueue.sent.map(({ queuedBy }) => queuedBy);
    expect(again).not.toBe(first);
    expect(store.records.get('a')?.queuedBy).toBe(again);
  });

  it('takes, in a repair chunk, the events still open past repairAfterSeconds, whoever took them, and sends them with the repair delay', async () => {
    const { store, delayQueue, metrics, logger, stored, load, sentIds } = setup();
    stored('overdue', NOW - 301_000);
    store.put({ ...storedRecord('taken-and-lost', NOW - 400_000), state: EVENT_STATE.queued, loadedBy: 'chunk-0' });
    stored('not-yet-overdue', NOW - 299_000);
    store.put({ ...storedRecord('ended', NOW - 400_000), state: EVENT_STATE.emitted });
    const response = await load({ ids: ['overdue', 'taken-and-lost', 'not-yet-overdue', 'ended'], chunkId: 'repair-1', repair: true });
    expect(response.batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['overdue', 'taken-and-lost']);
    expect(delayQueue.sent.map(({ delaySeconds }) => delaySeconds)).toEqual([60, 60]);
    expect(metrics.counts.EventsRepaired).toBe(2);
    expect(logger.at('warn')).toEqual([
      { level: 'warn', fields: { eventIds: ['overdue', 'taken-and-lost'] }, message: 'events still open after their due time; sent again' },
    ]);
  });

  it('counts the events it delays and the duplicates it leaves, and no repair, resume, duplicate or delay where there is none', async () => {
    const { metrics, logger, stored, load } = setup();
    stored('a', NOW + 30_000);
    await load({ ids: ['a'], chunkId: 'chunk-1' });
    expect(metrics.counts).toEqual({ EventsDelayed: 1 });
    stored('b', NOW + 30_000);
    await load({ ids: ['a', 'b'], chunkId: 'chunk-2' });
    expect(metrics.counts).toEqual({ EventsDelayed: 2, DuplicatesSuppressed: 1 });
    // What each chunk sent and left, for an operator who turns on the debug level.
    expect(logger.at('debug')).toEqual([
      { level: 'debug', fields: { sent: 1, skipped: 0 }, message: 'chunk loaded' },
      { level: 'debug', fields: { sent: 1, skipped: 1 }, message: 'chunk loaded' },
    ]);
    // A repair chunk whose event is not overdue takes nothing: nothing repaired, and no duplicate either; nor a resume's of an event not held.
    await load({ ids: ['a'], chunkId: 'repair-1', repair: true });
    await load({ ids: ['a'], chunkId: 'resume-1', resume: true });
    expect(metrics.counts).toEqual({ EventsDelayed: 2, DuplicatesSuppressed: 1 });
    // Written out once a batch.
    expect(metrics.flushes).toBe(4);

    // A chunk that takes nothing delays nothing.
    const nothingTaken = setup();
    await nothingTaken.load({ ids: ['gone'], chunkId: 'chunk-0' });
    expect(nothingTaken.metrics.counts).toEqual({ DuplicatesSuppressed: 1 });
  });

  it("reads the series store only for the series among a chunk's ids: a chunk of events reads no series", async () => {
    const { series, stored, load, sentIds } = setup();
    const asked: string[][] = [];
    const read = series.read.bind(series);
    series.read = (ids) => {
      asked.push([...ids]);
      return read(ids);
    };
    stored('a', NOW + 30_000);
    stored('b', NOW + 30_000);
    await load({ ids: ['a', 'b'], chunkId: 'chunk-1' });
    expect(sentIds()).toEqual(['a', 'b']);
    expect(asked).toEqual([]);
    stored('c', NOW + 30_000);
    await load({ ids: ['c', seriesId('s-1')], chunkId: 'chunk-2' });
    expect(sentIds()).toEqual(['a', 'b', 'c']);
    expect(asked).toEqual([[seriesId('s-1')]]);
  });

  it('tries a chunk the delay queue refused again at once, before its message waits out its visibility timeout', async () => {
    const { delayQueue, deps, logger, metrics, stored, load, sentIds } = setup();
    stored('a', NOW + 30_000);
    stored('b', NOW + 30_000);
    delayQueue.refuseSends = QUICK_RETRY_PAUSES_MS.length;
    expect((await load({ ids: ['a', 'b'], chunkId: 'chunk-1' }, 'sqs-1')).batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['a', 'b']);
    expect(metrics.counts.EventsDelayed).toBe(2);
    expect(deps.clock.sleeps).toEqual([...QUICK_RETRY_PAUSES_MS]);
    // Each try again names the chunk's message and why it failed.
    const refused = new TransientError('2 of 2 events could not be sent to the delay queue (refused by the test)');
    expect(logger.lines.filter(({ message }) => message === 'chunk not loaded; trying it again')).toEqual([
      { level: 'warn', fields: { err: refused, messageId: 'sqs-1' }, message: 'chunk not loaded; trying it again' },
      { level: 'warn', fields: { err: refused, messageId: 'sqs-1' }, message: 'chunk not loaded; trying it again' },
    ]);
  });

  it('fails the record when the delay queue refuses every try, so SQS delivers the chunk again', async () => {
    const { delayQueue, metrics, lastErrors, stored, load, sentIds } = setup();
    stored('a', NOW + 30_000);
    stored('b', NOW + 30_000);
    delayQueue.refuseSends = QUICK_RETRY_PAUSES_MS.length + 1;
    expect((await load({ ids: ['a', 'b'], chunkId: 'chunk-1' }, 'sqs-1')).batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(sentIds()).toEqual([]);
    expect(metrics.counts.EventsDelayed).toBe(0);
    // What the dead-letter tools show an operator, should every delivery fail.
    expect(lastErrors.errors.get('sqs-1')?.error.message).toBe('2 of 2 events could not be sent to the delay queue (refused by the test)');
    // Delivered again, the chunk takes its events again and sends them.
    expect((await load({ ids: ['a', 'b'], chunkId: 'chunk-1' }, 'sqs-1')).batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['a', 'b']);
  });
  it("takes, in a resume chunk, its tenant's held events, sends them at once, out of the held index and with an expiry again", async () => {
    const { store, delayQueue, metrics, load, sentIds } = setup();
    const held = (id: string, dueAt: number) =>
      store.put({
        ...storedRecord(id, dueAt, { tenantShard: 'acme#h0' }),
        state: EVENT_STATE.held,
        heldAt: dueAt,
        expiresAt: Number.NaN,
      });
    held('a', NOW - 120_000);
    held('b', NOW - 60_000);
    store.put({ ...storedRecord('cancelled', NOW - 90_000, { tenantShard: 'acme#h0' }), state: EVENT_STATE.cancelled });
    const response = await load({ ids: ['a', 'cancelled', 'b'], chunkId: 'r-1#start', resume: true });
    expect(response.batchItemFailures).toEqual([]);
    expect(sentIds()).toEqual(['a', 'b']);
    expect(delayQueue.sent.map(({ delaySeconds }) => delaySeconds)).toEqual([0, 0]);
    expect(store.records.get('a')).toMatchObject({
      state: EVENT_STATE.queued,
      loadedBy: 'r-1#start',
      // Out of its held partition, into its stored one.
      tenantShard: 'acme#s0',
      expiresAt: NOW / 1000 + 3600,
    });
    expect(metrics.counts.EventsResumed).toBe(2);

    // The same chunk again (a page worked twice) sends them again with a new token; another chunk takes nothing.
    await load({ ids: ['a', 'b'], chunkId: 'r-1#start', resume: true });
    await load({ ids: ['a', 'b'], chunkId: 'r-2#start', resume: true });
    expect(sentIds()).toEqual(['a', 'b', 'a', 'b']);
    expect(store.records.get('a')?.queuedBy).toBe(delayQueue.sent[2]?.queuedBy);
  });

  it("sends a resume chunk's held events oldest first, whatever order its ids come in: they are published as they arrive", async () => {
    const { store, load, sentIds } = setup();
    for (const [id, dueAt] of [
      ['newest', NOW - 10_000],
      ['oldest', NOW - 300_000],
      ['middle', NOW - 60_000],
    ] as const)
      store.put({
        ...storedRecord(id, dueAt, { tenantShard: 'acme#h0' }),
        state: EVENT_STATE.held,
        heldAt: dueAt,
        expiresAt: Number.NaN,
      });
    await load({ ids: ['newest', 'oldest', 'middle'], chunkId: 'r-1#start', resume: true });
    expect(sentIds()).toEqual(['oldest', 'middle', 'newest']);
  });
});
