import type { EventRecord, EventState } from '../../domain/lifecycle.js';

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
