import type { EventRecord, EventState } from '../../domain/lifecycle.js';
import type { SeriesRecord } from '../../domain/series.js';

/** What operators read: one event, and a page of a tenant's events. */

/** Which of a tenant's events a listing returns: open ones (scheduled or queued) by default, of any due time. */
export interface EventsQuery {
  readonly label?: string | undefined;
  readonly states?: readonly EventState[] | undefined;
  /** Due at or after this, epoch ms. */
  readonly from?: number | undefined;
  /** Due before this, epoch ms. */
  readonly to?: number | undefined;
  readonly limit: number;
  /** Continues from a previous page's `next`. */
  readonly after?: string | undefined;
}

export interface EventsPage {
  /** In due order (then by id). */
  readonly events: readonly EventRecord[];
  /** An opaque token of the last event returned, when there may be more; a last page may be empty. */
  readonly next: string | undefined;
}

/** What operators read: one event, and a tenant's events through the tenant index. */
export interface EventListing {
  get(id: string): Promise<EventRecord | undefined>;
  /** A page of a tenant's events, reading only the index entries and records it needs (no scan). */
  listEvents(tenant: string, query: EventsQuery): Promise<EventsPage>;
}

/** Which of a tenant's series a listing returns: all those the tenant index holds, or those with a label. */
export interface SeriesQuery {
  readonly label?: string | undefined;
  readonly limit: number;
  /** Continues from a previous page's `next`. */
  readonly after?: string | undefined;
}

export interface SeriesPage {
  /** By next due time (then id); with a label, by first due time, where its label entry stands. */
  readonly series: readonly SeriesRecord[];
  /** An opaque token of the last index entry read, when there may be more; a last page may be empty. */
  readonly next: string | undefined;
}

/** What operators read of a tenant's recurring series: a page of them, and the events their occurrences became. */
export interface SeriesListing {
  /** A page of a tenant's series through the tenant index (no scan). */
  listSeries(tenant: string, query: SeriesQuery): Promise<SeriesPage>;
  /** The events of these ids that exist, by id. */
  events(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>>;
}
