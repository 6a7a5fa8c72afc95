import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RESUME_PAGE_EVENTS, workResumePages, type ResumeDeps } from '../src/app/changes.js';
import { heldShardKey } from '../src/domain/buckets.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { encodeChangeJob, type ChangeJob } from '../src/domain/messages.js';
import { sqsRecord, storedRecord } from './factories.js';
import { RecordingChangesQueue, RecordingLoadingQueue, RecordingMetrics } from './fakes.js';
import { MemoryDueIndex, MemoryEventStore } from './memory-event-store.js';

const NOW = 1_900_000_000_000;
const LAYOUT = { bucketSeconds: 60, shardCount: 4 };

function setup() {
  const store = new MemoryEventStore();
  const loadingQueue = new RecordingLoadingQueue();
  const changesQueue = new RecordingChangesQueue();
  const deps = {
    config: LAYOUT,
    dueIndex: new MemoryDueIndex(store),
    loadingQueue,
    changesQueue,
    logger: pino({ level: 'silent' }),
    metrics: new RecordingMetrics(),
  } satisfies ResumeDeps;
  /** A held event of `tenant`, due `agoMs` before NOW. */
  const held = (id: string, agoMs: number, tenant = 'acme') =>
    store.put({
      ...storedRecord(id, NOW - agoMs, { bucketShard: heldShardKey(tenant, id, LAYOUT) }),
      tenant,
      state: EVENT_STATE.held,
      expiresAt: Number.NaN,
    });
  const work = (job: ChangeJob) => workResumePages(deps, [sqsRecord(encodeChangeJob(job))]);
  return { deps, store, loadingQueue, changesQueue, held, work };
}

describe('a resume', () => {
  it("hands its tenant's held events to loading oldest first, across shards, and only its tenant's", async () => {
    const { loadingQueue, changesQueue, held, work } = setup();
    for (const [index, id] of ['e', 'c', 'a', 'd', 'b'].entries()) held(id, (index + 1) * 1000);
    held('other', 10_000, 'globex');
    const response = await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' });
    expect(response.batchItemFailures).toEqual([]);
    expect(loadingQueue.sent).toEqual([{ ids: ['b', 'd', 'a', 'c', 'e'], chunkId: 'r-1#start', resume: true }]);
    // Not a full page: the job is done.
    expect(changesQueue.sentJobs).toEqual([]);
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

  it('fails the page when loading cannot be reached, to be worked again', async () => {
    const { loadingQueue, held, work } = setup();
    held('a', 1000);
    loadingQueue.refuseFromCall = 0;
    expect((await work({ kind: 'resume', jobId: 'r-1', tenant: 'acme' })).batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
  });
});
