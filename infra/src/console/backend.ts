import type {
  EventRecord,
  EventsPage,
  EventsQuery,
  LifecycleStep,
  PastOccurrence,
  PauseOwner,
  RecentRefusals,
  SeriesPage,
  SeriesQuery,
  SeriesRecord,
} from '@adhoc-scheduler/shared';
import type { TenantFilter } from '../admin/registry.js';

export type { TenantFilter };

/**
 * Everything the console reads and changes, through one interface: each view and each action
 * meets the scheduler at one method, so a feature of the scheduler reaches the console by
 * implementing its method, and the browser tests drive any implementation alike.
 */
export interface ConsoleBackend {
  /** Where it reads, as the page header says it: the local service, or a deployed stack's table. */
  readonly description: string;
  /**
   * A page of the registry's tenants, the public one first, then by id, with their quota use and
   * pause state: read for the page's tenants alone, however many are registered.
   */
  tenants(filter: TenantFilter): Promise<TenantsPage>;
  /** One tenant with its quota use and pause state, looked up by id; undefined when the registry does not name it. */
  tenant(id: string): Promise<TenantSummary | undefined>;
  /** The tenant a view shows when none is asked: the first registered beside the public tenant, else the public one. */
  defaultTenant(): Promise<string>;
  /** One tenant's figures around `now`. */
  overview(tenant: string, now: number): Promise<Overview>;
  /** A tenant's events by due time, filtered, a page at a time. */
  listEvents(tenant: string, filter: EventFilter): Promise<EventPage>;
  /** One event and its steps so far; undefined when there is no such event. */
  eventLifecycle(id: string): Promise<EventLifecycle | undefined>;
  /** A tenant's recurring series, a page at a time, by next due time (by first due time with a label). */
  listSeries(tenant: string, filter: SeriesQuery): Promise<SeriesPage>;
  /** One series at `now`, with its last occurrences and how they went; undefined when there is no such series. */
  seriesDetail(id: string, now: number): Promise<SeriesDetail | undefined>;
  /** A tenant's latest requests refused at ingest, newest first. */
  refusals(tenant: string): Promise<RecentRefusals>;
  /** The messages the dead-letter queues hold. */
  deadLetters(filter: DeadLetterFilter): Promise<readonly DeadLetter[]>;

  cancel(id: string): Promise<ActionOutcome>;
  reschedule(id: string, dueAt: number): Promise<ActionOutcome>;
  cancelByLabel(tenant: string, label: string, dueBefore: number | undefined): Promise<ActionOutcome>;
  /** Sends the chosen dead letters back to their source queues. */
  redrive(filter: DeadLetterFilter): Promise<ActionOutcome>;
  /** Deletes the chosen dead letters. */
  purge(filter: DeadLetterFilter): Promise<ActionOutcome>;
  pause(tenant: string, note: string): Promise<ActionOutcome>;
  resume(tenant: string): Promise<ActionOutcome>;
}

/** The filters of a listing and its pages: the operators' listing's own (states default to the open ones). */
export type EventFilter = EventsQuery;
export type EventPage = EventsPage & ListingScope;

/** Whether a listing without a label finds open near-path events: false in the lean setting (SCHEDULER_INDEX_QUEUED_EVENTS=false). */
export interface ListingScope {
  readonly listsQueuedEvents: boolean;
}

export interface EventLifecycle {
  readonly event: EventRecord;
  readonly steps: readonly LifecycleStep[];
}

export interface SeriesDetail {
  readonly record: SeriesRecord;
  /** Its last occurrences due by then, newest first. */
  readonly past: readonly PastOccurrence[];
}

export type PauseState =
  | { readonly paused: false }
  | {
      readonly paused: true;
      readonly since: number;
      readonly note?: string | undefined;
      readonly by?: string | undefined;
      /** Whose pause: an operator's the tenant cannot lift, or the tenant's own. */
      readonly owner?: PauseOwner | undefined;
    }
  /** Its tenant's counter item could not be read. */
  | { readonly paused: 'unknown' };

export interface TenantSummary {
  readonly id: string;
  readonly enabled: boolean;
  readonly maxOpenEvents: number;
  readonly maxIngestPerSecond: number;
  readonly maxControlPerSecond: number;
  /** From its quota counter; undefined when it could not be read. */
  readonly openEvents: number | undefined;
  readonly pause: PauseState;
}

/** A page of tenants, and the id to continue after when more may follow. */
export interface TenantsPage {
  readonly tenants: readonly TenantSummary[];
  readonly next: string | undefined;
}

export interface Overview extends ListingScope {
  readonly tenant: TenantSummary;
  /** Open events due in the next hour, counted per slot of the timeline (through the listing). */
  readonly dueNextHour: readonly { readonly from: number; readonly count: number }[];
  /** Ended in the last hour (its 60 minutes, the current one included), from the tenant's ends' counts. */
  readonly emittedLastHour: number;
  readonly failedLastHour: number;
  /** Emitted in the last hour, by how late (from the due time to the publish's answer). */
  readonly lateness: readonly { readonly label: string; readonly count: number }[];
  /** False when more events are due in the next hour than the timeline reads: its counts are then lower bounds. */
  readonly complete: boolean;
}

/** Which dead letters: as `scripts/admin dead-letters` chooses them, or one message by id. */
export interface DeadLetterFilter {
  readonly queue?: string | undefined;
  readonly messageId?: string | undefined;
  readonly tenant?: string | undefined;
  readonly eventId?: string | undefined;
  readonly label?: string | undefined;
}

export interface DeadLetter {
  readonly messageId: string;
  readonly queue: string;
  readonly receiveCount: number;
  readonly firstSentAt: number;
  readonly tenant?: string | undefined;
  readonly eventId?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly lastError?: string | undefined;
}

/** What an action did, in a sentence; `applied` false when it was refused or could not be confirmed. */
export interface ActionOutcome {
  readonly applied: boolean;
  readonly message: string;
}

/** A request the console cannot serve as asked (an unknown tenant, a token no page printed): said on the page, with status 400. */
export class ConsoleRequestError extends Error {
  override readonly name = 'ConsoleRequestError';
}
