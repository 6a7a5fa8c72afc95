import type { EventQuota } from '../../domain/quotas.js';
import type { Quotas } from '../../domain/tenants.js';
import type { SeriesCursor } from '../../domain/recurrence/occurrences.js';
import type { MinuteCount, NewSeries, OwedOccurrences, SeriesRecord } from '../../domain/series.js';
import type { SeriesRevision } from '../../domain/series-changes.js';
import type { ChangeRequest } from './event-store.js';

/** Recurring series' records, from ingest to their end. */

/** A new series as ingest stores it: its first `dueAt` is the first occurrence after its cursor. */
export interface SeriesEntry {
  readonly series: NewSeries;
  readonly dueAt: number;
  readonly inputMessageId: string;
  readonly shard: number;
  readonly quotas: Quotas;
  readonly now: number;
  readonly expiresAt: number;
  /** Its place was held ahead (see EventStore.holdPlaces): none is taken, nor given back when the id names a series already. */
  readonly placeHeld?: boolean;
}

export type SeriesCreateOutcome =
  | { readonly outcome: 'created'; readonly record: SeriesRecord }
  /** The id names a series already: this request's own (delivered again) or another's (see requestHash). */
  | { readonly outcome: 'duplicate'; readonly existing: SeriesRecord }
  | { readonly outcome: 'quota-exceeded'; readonly quota: EventQuota };

/** What a series' cancel did: cancelled, with the record at the cursor it had; or refused, with the record as it is (undefined: no such id). */
export type SeriesCancelOutcome =
  | { readonly outcome: 'cancelled'; readonly series: SeriesRecord }
  | { readonly outcome: 'refused'; readonly current: SeriesRecord | undefined };

/** A take's move of a series past what it materialised: to its next occurrence, or to its end. */
export interface SeriesAdvance {
  readonly cursor: SeriesCursor;
  /** Late occurrences left to later takes; none: the record keeps none. */
  readonly owed: readonly OwedOccurrences[];
  /** The late occurrences sent this minute; undefined: the record keeps no count. */
  readonly caughtUp: MinuteCount | undefined;
  /** The next occurrence not materialised; undefined: the series is completed, and leaves the index. */
  readonly next: number | undefined;
  readonly now: number;
  /** The record's expiry (epoch seconds): the retention period after its next or last due time. */
  readonly expiresAt: number;
  /**
   * Completed, the series' place is freed by the caller, with the places it settles (see
   * EventStore.settlePlaces), not by a write of the advance's own.
   */
  readonly placeFreedByCaller?: boolean;
}

/**
 * What an advance did: nothing, when another take moved the series first; else moved it, and,
 * completed, freed its place, unless that write failed (`placeKept`: the tenant's count is one
 * too high until reconciled).
 */
export type SeriesAdvanceOutcome = { readonly advanced: false } | { readonly advanced: true; readonly placeKept?: true };

/** A change's write: by whom and when published (the order of changes), the shard its index entry goes to, and its expiry while not paused. */
export interface SeriesChangeWrite extends ChangeRequest {
  readonly shard: number;
  readonly expiresAt: number;
}

/** The series' records: created by ingest, advanced by each take (ingest's and loading's), cancelled by clients. */
export interface SeriesStore {
  /** Stores a series unless its id names one, and takes its place in the tenant's open events. */
  create(entry: SeriesEntry): Promise<SeriesCreateOutcome>;
  /** Records by id, read consistently (an id without a series is absent). */
  read(ids: readonly string[]): Promise<ReadonlyMap<string, SeriesRecord>>;
  /** The payload every occurrence carries: in the record, or in its payload item. */
  payload(series: SeriesRecord): Promise<string>;
  /**
   * Moves a series past a take, only at the version read: not advanced when another take moved
   * it first (it then made the same occurrences). A completed series then frees its place in the
   * quota, once the write that completed it has applied (a count errs high, never low).
   */
  advance(series: SeriesRecord, step: SeriesAdvance): Promise<SeriesAdvanceOutcome>;
  /**
   * Writes a client's change of an active series of this tenant (SeriesRevision): only at the
   * version read, and only after the last change applied (see followsLastChange). A new payload
   * is stored once, in the record or in a payload item named by its digest, the item it replaces
   * deleted. The record as written, or undefined when it moved or another change came first.
   */
  change(series: SeriesRecord, revision: SeriesRevision, write: SeriesChangeWrite): Promise<SeriesRecord | undefined>;
  /**
   * Cancels an active series of this tenant and frees its place, both at once: no occurrence is
   * materialised after it. Refused with the record as it is (a redelivered cancel finds its own
   * `cancelledBy`).
   */
  cancel(
    id: string,
    tenant: string,
    change: ChangeRequest & { readonly expiresAt: number },
  ): Promise<
    | { readonly outcome: 'cancelled'; readonly series: SeriesRecord }
    | { readonly outcome: 'refused'; readonly current: SeriesRecord | undefined }
  >;
}
