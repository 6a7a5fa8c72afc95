/** What the loader and a resume read: the indexes of events by due time, and the loader's cursors. */

/** A stored event's key as the loader sees it through the GSI. */
export interface DueEventRef {
  readonly id: string;
  readonly dueAt: number;
}

/**
 * One partition of an index of events by due time: of the tenant index (`<tenant>#s<n>`, stored
 * events), or of the time-bucket index that held stored events before it (`<bucket>#<n>`).
 */
export interface DuePartition {
  readonly index: 'tenant' | 'bucket';
  readonly key: string;
}

/** Events by due time: one partition at a time, what the loader reads; several merged, a page at a time, what a resume reads. */
export interface DueIndex {
  /** Pages of events in one partition with dueAt in [fromMs, untilMs). */
  query(partition: DuePartition, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]>;
  /** The first `limit` events of the partitions after `after`, by (dueAt, id) (fewer only when none is left). */
  page(partitions: DuePartitions, after: DueEventRef | undefined, limit: number): Promise<readonly DueEventRef[]>;
}

/** Partitions of one of the indexes by due time. */
export interface DuePartitions {
  readonly index: DuePartition['index'];
  readonly keys: readonly string[];
}

/** Where the loader has handed events out to (loading) and swept them for repair. */
export interface LoaderProgress {
  readonly loadedThroughMs: number | undefined;
  readonly repairedThroughMs: number | undefined;
}

/** The loader's two cursors, kept between ticks. */
export interface LoaderCursors {
  read(): Promise<LoaderProgress>;
  /** Moves one cursor forward (never back). */
  advance(cursor: keyof LoaderProgress, toMs: number): Promise<void>;
}
