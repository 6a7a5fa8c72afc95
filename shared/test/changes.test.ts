import { describe, expect, it } from 'vitest';
import type { BulkCancelDeps } from '../src/app/bulk-cancel.js';
import { runChanges } from '../src/app/changes.js';
import { RESUME_PAGE_EVENTS, workResumePages, type ResumeDeps } from '../src/app/resume.js';
import { shardOf } from '../src/domain/sharding.js';
import { heldShardKey } from '../src/domain/table-keys.js';
import { BULK_CANCEL_PAGE_SIZE, encodeBulkCancelPage, JOB_CURSOR } from '../src/domain/bulk-cancel.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { encodeChangeJob, type ChangeJob } from '../src/domain/messages.js';
import { bulkCancelJob, sqsRecord, storedRecord } from './factories.js';
import { MemorySeriesStore } from './memory-series-store.js';
import { FakeClock, MemoryDelayQueue, RecordingChangesQueue, RecordingLoadingQueue, RecordingLogger, RecordingMetrics } from './fakes.js';
import { MemoryBulkCancelJobs, MemoryDueIndex, MemoryEventStore, MemoryLabelledEvents } from './memory-event-store.js';

const NOW = 1_900_000_000_000;
const LAYOUT = { bucketSeconds: 60, shardCount: 4 };

/** `layout`: the held index's shards; `pageSize`: the entries of a page of its queries. */
function setup({ layout = LAYOUT, pageSize = Number.POSITIVE_INFINITY } = {}) {
  const store = new MemoryEventStore();
  const loadingQueue = new RecordingLoadingQueue();
  const changesQueue = new RecordingChangesQueue();
  const dueIndex = new MemoryDueIndex(store, pageSize);
  const logger = new RecordingLogger();
  const deps = {
    config: layout,
    dueIndex,
    loadingQueue,
    changesQueue,
    logger,
    metrics: new RecordingMetrics(),
  } satisfies ResumeDeps;
  /** A held event of `tenant`, due `agoMs` before NOW. */
  const held = (id: string, agoMs: number, tenant = 'acme') =>
    store.put({
      ...storedRecord(id, NOW - agoMs, { tenantShard: heldShardKey(tenant, shardOf(id, layout)) }),
      tenant,
      state: EVENT_STATE.held,
      expiresAt: Number.NaN,
    });
  const work = (job: ChangeJob) => workResumePages(deps, [sqsRecord(encodeChangeJob(job))]);
  return { deps, store, dueIndex, loadingQueue, changesQueue, logger, held, work };
}

describe('a resume', () => {
  it("hands its tenant's held events to loading oldest first, across shards, and only its tenant's, and logs its end", async () => {
    const { loadingQueue, changesQueue, logger, held, work } = setup();
    for (const [index, id] of ['e', 'c', 'a', 'd', 'b'].entries()) held(id, (index + 1) * 1000);
    held('other', 10_000, 'globex');
    const response = await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' });
    expect(response.batchItemFailures).toEqual([]);
    expect(loadingQueue.sent).toEqual([{ ids: ['b', 'd', 'a', 'c', 'e'], chunkId: 'r-1#start', resume: true }]);
    // Not a full page: the job is done.
    expect(changesQueue.sentJobs).toEqual([]);
    expect(logger.at('info')).toEqual([
      { level: 'info', fields: { tenant: 'acme', jobId: 'r-1', lastPage: 5 }, message: 'resume: every held event handed out' },
    ]);
  });

  it('goes on a page after another: a full page sends the next, which starts after its last event', async () => {
    const { loadingQueue, changesQueue, held, work } = setup();
    for (let index = 0; index < RESUME_PAGE_EVENTS + 5; index++) held(`e${String(index).padStart(3, '0')}`, 1_000_000 - index * 1000);
    await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' });
    const [first] = loadingQueue.sent;
    expect(first?.ids).toHaveLength(RESUME_PAGE_EVENTS);
    expect(first?.ids[0]).toBe('e000');
    const [next] = changesQueue.sentJobs;
    expect(next).toEqual({
      job: { kind: 'resume', jobId: 'r-1', tenant: 'acme', after: { dueAt: NOW - 1_000_000 + 99_000, id: 'e099' } },
      delaySeconds: 0,
    });

    await work(next?.job as ChangeJob);
    expect(loadingQueue.sent[1]).toEqual({
      ids: ['e100', 'e101', 'e102', 'e103', 'e104'],
      chunkId: `r-1#${NOW - 1_000_000 + 99_000}#e099`,
      resume: true,
    });
    expect(changesQueue.sentJobs).toHaveLength(1);
  });

  it('hands loading nothing when its tenant holds nothing, and ends there', async () => {
    const { loadingQueue, changesQueue, held, work } = setup();
    held('other', 1000, 'globex');
    expect((await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' })).batchItemFailures).toEqual([]);
    expect(loadingQueue.sent).toEqual([]);
    expect(changesQueue.sentJobs).toEqual([]);
  });

  it("reads a shard's held events a page of the index after another, and no further than a page of the resume needs", async () => {
    const { dueIndex, loadingQueue, changesQueue, held, work } = setup({ layout: { ...LAYOUT, shardCount: 1 }, pageSize: 25 });
    for (let index = 0; index < 150; index++) held(`e${String(index).padStart(3, '0')}`, 1_000_000 - index * 1000);
    await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' });
    expect(loadingQueue.sent[0]?.ids).toEqual(
      Array.from({ length: RESUME_PAGE_EVENTS }, (_, index) => `e${String(index).padStart(3, '0')}`),
    );
    // Four pages of 25 make the resume's page of 100, and a fifth tells that no event due in the
    // millisecond of the 100th, with an id before it, follows: the rest is left for the next.
    expect(dueIndex.pagesRead).toBe(5);
    expect(changesQueue.sentJobs).toHaveLength(1);
  });

  it('fails the page when loading cannot be reached, to be worked again', async () => {
    const { loadingQueue, held, work } = setup();
    held('a', 1000);
    loadingQueue.refuseFromCall = 0;
    expect((await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' })).batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
  });
});

describe('the changes function', () => {
  /** The resume's fakes, and a bulk cancel job of acme's events labelled `campaign-7`, `labelled` of them. */
  async function withBulkCancel(labelled: number) {
    const resume = setup();
    const clock = new FakeClock(NOW);
    const labels = new MemoryLabelledEvents(resume.store);
    const jobs = new MemoryBulkCancelJobs();
    const deps = {
      ...resume.deps,
      config: { ...LAYOUT, changeCutoffSeconds: 5, retentionSeconds: 3600 },
      store: resume.store,
      series: new MemorySeriesStore(resume.store),
      labelled: labels,
      jobs,
      delayQueue: new MemoryDelayQueue(clock),
      clock,
    } satisfies ResumeDeps & BulkCancelDeps;
    for (let n = 0; n < labelled; n++) {
      const record = storedRecord(`c-${n}`, NOW + 3_600_000 + n);
      resume.store.put(record);
      labels.label(record, 'campaign-7');
    }
    const { job } = await jobs.create(bulkCancelJob(NOW, { jobId: 'b-1' }));
    const resumeRecord = sqsRecord(encodeChangeJob({ kind: 'resume', jobId: 'r-1', tenant: 'acme' }), 'resume-page');
    const bulkRecord = sqsRecord(encodeBulkCancelPage({ jobId: job.jobId, from: JOB_CURSOR.start }), 'bulk-page');
    return { ...resume, deps, jobs, resumeRecord, bulkRecord };
  }

  it("works each record as its job's kind, a resume's page or a bulk cancel's, in one batch or alone, and drops what is neither", async () => {
    const { deps, jobs, loadingQueue, held, resumeRecord, bulkRecord } = await withBulkCancel(1);
    held('a', 1000);
    const response = await runChanges(deps, [resumeRecord, sqsRecord('not json', 'garbage'), bulkRecord]);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(loadingQueue.sent).toEqual([{ ids: ['a'], chunkId: 'r-1#start', resume: true }]);
    expect(await jobs.get('b-1')).toMatchObject({ state: 'done', counts: { cancelled: 1 } });

    expect(await runChanges(deps, [resumeRecord])).toEqual({ batchItemFailures: [] });
    expect(loadingQueue.sent).toHaveLength(2);
    expect(await runChanges(deps, [bulkRecord])).toEqual({ batchItemFailures: [] });
  });

  it('fails the records of either kind whose work failed, and only those, to be worked again', async () => {
    const { deps, loadingQueue, changesQueue, held, resumeRecord, bulkRecord } = await withBulkCancel(BULK_CANCEL_PAGE_SIZE);
    held('a', 1000);
    loadingQueue.refuseFromCall = 0;
    // A full page of the bulk cancel sends the next, which SQS refuses.
    changesQueue.refuseSends = 1;
    const response = await runChanges(deps, [resumeRecord, bulkRecord, sqsRecord('not json', 'garbage')]);
    expect(response.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier).sort()).toEqual(['bulk-page', 'resume-page']);
  });
});
