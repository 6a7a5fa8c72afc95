import { describe, expect, it, vi } from 'vitest';
import { startBulkCancel, workBulkCancelPages, type BulkCancelDeps } from '../src/app/bulk-cancel.js';
import { ingestBatch } from '../src/app/ingest.js';
import { encodeBulkCancelPage, JOB_CURSOR, type NewBulkCancelJob } from '../src/domain/bulk-cancel.js';
import { EVENT_STATE, type EventRecord } from '../src/domain/lifecycle.js';
import { REASON } from '../src/domain/reasons.js';
import { SERIES_STATE } from '../src/domain/series.js';
import { messageEventId, seriesId, tenantShardKey } from '../src/domain/table-keys.js';
import { bulkCancelJob, sqsRecord, storedRecord, topicArn } from './factories.js';
import { FakeClock, MemoryDelayQueue, RecordingChangesQueue, RecordingLogger, RecordingMetrics } from './fakes.js';
import { MemoryBulkCancelJobs, MemoryEventStore, MemoryLabelledEvents } from './memory-event-store.js';
import { acmeTarget, setup as ingestSetup, published } from './ingest-kit.js';
import { MemorySeriesStore } from './memory-series-store.js';

const NOW = 1_900_000_000_000;
const HOUR = 3_600_000;
const FAILURE_TOPIC = topicArn('acme-failures', 'eu-west-1', '111111111111');

function setup() {
  const clock = new FakeClock(NOW);
  const store = new MemoryEventStore(clock);
  const series = new MemorySeriesStore(store);
  const labelled = new MemoryLabelledEvents(store, series);
  const jobs = new MemoryBulkCancelJobs();
  const changesQueue = new RecordingChangesQueue();
  const delayQueue = new MemoryDelayQueue(clock);
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deps = {
    config: { changeCutoffSeconds: 5, retentionSeconds: 3600 },
    store,
    series,
    labelled,
    jobs,
    changesQueue,
    delayQueue,
    clock,
    logger,
    metrics,
  } satisfies BulkCancelDeps;

  /** An open event of a tenant, stored, optionally labelled. */
  const event = (id: string, dueAt: number, labels: readonly string[] = [], tenant = 'acme'): EventRecord => {
    const record = { ...storedRecord(id, dueAt, { tenantShard: tenantShardKey(tenant, 's', 0) }), tenant };
    store.put(record);
    store.openEvents.set(tenant, (store.openEvents.get(tenant) ?? 0) + 1);
    for (const label of labels) labelled.label(record, label);
    return record;
  };

  const job = (overrides: Partial<NewBulkCancelJob> = {}): NewBulkCancelJob => bulkCancelJob(NOW, overrides);

  let deliveries = 0;
  /** Works the pages the queue holds, one delivery each, until none is left; returns how many were worked. */
  const drain = async (): Promise<number> => {
    let worked = 0;
    while (changesQueue.sent.length > 0) {
      const page = changesQueue.sent.shift();
      if (page === undefined) break;
      const response = await workBulkCancelPages(deps, [sqsRecord(encodeBulkCancelPage(page), `delivery-${++deliveries}`)]);
      expect(response.batchItemFailures).toEqual([]);
      worked += 1;
    }
    return worked;
  };
  return { clock, store, series, labelled, jobs, changesQueue, delayQueue, metrics, logger, deps, event, job, drain };
}

describe('bulk cancel by label', () => {
  it("cancels exactly the tenant's open events with the label due before the bound, page by page, and counts them", async () => {
    const { deps, store, jobs, metrics, event, job, drain } = setup();
    const due = (n: number) => NOW + HOUR + n * 1000;
    for (let n = 0; n < 250; n++) event(`c-in-${String(n).padStart(3, '0')}`, due(n), ['campaign-7', 'other']);
    event('c-unlabelled', due(1));
    event('c-other-label', due(2), ['other']);
    event('c-after-bound', due(400), ['campaign-7']);
    event('c-globex', due(3), ['campaign-7'], 'globex');

    await startBulkCancel(deps, job({ dueBefore: due(300) }));
    expect(await drain()).toBe(3);

    const cancelled = [...store.records.values()].filter((record) => record.state === EVENT_STATE.cancelled);
    expect(cancelled).toHaveLength(250);
    expect(cancelled.every((record) => record.id.startsWith('c-in-') && record.cancelledBy === 'b-request-1')).toBe(true);
    expect(store.openEvents.get('acme')).toBe(3);
    expect(store.openEvents.get('globex')).toBe(1);
    expect(await jobs.get('b-request-1')).toMatchObject({
      state: 'done',
      cursor: JOB_CURSOR.end,
      counts: { cancelled: 250, refused: { ended: 0, emitting: 0 } },
    });
    // Each cancel counted, and the counts written out once a batch: three pages, three batches.
    expect(metrics.counts.EventsCancelled).toBe(250);
    expect(metrics.flushes).toBe(3);
  });

  it('reads no series for a page that names none', async () => {
    const { deps, store, series, event, job, drain } = setup();
    event('c-1', NOW + HOUR, ['campaign-7']);
    const read = vi.spyOn(series, 'read');
    await startBulkCancel(deps, job());
    await drain();
    expect(store.records.get('c-1')?.state).toBe(EVENT_STATE.cancelled);
    expect(read).not.toHaveBeenCalled();
  });

  it("never cancels another tenant's event, even one a label entry of the tenant's names, and logs the entries skipped", async () => {
    const { deps, store, labelled, jobs, logger, event, job, drain } = setup();
    const theirs = event('c-theirs', NOW + HOUR, [], 'globex');
    labelled.label({ ...theirs, tenant: 'acme' }, 'campaign-7');
    await startBulkCancel(deps, job());
    await drain();
    expect(store.records.get('c-theirs')?.state).toBe(EVENT_STATE.scheduled);
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 0, refused: { ended: 0, emitting: 0 } });
    expect(logger.at('warn', 'error')).toEqual([
      {
        level: 'warn',
        fields: { jobId: 'b-request-1', skipped: 1 },
        message: "index entries whose events are gone or not the tenant's: skipped",
      },
    ]);
  });

  it('counts the events already ended, and those due within the change cutoff, as refused, and skips none', async () => {
    const { deps, store, jobs, logger, event, job, drain } = setup();
    event('c-open', NOW + HOUR, ['campaign-7']);
    event('c-soon', NOW + 2_000, ['campaign-7']);
    const ended = event('c-ended', NOW + HOUR, ['campaign-7']);
    store.put({ ...ended, state: EVENT_STATE.cancelled, cancelledBy: 'another-request' });
    await startBulkCancel(deps, job());
    await drain();
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 1, refused: { ended: 1, emitting: 1 } });
    expect(store.records.get('c-soon')?.state).toBe(EVENT_STATE.scheduled);
    expect(logger.at('warn', 'error')).toEqual([]);
  });

  it('cancels the events held while the tenant is paused, due before the job started, and counts none of the ended ones due then', async () => {
    const { deps, store, jobs, logger, event, job, drain } = setup();
    const held = event('c-held', NOW - HOUR, ['campaign-7']);
    store.put({ ...held, state: EVENT_STATE.held, heldAt: NOW - HOUR });
    const emitted = event('c-emitted', NOW - 2 * HOUR, ['campaign-7']);
    store.put({ ...emitted, state: EVENT_STATE.emitted });
    event('c-open', NOW + HOUR, ['campaign-7']);
    await startBulkCancel(deps, job());
    await drain();
    expect(store.records.get('c-held')).toMatchObject({ state: EVENT_STATE.cancelled, cancelledBy: 'b-request-1' });
    expect(store.records.get('c-emitted')?.state).toBe(EVENT_STATE.emitted);
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 2, refused: { ended: 0, emitting: 0 } });
    expect(logger.at('warn', 'error')).toEqual([]);
  });

  it('fails the page when a cancel loses a race with another change that left the event open: the page worked again cancels it', async () => {
    const { deps, store, jobs, metrics, logger, event, job } = setup();
    event('c-1', NOW + HOUR, ['campaign-7']);
    event('c-2', NOW + HOUR + 1, ['campaign-7']);
    await startBulkCancel(deps, job());
    const page = sqsRecord(encodeBulkCancelPage({ jobId: 'b-request-1', from: JOB_CURSOR.start }), 'first-page');
    store.refuseCancels = 1;
    expect((await workBulkCancelPages(deps, [page])).batchItemFailures).toEqual([{ itemIdentifier: 'first-page' }]);
    expect((await jobs.get('b-request-1'))?.cursor).toBe(JOB_CURSOR.start);
    expect(metrics.counts.EventsCancelled).toBe(1);
    expect(logger.at('warn', 'error')).toEqual([
      {
        level: 'error',
        fields: {
          err: expect.objectContaining({ message: 'cancel of c-1 raced with another change; the page is retried' }),
          messageId: 'first-page',
        },
        message: 'record failed; it will be retried',
      },
    ]);

    expect((await workBulkCancelPages(deps, [page])).batchItemFailures).toEqual([]);
    expect(store.records.get('c-1')?.state).toBe(EVENT_STATE.cancelled);
    expect(store.records.get('c-2')?.state).toBe(EVENT_STATE.cancelled);
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 2, refused: { ended: 0, emitting: 0 } });
    expect(metrics.counts.EventsCancelled).toBe(2);
  });

  it('counts a page delivered twice at once only once', async () => {
    const { deps, store, jobs, event, job } = setup();
    for (let n = 0; n < 40; n++) event(`c-${n}`, NOW + HOUR + n, ['campaign-7']);
    await deps.jobs.create(job());
    const body = encodeBulkCancelPage({ jobId: 'b-request-1', from: JOB_CURSOR.start });
    const responses = await Promise.all([
      workBulkCancelPages(deps, [sqsRecord(body, 'copy-1')]),
      workBulkCancelPages(deps, [sqsRecord(body, 'copy-2')]),
    ]);
    expect(responses.flatMap((response) => response.batchItemFailures)).toEqual([]);
    expect(jobs.refusedSteps).toBe(1);
    expect((await jobs.get('b-request-1'))?.counts.cancelled).toBe(40);
    expect([...store.records.values()].filter((record) => record.state === EVENT_STATE.cancelled)).toHaveLength(40);
  });

  it('sends the next page again when the delivery that moved the cursor comes again, and only then', async () => {
    const { deps, changesQueue, jobs, event, job, drain } = setup();
    for (let n = 0; n < 150; n++) event(`c-${String(n).padStart(3, '0')}`, NOW + HOUR + n, ['campaign-7']);
    await deps.jobs.create(job());
    const first = sqsRecord(encodeBulkCancelPage({ jobId: 'b-request-1', from: JOB_CURSOR.start }), 'first-page');
    // The cursor moves, then the send of the next page fails: the page is retried.
    changesQueue.refuseSends = 1;
    expect((await workBulkCancelPages(deps, [first])).batchItemFailures).toEqual([{ itemIdentifier: 'first-page' }]);
    expect(changesQueue.sent).toEqual([]);
    // Another copy of the worked page finds the cursor moved by someone else: it ends there.
    await workBulkCancelPages(deps, [sqsRecord(first.body, 'another-copy')]);
    expect(changesQueue.sent).toEqual([]);
    // The retry of the delivery that moved it sends what follows.
    await workBulkCancelPages(deps, [first]);
    expect(changesQueue.sent).toEqual([{ jobId: 'b-request-1', from: (await jobs.get('b-request-1'))?.cursor }]);
    await drain();
    expect((await jobs.get('b-request-1'))?.counts.cancelled).toBe(150);
  });

  it("counts a page's cancels made by a delivery that stopped before counting them as the job's", async () => {
    const { deps, store, jobs, event, job, drain } = setup();
    for (let n = 0; n < 30; n++) event(`c-${n}`, NOW + HOUR + n, ['campaign-7']);
    await startBulkCancel(deps, job());
    // A delivery cancelled the first ten, then stopped.
    for (let n = 0; n < 10; n++)
      await store.cancel(`c-${n}`, { tenant: 'acme', cutoffMs: 5000 }, { by: 'b-request-1', publishedAt: NOW, expiresAt: 0 });
    await drain();
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 30, refused: { ended: 0, emitting: 0 } });
  });

  it("tells the counts to the failure topic the request named, once the job is done, through the emitter's queue", async () => {
    const { deps, delayQueue, event, job, drain } = setup();
    event('c-1', NOW + HOUR, ['campaign-7']);
    await startBulkCancel(deps, job({ failureTopic: FAILURE_TOPIC, dueBefore: NOW + 2 * HOUR }));
    await drain();
    expect(delayQueue.notices).toHaveLength(1);
    expect(delayQueue.notices[0]).toMatchObject({
      noticeId: 'n-b-request-1',
      tenant: 'acme',
      failureTopic: FAILURE_TOPIC,
      notice: {
        reason: REASON.BULK_CANCEL_DONE,
        event: { action: 'cancel', label: 'campaign-7', due_before: new Date(NOW + 2 * HOUR).toISOString(), failure_topic: FAILURE_TOPIC },
        details: { jobId: 'b-request-1', label: 'campaign-7', cancelled: 1, refused: { ended: 0, emitting: 0 } },
      },
    });
    expect(delayQueue.notices[0]?.deadLetterTopic).toBeUndefined();
  });

  it('tells nobody when the request named no failure topic: its counts are in the job and the logs', async () => {
    const { deps, delayQueue, logger, event, job, drain, jobs } = setup();
    event('c-1', NOW + HOUR, ['campaign-7']);
    await startBulkCancel(deps, job());
    await drain();
    expect((await jobs.get('b-request-1'))?.state).toBe('done');
    expect(delayQueue.notices).toEqual([]);
    expect(logger.at('info')[0]).toEqual({
      level: 'info',
      fields: { jobId: 'b-request-1', tenant: 'acme', label: 'campaign-7', dueBefore: undefined, dryRun: false },
      message: 'bulk cancel started',
    });
    expect(logger.at('info').at(-1)).toEqual({
      level: 'info',
      fields: {
        jobId: 'b-request-1',
        tenant: 'acme',
        label: 'campaign-7',
        counts: { cancelled: 1, refused: { ended: 0, emitting: 0 } },
        dryRun: false,
      },
      message: 'bulk cancel done: cancelled 1; refused: 0 already ended, 0 within the change cutoff',
    });
  });

  it('counts what a dry run would cancel, and changes nothing', async () => {
    const { deps, store, jobs, event, job, drain } = setup();
    for (let n = 0; n < 120; n++) event(`c-${n}`, NOW + HOUR + n, ['campaign-7']);
    event('c-soon', NOW + 1_000, ['campaign-7']);
    await startBulkCancel(deps, job({ dryRun: true }));
    await drain();
    expect((await jobs.get('b-request-1'))?.counts).toEqual({ cancelled: 120, refused: { ended: 0, emitting: 1 } });
    expect([...store.records.values()].every((record) => record.state === EVENT_STATE.scheduled)).toBe(true);
    expect(store.calls.cancel).toBeUndefined();
  });

  it('is one job however often its request is delivered, its first page sent again only until a page moved it, a request found again logged as such', async () => {
    const { deps, changesQueue, logger, event, job, drain } = setup();
    event('c-1', NOW + HOUR, ['campaign-7']);
    changesQueue.refuseSends = 1;
    await expect(startBulkCancel(deps, job())).rejects.toThrow('SQS down');
    await startBulkCancel(deps, job());
    expect(changesQueue.sent).toEqual([{ jobId: 'b-request-1', from: JOB_CURSOR.start }]);
    await drain();
    const again = await startBulkCancel(deps, job({ fromMs: NOW + 1 }));
    expect(again).toMatchObject({ state: 'done', fromMs: NOW, counts: { cancelled: 1 } });
    expect(changesQueue.sent).toEqual([]);
    // The delivery that created the job failed before saying so: the two after it find it.
    const askedAgain = {
      level: 'info',
      fields: { jobId: 'b-request-1', tenant: 'acme', label: 'campaign-7', dueBefore: undefined, dryRun: false },
      message: 'bulk cancel asked for again: the same job',
    };
    expect(
      logger.at('info').filter(({ message }) => message.startsWith('bulk cancel ') && !message.startsWith('bulk cancel done')),
    ).toEqual([askedAgain, askedAgain]);
  });

  it('drops a message that is not a page, and a page of an unknown job, without failing the batch, and logs each', async () => {
    const { deps, logger } = setup();
    const garbage = 'not json '.repeat(50);
    const response = await workBulkCancelPages(deps, [
      sqsRecord(garbage, 'garbage'),
      sqsRecord(encodeBulkCancelPage({ jobId: 'b-unknown', from: JOB_CURSOR.start }), 'unknown'),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(logger.at('warn', 'error')).toEqual(
      expect.arrayContaining([
        // The body quoted as far as a log line needs to recognise it.
        { level: 'error', fields: { messageId: 'garbage', body: garbage.slice(0, 200) }, message: 'not a page of a change job: dropped' },
        { level: 'warn', fields: { jobId: 'b-unknown' }, message: 'page of an unknown bulk cancel job: dropped' },
      ]),
    );
    expect(logger.at('warn', 'error')).toHaveLength(2);
  });
});

describe('a page that names a series', () => {
  /** A labelled series, ingested, then the first page of a cancel by its label, worked by the changes function on the same stores. */
  async function seriesLabelled() {
    const context = ingestSetup();
    const deps = { ...context.deps, labelled: new MemoryLabelledEvents(context.store, context.series) };
    const labelled = { schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: 'tick', labels: ['campaign-7'] };
    await ingestBatch(context.deps, [published(labelled, 'msg-1')]);
    await ingestBatch(context.deps, [published({ action: 'cancel', label: 'campaign-7' }, 'cancel-1')]);
    const [page] = context.changesQueue.sent.splice(0);
    if (page === undefined) throw new Error('no page sent');
    const work = (messageId = 'page-1') => workBulkCancelPages(deps, [sqsRecord(encodeBulkCancelPage(page), messageId)]);
    const job = () => deps.jobs.get('b-cancel-1');
    const before = context.logger.lines.length;
    /** The lines logged since the page's first delivery. */
    const logged = () => context.logger.lines.slice(before);
    return { ...context, id: seriesId(messageEventId('msg-1')), work, job, logged };
  }

  it('counts the series it cancels as EventsCancelled, and logs it with its job and the occurrences its cancel took', async () => {
    const { id, work, job, metrics, logged } = await seriesLabelled();
    expect((await work()).batchItemFailures).toEqual([]);
    expect((await job())?.counts).toEqual({ cancelled: 11, refused: { ended: 0, emitting: 0 } });
    // The series, and the nine occurrences the page's first ten cancelled on their own entries: the tenth, its cancel took first.
    expect(metrics.counts.EventsCancelled).toBe(10);
    expect(logged()[0]).toEqual({
      level: 'info',
      fields: { jobId: 'b-cancel-1', seriesId: id, occurrencesCancelled: 10 },
      message: 'series cancelled by a bulk cancel',
    });
  });

  it('reads the series of a page from the series store, and only its events from the event store', async () => {
    const { id, work, store, series } = await seriesLabelled();
    const seriesRead = vi.spyOn(series, 'read');
    const eventsRead = vi.spyOn(store, 'read');
    await work();
    expect(seriesRead.mock.calls).toEqual([[[id]]]);
    expect(eventsRead.mock.calls.flat(2)).toHaveLength(10);
    expect(eventsRead.mock.calls.flat(2)).not.toContain(id);
  });

  it("cancels, without a label, every open event and series of the tenant, counting the occurrences its series' cancels took, and none of another tenant's", async () => {
    const context = ingestSetup();
    const deps = { ...context.deps, labelled: new MemoryLabelledEvents(context.store, context.series) };
    await ingestBatch(context.deps, [
      published({ schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: 'tick' }, 'msg-series'),
      published({ date: new Date(NOW + 2 * HOUR).toISOString(), target: acmeTarget, user: 'alice', payload: 'later' }, 'msg-later'),
    ]);
    const globex = { ...storedRecord('c-globex', NOW + HOUR, { tenantShard: tenantShardKey('globex', 's', 0) }), tenant: 'globex' };
    context.store.put(globex);
    const open = [...context.store.records.values()].filter((record) => record.tenant === 'acme' && record.state !== EVENT_STATE.cancelled);
    await startBulkCancel(deps, bulkCancelJob(NOW, { jobId: 'b-remove', label: undefined }));
    for (let page = context.changesQueue.sent.shift(); page !== undefined; page = context.changesQueue.sent.shift())
      expect((await workBulkCancelPages(deps, [sqsRecord(encodeBulkCancelPage(page), `page-${page.from}`)])).batchItemFailures).toEqual([]);

    const job = await deps.jobs.get('b-remove');
    // The event, the series, and each occurrence it had materialised, none listed on its own.
    expect(job?.counts).toEqual({ cancelled: open.length + 1, refused: { ended: 0, emitting: 0 } });
    expect(context.series.records.get(seriesId(messageEventId('msg-series')))?.state).toBe(SERIES_STATE.cancelled);
    expect(open.every((record) => context.store.records.get(record.id)?.state === EVENT_STATE.cancelled)).toBe(true);
    expect(context.store.records.get('c-globex')?.state).toBe(EVENT_STATE.scheduled);
  });

  it('counts a series that completed between its read and its cancel as ended, not cancelled', async () => {
    const context = await seriesLabelled();
    const cancel = context.series.cancel.bind(context.series);
    context.series.cancel = async (id, tenant, change) => {
      const current = context.series.records.get(id);
      if (current !== undefined) context.series.records.set(id, { ...current, state: SERIES_STATE.completed });
      return cancel(id, tenant, change);
    };
    expect((await context.work()).batchItemFailures).toEqual([]);
    expect((await context.job())?.counts).toEqual({ cancelled: 10, refused: { ended: 1, emitting: 0 } });
    expect(context.logged().map(({ message }) => message)).toEqual([
      'bulk cancel done: cancelled 10; refused: 1 already ended, 0 within the change cutoff',
    ]);
  });

  it('fails the page when the cancel of a series loses a race with another change that left it active: the page worked again cancels it', async () => {
    const context = await seriesLabelled();
    const cancel = context.series.cancel.bind(context.series);
    let raced = false;
    context.series.cancel = async (id, tenant, change) => {
      if (raced) return cancel(id, tenant, change);
      raced = true;
      return { outcome: 'refused', current: context.series.records.get(id) };
    };
    expect((await context.work()).batchItemFailures).toEqual([{ itemIdentifier: 'page-1' }]);
    expect(context.lastErrors.errors.get('page-1')?.error).toEqual({
      name: 'TransientError',
      message: `cancel of series ${context.id} raced with another change; the page is retried`,
    });
    expect((await context.work()).batchItemFailures).toEqual([]);
    expect(context.series.records.get(context.id)?.state).toBe(SERIES_STATE.cancelled);
    expect((await context.job())?.counts).toEqual({ cancelled: 11, refused: { ended: 0, emitting: 0 } });
  });
});
