/** What the loader and a resume read: the tenant index's partitions of events by due time, and the loader's cursors. */

/** A stored event's key as the loader sees it through the GSI. */
export interface DueEventRef {
  readonly id: string;
  readonly dueAt: number;
}

/**
 * Events by due time in the tenant index's partitions (keys of table-keys.ts: a tenant's stored
 * events, `<tenant>#s<n>`, or its held ones, `<tenant>#h<n>`): one partition at a time, what the
 * loader reads; several merged, a page at a time, what a resume reads.
 */
export interface DueIndex {
  /** Pages of events in one partition with dueAt in [fromMs, untilMs). */
  query(partitionKey: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]>;
  /** The first `limit` events of the partitions after `after`, by (dueAt, id) (fewer only when none is left). */
  page(partitionKeys: readonly string[], after: DueEventRef | undefined, limit: number): Promise<readonly DueEventRef[]>;
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
