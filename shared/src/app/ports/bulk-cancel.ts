import type { BulkCancelCounts, BulkCancelJob, JobPosition, NewBulkCancelJob } from '../../domain/bulk-cancel.js';

/** Bulk cancel: a tenant's labelled events (or all of them) read page by page, and the jobs the changes function works. */

/** Which of a tenant's events a page asks for: those with a label, or all of them. */
export interface LabelledEventsQuery {
  readonly tenant: string;
  /** Undefined: every event and series of the tenant the tenant index lists. */
  readonly label: string | undefined;
  /** Due at or after this (epoch ms). */
  readonly fromMs: number;
  /** Due before this (epoch ms); undefined: no bound. */
  readonly beforeMs: number | undefined;
  /** Only events after this one in (dueAt, id) order; undefined: from `fromMs` on. */
  readonly after: JobPosition | undefined;
  readonly limit: number;
}

/**
 * A tenant's events with a label, in due order, from a cursor: read from the tenant index's label
 * entries; or all of them, from its stored, queued and held partitions.
 */
export interface LabelledEvents {
  /**
   * The first `limit` events of the query in (dueAt, id) order (fewer only when there are no
   * more). An entry lives as long as its event's record, so ended events are among them.
   */
  page(query: LabelledEventsQuery): Promise<readonly JobPosition[]>;
}

/** A page's step: the job's cursor moved from `from` to `to`, with what the page counted. */
export interface JobStep {
  readonly from: string;
  readonly to: string;
  readonly counts: BulkCancelCounts;
  /** The delivery of the page message that worked it. */
  readonly movedBy: string;
  /** The page was the last: the job is done. */
  readonly done: boolean;
  readonly now: number;
  /** When the store may drop the job's item (epoch seconds). */
  readonly expiresAt: number;
}

/** The jobs' items: created once, moved page by page. */
export interface BulkCancelJobs {
  /** Creates a job unless its id exists; the job as it stands, and whether this call created it. */
  create(job: NewBulkCancelJob): Promise<{ readonly created: boolean; readonly job: BulkCancelJob }>;
  /** A job, read consistently. */
  get(jobId: string): Promise<BulkCancelJob | undefined>;
  /** Moves the cursor and adds the counts in one write, if the cursor is still `step.from`; false when it had moved. */
  advance(jobId: string, step: JobStep): Promise<boolean>;
}
