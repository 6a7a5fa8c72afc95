import { toIso } from './dates.js';
import { failureNotice, type FailureNotice } from './failure.js';
import { changeRefusal, EVENT_STATE, type EventRecord } from './lifecycle.js';
import { REASON } from './reasons.js';
import { SERIES_STATE, type SeriesRecord } from './series.js';
import type { ListingPosition } from './tenant-index.js';

/**
 * A bulk cancel: a tenant's open events with one label (or all of them, for an operator removing
 * the tenant), due from the job's start (earlier ones are
 * past the change cutoff) and before its bound, and those held while the tenant is paused whenever
 * they were due (they are overdue, and still open), cancelled page by page by the `changes` function. The
 * job's item holds its cursor and counts; each page moves both with one write conditional on the
 * cursor it started from, so a page worked twice counts once.
 */

/** Events a page works through at most. */
export const BULK_CANCEL_PAGE_SIZE = 100;

/** The cursor of a job no page has moved yet, and of one whose last page is done. */
export const JOB_CURSOR = { start: 'start', end: 'end' } as const;

export type BulkCancelJobState = 'running' | 'done';

/** What a job counts: the events it cancelled (or would, in a dry run), and those it could not. */
export interface BulkCancelCounts {
  readonly cancelled: number;
  readonly refused: {
    /** Already emitted, failed or cancelled when the job reached them. */
    readonly ended: number;
    /** Due within the change cutoff when the job reached them: they will be emitted. */
    readonly emitting: number;
  };
}

export const NO_COUNTS: BulkCancelCounts = { cancelled: 0, refused: { ended: 0, emitting: 0 } };

export function addCounts(a: BulkCancelCounts, b: BulkCancelCounts): BulkCancelCounts {
  return {
    cancelled: a.cancelled + b.cancelled,
    refused: { ended: a.refused.ended + b.refused.ended, emitting: a.refused.emitting + b.refused.emitting },
  };
}

/** A job as it is asked for: by a tenant's request, or by an operator. */
export interface NewBulkCancelJob {
  /** `b-<input MessageId>` for a tenant's request, so that its redelivery is the same job; a new one for an operator's. */
  readonly jobId: string;
  readonly tenant: string;
  /** Only the events and series with this label; undefined: every one of the tenant's (an operator's job, never a tenant's request). */
  readonly label: string | undefined;
  /** Events due at or after this are in its scope (epoch ms): when it was asked for; held events whenever due. */
  readonly fromMs: number;
  /** Events due at or after this are not (epoch ms); undefined: no bound. */
  readonly dueBefore: number | undefined;
  /** Where the counts are told when the job is done: the tenant's own topic its request named. */
  readonly failureTopic: string | undefined;
  /** Counts what it would cancel, and changes nothing. */
  readonly dryRun: boolean;
  readonly createdAt: number;
  /** When the store may drop the job's item (epoch seconds). */
  readonly expiresAt: number;
}

export interface BulkCancelJob extends NewBulkCancelJob {
  readonly state: BulkCancelJobState;
  /** Where the next page starts: JOB_CURSOR.start, the last event a page worked (see cursorAfter), or JOB_CURSOR.end. */
  readonly cursor: string;
  /** The delivery of a page message that last moved the cursor: its redelivery sends what follows again. */
  readonly movedBy: string | undefined;
  readonly counts: BulkCancelCounts;
  readonly doneAt: number | undefined;
}

/** An event's place in a job's order: the listing's (see compareByDue). */
export type JobPosition = ListingPosition;

/** The cursor after an event a page worked. */
export function cursorAfter(position: JobPosition): string {
  return `${position.dueAt}/${position.id}`;
}

/** Where a cursor says the next page starts: after this event, or at the job's start (undefined). */
export function positionOf(cursor: string): JobPosition | undefined {
  if (cursor === JOB_CURSOR.start) return undefined;
  const slash = cursor.indexOf('/');
  const dueAt = Number(cursor.slice(0, slash));
  if (slash < 0 || !Number.isSafeInteger(dueAt)) throw new TypeError(`not a job cursor: ${cursor}`);
  return { dueAt, id: cursor.slice(slash + 1) };
}

/** Body of a `changes` queue message: one page of a job, from its cursor. */
export interface BulkCancelPage {
  readonly kind: 'bulk-cancel-page';
  readonly jobId: string;
  /** The job's cursor the page starts from. */
  readonly from: string;
}

export function encodeBulkCancelPage(page: Omit<BulkCancelPage, 'kind'>): string {
  return JSON.stringify({ kind: 'bulk-cancel-page', jobId: page.jobId, from: page.from });
}

export function decodeBulkCancelPage(body: string): BulkCancelPage {
  const value = JSON.parse(body) as Partial<BulkCancelPage>;
  if (value.kind !== 'bulk-cancel-page' || typeof value.jobId !== 'string' || typeof value.from !== 'string')
    throw new TypeError('not a bulk cancel page');
  return { kind: 'bulk-cancel-page', jobId: value.jobId, from: value.from };
}

/**
 * How a job counts one event, by its record as it stands; `cancellable` when nothing refuses its
 * cancel; `outside` when it is not in the job's scope (not counted): an event due before the
 * job's start and no longer open to a change, or a series that may run past the job's bound.
 */
export type EventCount = 'cancelled' | 'ended' | 'emitting' | 'cancellable' | 'skipped' | 'outside';

export function countOf(
  record: EventRecord | undefined,
  job: Pick<BulkCancelJob, 'jobId' | 'tenant' | 'fromMs'>,
  now: number,
  cutoffMs: number,
): EventCount {
  // Its own cancel, by a page done before (the delivery that made it stopped before counting it).
  if (record?.state === EVENT_STATE.cancelled && record.cancelledBy === job.jobId) return 'cancelled';
  const refusal = changeRefusal(record, { tenant: job.tenant, action: 'cancel', now, cutoffMs });
  // The job reads every due time for the held events; the others due before it started are not its.
  if (refusal !== undefined && record !== undefined && record.dueAt < job.fromMs && record.tenant === job.tenant) return 'outside';
  switch (refusal?.reason) {
    case undefined:
      return 'cancellable';
    case REASON.EVENT_ALREADY_ENDED:
      return 'ended';
    case REASON.EVENT_EMITTING:
      return 'emitting';
    default:
      // Gone since its label entry was read (expired), or not the tenant's: nothing of the job's.
      return 'skipped';
  }
}

/**
 * How a job counts a series with the label, by its record and where its label entry is (its
 * first occurrence): once, as one event (its materialised occurrences count by their own
 * entries, as events). Within a bound (`due_before`), only a series that ends by then (`end`) is
 * the job's: one that may go on past it runs on, and only its occurrences materialised before
 * the bound, which carry the label, are cancelled. The series' cancel has no cutoff of its own:
 * its occurrences within the cutoff are emitted, as events are.
 */
export function seriesCountOf(
  series: SeriesRecord | undefined,
  entryDueAt: number,
  job: Pick<BulkCancelJob, 'jobId' | 'tenant' | 'fromMs' | 'dueBefore'>,
): EventCount {
  if (series === undefined || series.tenant !== job.tenant) return 'skipped';
  if (series.state === SERIES_STATE.cancelled && series.cancelledBy === job.jobId) return 'cancelled';
  if (job.dueBefore !== undefined && (series.spec.end === undefined || series.spec.end > job.dueBefore)) return 'outside';
  if (series.state === SERIES_STATE.active) return 'cancellable';
  return entryDueAt < job.fromMs ? 'outside' : 'ended';
}

/** The counts as a sentence: what a job did, or would do. */
export function describeCounts(counts: BulkCancelCounts, dryRun: boolean): string {
  const { cancelled, refused } = counts;
  return (
    `${dryRun ? 'would cancel' : 'cancelled'} ${cancelled}; ` +
    `refused: ${refused.ended} already ended, ${refused.emitting} within the change cutoff`
  );
}

/** The request a job stands for, as a tenant would have published it: quoted in its notice. */
function requestOf(job: NewBulkCancelJob): Record<string, string> {
  return {
    action: 'cancel',
    ...(job.label === undefined ? {} : { label: job.label }),
    ...(job.dueBefore === undefined ? {} : { due_before: toIso(job.dueBefore) }),
    ...(job.failureTopic === undefined ? {} : { failure_topic: job.failureTopic }),
  };
}

/** What the tenant's failure topic receives when a job is done: its counts, with the reason BULK_CANCEL_DONE (not an error). */
export function bulkCancelDoneNotice(job: BulkCancelJob, now: number): FailureNotice {
  return failureNotice(
    REASON.BULK_CANCEL_DONE,
    `bulk cancel of ${job.label === undefined ? 'every open event' : `label "${job.label}"`} done: ${describeCounts(job.counts, job.dryRun)}`,
    requestOf(job),
    now,
    {
      details: {
        jobId: job.jobId,
        ...(job.label === undefined ? {} : { label: job.label }),
        ...(job.dueBefore === undefined ? {} : { dueBefore: toIso(job.dueBefore) }),
        cancelled: job.counts.cancelled,
        refused: job.counts.refused,
      },
    },
  );
}
