import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { SchedulerConfig } from '../config.js';
import {
  addCounts,
  BULK_CANCEL_PAGE_SIZE,
  bulkCancelDoneNotice,
  countOf,
  cursorAfter,
  decodeBulkCancelPage,
  describeCounts,
  JOB_CURSOR,
  positionOf,
  type BulkCancelCounts,
  type BulkCancelJob,
  type BulkCancelPage,
  type EventCount,
  type JobPosition,
  type NewBulkCancelJob,
  seriesCountOf,
} from '../domain/bulk-cancel.js';
import { expiresAtFor } from '../domain/event.js';
import type { EventRecord } from '../domain/lifecycle.js';
import { TransientError } from '../domain/reasons.js';
import type { SeriesRecord } from '../domain/series.js';
import { isSeriesId, noticeId } from '../domain/table-keys.js';
import { type FailureLog, processBatch } from './batch.js';
import type { BulkCancelJobs, LabelledEvents } from './ports/bulk-cancel.js';
import type { EventStore } from './ports/event-store.js';
import type { Clock, Logger, SchedulerMetrics } from './ports/process.js';
import type { ChangesQueue, DelayQueue } from './ports/queues.js';
import type { SeriesStore } from './ports/series-store.js';
import { cancelSeries } from './series.js';

/**
 * Bulk cancel, by label or of every open event of a tenant: a job is created (by ingest for a
 * tenant's request, by label; by the admin CLI for an operator's, either) with its first page on the `changes` queue; the changes function works each page and
 * sends the next, until a page finds no more events. Then the counts go to the tenant's failure
 * topic, if the request named one.
 */

/** Cancels made at once within a page: each is a transaction on the tenant's counter too, where more at once would conflict. */
const CANCELS_AT_ONCE = 10;

/**
 * Creates a job and sends its first page. A job that exists already (the request delivered
 * again) gets its first page sent again while no page has moved it: the first send may have
 * failed, and a second copy of a page counts once.
 */
export async function startBulkCancel(
  deps: { readonly jobs: Pick<BulkCancelJobs, 'create'>; readonly changesQueue: Pick<ChangesQueue, 'sendPage'>; readonly logger: Logger },
  job: NewBulkCancelJob,
): Promise<BulkCancelJob> {
  const { created, job: current } = await deps.jobs.create(job);
  // Every page that moves the cursor names itself: a job no page has moved is at its start.
  if (current.movedBy === undefined) await deps.changesQueue.sendPage(current.jobId, JOB_CURSOR.start);
  deps.logger.info(
    { jobId: current.jobId, tenant: current.tenant, label: current.label, dueBefore: current.dueBefore, dryRun: current.dryRun },
    created ? 'bulk cancel started' : 'bulk cancel asked for again: the same job',
  );
  return current;
}

export interface BulkCancelDeps {
  readonly config: Pick<SchedulerConfig, 'changeCutoffSeconds' | 'retentionSeconds'>;
  readonly store: Pick<EventStore, 'read' | 'cancel'>;
  /** A series carries its labels too: the job cancels it as a cancel by its id does. */
  readonly series: Pick<SeriesStore, 'read' | 'cancel'>;
  readonly labelled: LabelledEvents;
  readonly jobs: BulkCancelJobs;
  readonly changesQueue: ChangesQueue;
  readonly delayQueue: Pick<DelayQueue, 'sendNotice'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Where a failed record leaves its last error, for the dead-letter tools. */
  readonly failureLog?: FailureLog;
}

/** What the job does once its cursor has moved: the next page, or, when done, its notice. */
async function followUp(deps: BulkCancelDeps, job: BulkCancelJob): Promise<void> {
  if (job.state === 'running') return deps.changesQueue.sendPage(job.jobId, job.cursor);
  deps.logger.info(
    { jobId: job.jobId, tenant: job.tenant, label: job.label, counts: job.counts, dryRun: job.dryRun },
    `bulk cancel done: ${describeCounts(job.counts, job.dryRun)}`,
  );
  // Handed to the emitter, the only role that publishes to clients' topics, which publishes it once however often it is sent.
  if (job.failureTopic !== undefined)
    await deps.delayQueue.sendNotice(
      noticeId(job.jobId),
      job.tenant,
      { failureTopic: job.failureTopic },
      bulkCancelDoneNotice(job, deps.clock.now()),
    );
}

/** Counts one event of a page, cancelling it unless this is a dry run. */
async function settle(deps: BulkCancelDeps, job: BulkCancelJob, record: EventRecord | undefined): Promise<EventCount> {
  const cutoffMs = deps.config.changeCutoffSeconds * 1000;
  const count = countOf(record, job, deps.clock.now(), cutoffMs);
  if (count !== 'cancellable' || record === undefined) return count;
  if (job.dryRun) return 'cancelled';
  const now = deps.clock.now();
  const result = await deps.store.cancel(
    record.id,
    { tenant: job.tenant, cutoffMs },
    { by: job.jobId, publishedAt: job.createdAt, expiresAt: expiresAtFor(now, deps.config.retentionSeconds) },
  );
  if (result.outcome === 'cancelled') {
    deps.metrics.count('EventsCancelled');
    return 'cancelled';
  }
  const refused = countOf(result.current, job, deps.clock.now(), cutoffMs);
  if (refused === 'cancellable') throw new TransientError(`cancel of ${record.id} raced with another change; the page is retried`);
  return refused;
}

/**
 * Counts one series of a page, cancelling it unless this is a dry run: its record, so that no
 * occurrence is materialised after it, and its occurrences materialised and not yet past the
 * cutoff. By label, each occurrence is counted by its own label entry (cancelled by the job, on
 * this page or another); a job of every event finds no entry of an occurrence (they are listed
 * with their series), so the occurrences it cancelled count with their series here.
 */
async function settleSeries(
  deps: BulkCancelDeps,
  job: BulkCancelJob,
  position: JobPosition,
  series: SeriesRecord | undefined,
): Promise<{ readonly count: EventCount; readonly occurrences: number }> {
  const count = seriesCountOf(series, position.dueAt, job);
  if (count !== 'cancellable' || job.dryRun) return { count: count === 'cancellable' ? 'cancelled' : count, occurrences: 0 };
  const result = await cancelSeries(deps, position.id, job.tenant, { by: job.jobId, publishedAt: job.createdAt });
  if ('cancelled' in result) {
    deps.metrics.count('EventsCancelled');
    deps.logger.info(
      { jobId: job.jobId, seriesId: position.id, occurrencesCancelled: result.cancelled },
      'series cancelled by a bulk cancel',
    );
    return { count: 'cancelled', occurrences: job.label === undefined ? result.cancelled : 0 };
  }
  const refused = seriesCountOf(result.refused, position.dueAt, job);
  if (refused === 'cancellable') throw new TransientError(`cancel of series ${position.id} raced with another change; the page is retried`);
  return { count: refused, occurrences: 0 };
}

/** Settles a page's events and series, a few at a time, and adds up what they count. */
async function settlePage(deps: BulkCancelDeps, job: BulkCancelJob, positions: readonly JobPosition[]): Promise<BulkCancelCounts> {
  const seriesIds = positions.filter(({ id }) => isSeriesId(id)).map(({ id }) => id);
  const [records, series] = await Promise.all([
    deps.store.read(positions.filter(({ id }) => !isSeriesId(id)).map(({ id }) => id)),
    seriesIds.length === 0 ? new Map<string, SeriesRecord>() : deps.series.read(seriesIds),
  ]);
  const settleOne = async (position: JobPosition) =>
    isSeriesId(position.id)
      ? settleSeries(deps, job, position, series.get(position.id))
      : { count: await settle(deps, job, records.get(position.id)), occurrences: 0 };
  const counts = { cancelled: 0, ended: 0, emitting: 0, skipped: 0, outside: 0 };
  for (let start = 0; start < positions.length; start += CANCELS_AT_ONCE) {
    const settled = await Promise.all(positions.slice(start, start + CANCELS_AT_ONCE).map(settleOne));
    for (const { count, occurrences } of settled) {
      if (count !== 'cancellable') counts[count] += 1;
      counts.cancelled += occurrences;
    }
  }
  if (counts.skipped > 0)
    deps.logger.warn({ jobId: job.jobId, skipped: counts.skipped }, "index entries whose events are gone or not the tenant's: skipped");
  return { cancelled: counts.cancelled, refused: { ended: counts.ended, emitting: counts.emitting } };
}

/**
 * Works one page of a job. A page whose cursor the job has left was worked already: only the
 * delivery that moved the cursor (SQS keeps a message's id when it delivers it again) sends what
 * follows again, since it may have stopped before sending it; other copies end there, so a
 * duplicated page does not go on duplicating the pages after it.
 */
async function workPage(deps: BulkCancelDeps, page: BulkCancelPage, deliveryId: string): Promise<void> {
  const job = await deps.jobs.get(page.jobId);
  if (job === undefined) {
    deps.logger.warn({ jobId: page.jobId }, 'page of an unknown bulk cancel job: dropped');
    return;
  }
  if (job.cursor !== page.from) {
    if (job.movedBy === deliveryId) await followUp(deps, job);
    return;
  }
  const positions = await deps.labelled.page({
    tenant: job.tenant,
    label: job.label,
    // Every due time: a held event is overdue, and still open to the cancel (countOf keeps the job's scope).
    fromMs: 0,
    beforeMs: job.dueBefore,
    after: positionOf(page.from),
    limit: BULK_CANCEL_PAGE_SIZE,
  });
  const counts = await settlePage(deps, job, positions);
  const last = positions.at(-1);
  const done = positions.length < BULK_CANCEL_PAGE_SIZE;
  const to = done || last === undefined ? JOB_CURSOR.end : cursorAfter(last);
  const now = deps.clock.now();
  const expiresAt = done ? expiresAtFor(now, deps.config.retentionSeconds) : job.expiresAt;
  // Counted once: a copy of this page that got here first moved the cursor, and this write is refused.
  if (!(await deps.jobs.advance(job.jobId, { from: page.from, to, counts, movedBy: deliveryId, done, now, expiresAt }))) return;
  await followUp(deps, {
    ...job,
    cursor: to,
    movedBy: deliveryId,
    counts: addCounts(job.counts, counts),
    state: done ? 'done' : 'running',
    doneAt: done ? now : undefined,
  });
}

/** The changes function: each record a page of a job. Only a failure of the infrastructure fails a record (it is retried). */
export async function workBulkCancelPages(deps: BulkCancelDeps, records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
  const response = await processBatch(records, deps, async (record) => {
    let page: BulkCancelPage;
    try {
      page = decodeBulkCancelPage(record.body);
    } catch {
      deps.logger.error({ messageId: record.messageId, body: record.body.slice(0, 200) }, 'not a page of a change job: dropped');
      return;
    }
    await workPage(deps, page, record.messageId);
  });
  deps.metrics.flush();
  return response;
}
