import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import { heldShardKeys } from '../domain/table-keys.js';
import { decodeChangeJob, type ChangeJob } from '../domain/messages.js';
import { type FailureLog, processBatch } from './batch.js';
import type { DueEventRef, DueIndex } from './ports/due-index.js';
import type { Logger, SchedulerMetrics } from './ports/process.js';
import type { ChangesQueue, LoadingQueue } from './ports/queues.js';
import type { PauseAuthor, ResumeOutcome, TenantPauses } from './ports/tenants.js';

/**
 * A tenant's resume: ending its pause starts a job on the changes queue whose pages send the
 * events held during the pause to the loading function, oldest first, which sends them on to the
 * delay queue.
 */

export interface ResumeDeps {
  readonly config: Pick<SchedulerConfig, 'shardCount'>;
  readonly dueIndex: DueIndex;
  readonly loadingQueue: LoadingQueue;
  readonly changesQueue: ChangesQueue;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where a failed record leaves its last error, for the dead-letter tools. */
  readonly failureLog?: FailureLog;
}

/** Held events one page hands out: one loading chunk. */
export const RESUME_PAGE_EVENTS = 100;
/**
 * Seconds before a resume's first page runs: a hold written just before the pause ended is in
 * the due index by then (a GSI is updated shortly after its table), and the first page finds it.
 */
export const RESUME_SETTLE_SECONDS = 2;

/** The oldest held events of a tenant after a cursor, a resume's page of them, from its held shards merged. */
export async function oldestHeld(
  deps: Pick<ResumeDeps, 'config' | 'dueIndex'>,
  tenant: string,
  after: ChangeJob['after'],
): Promise<readonly DueEventRef[]> {
  return deps.dueIndex.page(heldShardKeys(tenant, deps.config.shardCount), after, RESUME_PAGE_EVENTS);
}

/**
 * Works one page of a resume: hands the next held events to the loading function as one chunk,
 * named after the job and the page's cursor (a page worked again takes its own events again, and
 * sends them again with new tokens), then sends the next page if this one was full. The events
 * are taken out of the held partitions by loading, and the cursor moves past them in any case.
 */
async function resumePage(deps: ResumeDeps, job: ChangeJob): Promise<void> {
  const held = await oldestHeld(deps, job.tenant, job.after);
  if (held.length > 0) {
    const cursor = job.after === undefined ? 'start' : `${job.after.dueAt}#${job.after.id}`;
    await deps.loadingQueue.send([{ ids: held.map(({ id }) => id), chunkId: `${job.jobId}#${cursor}`, resume: true }]);
  }
  const last = held.at(-1);
  if (held.length === RESUME_PAGE_EVENTS && last !== undefined) {
    await deps.changesQueue.send({ ...job, after: { dueAt: last.dueAt, id: last.id } }, 0);
    return;
  }
  deps.logger.info({ tenant: job.tenant, jobId: job.jobId, lastPage: held.length }, 'resume: every held event handed out');
}

/** The pages of resumes among the changes function's records. */
export async function workResumePages(deps: ResumeDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps, async (record) => resumePage(deps, decodeChangeJob(record.body)));
  deps.metrics.flush();
  return response;
}

/**
 * Ends the author's pause of a tenant and, unless the other owner's pause stands, starts the job
 * that sends its held events: the operator's resume and the tenant's alike. The job starts
 * whether or not the tenant was paused: a resume made again (its job lost, or an input delivered
 * again) finds any event still held. A tenant's resume that a later request superseded starts none.
 */
export async function resumeTenant(
  deps: { readonly pauses: Pick<TenantPauses, 'resume'>; readonly changesQueue: ChangesQueue },
  tenant: string,
  author: PauseAuthor,
  jobId: string,
  now: number,
): Promise<ResumeOutcome> {
  const outcome = await deps.pauses.resume(tenant, author, now);
  if (outcome.applied && outcome.stillPaused === undefined)
    await deps.changesQueue.send({ kind: 'resume', jobId, tenant }, RESUME_SETTLE_SECONDS);
  return outcome;
}
