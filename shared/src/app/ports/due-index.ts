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

/** A stored event's tenant and due time, as the due directory records it. */
export interface DueEntry {
  readonly tenant: string;
  readonly dueAt: number;
}

/**
 * Which tenants have stored events due when (see dueDirectoryKey in table-keys.ts): every write
 * that lists an event among its tenant's stored ones (`<tenant>#s<n>`) at a due time notes it
 * here first, so the loader queries the shards of the tenants noted for its span, however many
 * are registered. An entry noted for events since cancelled or moved costs the loader a few empty
 * queries in its period, never a lost event.
 */
export interface DueDirectory {
  /** Notes that these tenants have stored events due at these times; made before the events' index entries are written. */
  note(entries: readonly DueEntry[]): Promise<void>;
  /** The tenants noted for any period overlapping [fromMs, untilMs). */
  tenantsBetween(fromMs: number, untilMs: number): Promise<ReadonlySet<string>>;
}

/** Where the loader has handed events out to (loading) and swept them for repair. */
export interface LoaderProgress {
  readonly loadedThroughMs: number | undefined;
  readonly repairedThroughMs: number | undefined;
  /**
   * Whether the due directory lists every stored event of the table, and the pause marks every
   * tenant that may hold events: a table the local service creates is complete from the start;
   * any other once the loader's backfill has scanned it (see DueDirectoryBackfill). Until then the
   * loader reads every registered tenant's shards.
   */
  readonly dueDirectoryComplete: boolean;
  /** Until the directory is complete: when its backfill may start, and where its scan goes on from. */
  readonly backfill: DueDirectoryBackfillProgress;
}

/** Where the backfill of the due directory stands (see DueDirectoryBackfill). */
export interface DueDirectoryBackfillProgress {
  /** Epoch ms; undefined until the loader first finds the directory incomplete. */
  readonly startsAt: number | undefined;
  /** The scan's position: undefined at its start. */
  readonly from: string | undefined;
}

/**
 * Notes what a table holds from before the due directory and the pause marks were kept: scans it
 * a page at a time, notes each stored event in the directory, and marks each tenant that is paused
 * or holds events. What versions that note write meanwhile is noted already.
 */
export interface DueDirectoryBackfill {
  /** One page of the scan from `from` (undefined: its start); where the next starts, undefined once the table is done. */
  page(from: string | undefined): Promise<string | undefined>;
}

/** The loader's two cursors. */
export type LoaderCursor = 'loadedThroughMs' | 'repairedThroughMs';

/** The loader's cursors, kept between ticks. */
export interface LoaderCursors {
  read(): Promise<LoaderProgress>;
  /** Moves one cursor forward (never back). */
  advance(cursor: LoaderCursor, toMs: number): Promise<void>;
  /** Records where the backfill stands (see LoaderProgress.backfill). */
  saveBackfill(backfill: DueDirectoryBackfillProgress): Promise<void>;
  /** Records that the due directory lists every stored event (see LoaderProgress.dueDirectoryComplete). */
  markDueDirectoryComplete(): Promise<void>;
}
