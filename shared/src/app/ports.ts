import type { BulkCancelCounts, BulkCancelJob, JobPosition, NewBulkCancelJob } from '../domain/bulk-cancel.js';
import type { EmissionEnding } from '../domain/emission.js';
import type { EndCountIncrement } from '../domain/end-counts.js';
import type { ScheduledEvent } from '../domain/event.js';
import type { FailureNotice, NoticeDestination } from '../domain/failure.js';
import type { EventRecord, EventState } from '../domain/lifecycle.js';
import type { ChangeJob, LoadingChunk } from '../domain/messages.js';
import type { Quotas, Tenant } from '../domain/tenants.js';
import type { Placement } from '../domain/placement.js';
import type { RecentRefusals, TenantRefusals } from '../domain/refusals.js';
import type { SeriesCursor } from '../domain/recurrence/occurrences.js';
import type { NewSeries, SeriesRecord } from '../domain/series.js';

/**
 * What the application needs of the world, one job to each port: the adapters (shared/src/adapters)
 * implement them over DynamoDB, SQS and SNS, and the unit tests' fakes (shared/test) in memory.
 * Types only: nothing here runs.
 */

// ---- The process ------------------------------------------------------------------------------

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** What the application logs: a line at a level, with the fields that say what it is about (JSON on Lambda). */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Counters and timings, published without extra API calls (EMF on Lambda). */
export interface SchedulerMetrics {
  count(name: MetricName, value?: number, reason?: string): void;
  latenessMs(value: number): void;
  /** How far behind the loader's cursor is at the start of a tick (0 when on time). */
  loaderBacklogSeconds(value: number): void;
  flush(): void;
}

export type MetricName =
  | 'EventsIngested'
  | 'EventsRejected'
  | 'EventsStored'
  | 'EventsDelayed'
  | 'EventsLoaded'
  | 'EventsEmitted'
  | 'EventsFailed'
  | 'EventsCancelled'
  | 'EventsRescheduled'
  | 'DuplicatesSuppressed'
  /** Delay-queue messages of a cancelled or rescheduled version, dropped by the emitter. */
  | 'StaleMessagesDropped'
  /** Events found already emitted when their emission was recorded: two copies were emitted at once. */
  | 'DuplicateEmissions'
  /** Publishes that failed for a reason a retry may fix, and were put back to be retried later. */
  | 'PublishRetries'
  /** Open events found overdue by the loader's sweep and sent to the delay queue again. */
  | 'EventsRepaired'
  /** Rescheduled events whose payload the emitter carried on from their old delay-queue copy (see EventRecord.carriedBy). */
  | 'EventsCarried'
  /** Events that came due while their tenant was paused, held until it resumes. */
  | 'EventsHeld'
  /** Held events sent to the delay queue by their tenant's resume. */
  | 'EventsResumed'
  /** Refusals ingest could not write to the refusal log (reported on failure topics and in the log all the same). */
  | 'RefusalsNotKept';

// ---- Tenants ----------------------------------------------------------------------------------

/** Who a message belongs to, by the input topic it arrived on; and each tenant by id. */
export interface TenantDirectory {
  forTopic(topicArn: string): Tenant | undefined;
  tenant(id: string): Tenant | undefined;
  /** Every registered tenant, the public one included. */
  all(): readonly Tenant[];
}

/**
 * Whose pause: the tenant's own (its requests), or its operator's, which is containment: the
 * tenant's requests neither lift nor shorten it.
 */
export type PauseOwner = 'tenant' | 'operator';

/** A tenant's pause: since when, why, who asked (an input message's id, or an operator's name), and whose it is. */
export interface Pause {
  readonly pausedAt: number;
  readonly note?: string | undefined;
  readonly pausedBy: string;
  readonly owner: PauseOwner;
}

/** Who pauses or resumes: the tenant, by a request applied in publish order; or an operator. */
export type PauseAuthor =
  | { readonly owner: 'tenant'; readonly request: ChangeRequest }
  | { readonly owner: 'operator'; readonly name: string };

/** What a resume did. */
export interface ResumeOutcome {
  /** False when a pause or resume the tenant published later was applied already: this one changes nothing. */
  readonly applied: boolean;
  /** The author's pause it ended, if there was one. */
  readonly ended: Pause | undefined;
  /** The pause still in force, the other owner's: the tenant stays paused. */
  readonly stillPaused: Pause | undefined;
}

/**
 * Tenants' pauses, kept on their quota counters' items: while a tenant is paused, by itself or
 * by its operator, the emitter holds its events as they come due (see EVENT_STATE.held). The
 * tenant's pause and its operator's are kept apart, each ended only by its own owner's resume.
 */
export interface TenantPauses {
  /**
   * Pauses a tenant as `author`; a tenant paused already by the same owner keeps its `pausedAt`
   * and takes the new note. False when the tenant published a later pause or resume (or this
   * one) already: nothing changes.
   */
  pause(tenant: string, author: PauseAuthor, pause: { readonly pausedAt: number; readonly note: string | undefined }): Promise<boolean>;
  /** Ends the author's pause of a tenant (see ResumeOutcome). */
  resume(tenant: string, author: PauseAuthor): Promise<ResumeOutcome>;
  /** The pauses of those of these tenants that are paused: the operator's when there is one, else the tenant's own. */
  paused(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>>;
}

// ---- Events: their records, from ingest to their end ------------------------------------------

export interface NewEvent {
  readonly event: ScheduledEvent;
  readonly clientId: string | undefined;
  /** The input message that asked for it: a redelivery of the same message may resend it. */
  readonly inputMessageId: string;
  /** The digest of the request (see requestHashOf): a later request with the same id and another digest changes nothing. */
  readonly requestHash: string;
  readonly placement: Placement;
  /** Token of the delay-queue copy about to be sent (near path). */
  readonly queuedBy: string | undefined;
  /** This attempt's token, written on the record: an insert that seems refused finds its own write by it (see EventRecord.createdBy). */
  readonly createdBy: string;
  readonly quotas: Quotas;
  readonly now: number;
  /** TTL of the record while it is open, epoch seconds. */
  readonly expiresAt: number;
}

export type CreateOutcome =
  | { readonly outcome: 'created' }
  | {
      readonly outcome: 'duplicate';
      /** The record the id already has, read back: a duplicate is only ever reported beside it. */
      readonly existing: EventRecord;
      /** The place taken for it could not be given back (the counter write failed): the tenant's count is one too high until reconciled. */
      readonly placeKept?: true;
    }
  | { readonly outcome: 'quota-exceeded'; readonly quota: keyof Quotas }
  /** The write kept failing, or its answer was lost: to retry (a retry finds it created, or creates it). */
  | { readonly outcome: 'unknown' };

/** A new delay-queue copy of an event, made by the redelivery of the input message that placed it there. */
export interface Requeue {
  /** The input message: the event's create (version 1), or the reschedule that made `version`. */
  readonly placedBy: string;
  readonly version: number;
  readonly queuedBy: string;
  readonly now: number;
}

/** A cancel or reschedule that did not apply, with the record as it was (undefined: no such id). */
export interface ChangeRefused {
  readonly outcome: 'refused';
  readonly current: EventRecord | undefined;
}

/**
 * What a cancel or reschedule may change: an open event of this tenant due more than `cutoffMs`
 * after the change is written (the store checks it against its clock as it writes).
 */
export interface ChangeScope {
  readonly tenant: string;
  readonly cutoffMs: number;
}

/** A cancel or reschedule as the input message carried it. */
export interface ChangeRequest {
  /** The input message (SNS MessageId): its redelivery finds its own change applied. */
  readonly by: string;
  /** When the client published it (SNS Timestamp): a change published before the last one applied is superseded. */
  readonly publishedAt: number;
}

/**
 * Which ends were recorded; which found the event already ended by another delivery (it was
 * emitted twice); and which are still unknown (the write kept failing, or its answer was lost).
 */
export interface EndsRecorded {
  readonly recorded: readonly EmissionEnding[];
  readonly alreadyEnded: readonly EmissionEnding[];
  readonly unknown: readonly EmissionEnding[];
  /**
   * The ends this write applied (of `recorded`): each releases its event's place in its tenant's
   * open events, not freed yet (see `releasePlaces`), so that a batch whose ends take several
   * writes frees them in one counter write per tenant. An own end found applied by an earlier
   * attempt is not among them: that attempt may have freed its place already.
   */
  readonly applied: readonly EmissionEnding[];
}

/** Places in a tenant's open-events quota that could not be freed (the counter write failed): its count is that much too high until reconciled. */
export interface Unreleased {
  readonly tenant: string;
  readonly count: number;
}

/** A loading message's claim on stored events: who takes them, and the token of the copies it sends. */
export interface LoadingTake {
  /** The loading chunk (its id travels in the message body, so a redriven message is still its owner). */
  readonly owner: string;
  readonly queuedBy: string;
  readonly now: number;
  /** Only events due before this are taken: an SQS delay reaches no further. */
  readonly horizonMs: number;
  /**
   * A repair: take open events due before this, whoever took them last, as they were read (an
   * event whose loading message or delay-queue copy was lost, found by the loader's sweep).
   */
  readonly overdueBefore?: number | undefined;
  /**
   * A resume: take held events (see EVENT_STATE.held), whatever their due time, out of the held
   * index, and give their records back an expiry (epoch seconds).
   */
  readonly resume?: { readonly expiresAt: number } | undefined;
}

/** The events' records: created by ingest, taken by loading, ended by the emitter, changed by clients. */
export interface EventStore {
  /**
   * Records new events of one tenant and counts them against its quotas: however many ingest
   * functions run at once, no tenant is admitted past a quota. Outcomes are in the order of the
   * entries; when the quotas leave room for only some, the first ones win, and the others are
   * refused, unless their events exist already (duplicates).
   */
  createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]>;
  /**
   * Gives a queued event, still as the input message `placedBy` left it on the delay queue (see
   * placedOnDelayQueueBy), a new copy token before that message's redelivery sends it again:
   * the earlier copy, if it was sent, is then dropped. False when the event has moved on.
   */
  requeue(id: string, requeue: Requeue): Promise<boolean>;
  /** The payload of an event whose payload the table holds (in its record, or in an item of its own). */
  storedPayload(record: EventRecord): Promise<string>;
  /** Records by id, read consistently (an id without a record is absent). */
  read(ids: readonly string[]): Promise<ReadonlyMap<string, EventRecord>>;
  /**
   * Marks stored events due before `horizonMs` as queued by one loading message, with the token
   * of the copies about to be sent, and returns them with their payloads. An event another
   * loading message took, or that was cancelled, moved past the horizon or is gone, is left out.
   * The same owner may take them again, so a redelivered loading message resends (new token).
   */
  takeForLoading(ids: readonly string[], take: LoadingTake): Promise<ScheduledEvent[]>;
  /**
   * Ends emitted or failed events, in batches, and says which places in their tenants' open
   * events the ends it applied release. An end whose event another delivery had ended is
   * reported, not applied.
   */
  endEmissions(ends: readonly EmissionEnding[]): Promise<EndsRecorded>;
  /** Frees places ends released (EndsRecorded.applied), one counter write per tenant; returns those it could not free. */
  releasePlaces(freed: ReadonlyMap<string, number>): Promise<readonly Unreleased[]>;
  /** Adds recorded ends to their tenants' counts by minute (see endCountIncrements): one write per increment. */
  countEnds(increments: readonly EndCountIncrement[]): Promise<void>;
  /**
   * Cancels an open event of this tenant due after the cutoff and frees its place in the quota,
   * both at once. A redelivered cancel finds its own work done (reported as refused, with the
   * record showing `cancelledBy`).
   */
  cancel(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & { readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused>;
  /**
   * Moves an open event of this tenant due after the cutoff to `dueAt`, as a new version. One
   * whose payload is stored is placed anew, and returned with its payload to send when placed in
   * the delay queue. One whose payload only its delay-queue copy holds stays where it is, its
   * record naming that copy (`carriedBy`), which the emitter carries on: returned without an
   * event. Refused when this very request was applied already, or when a reschedule published
   * after it was (see `ChangeRequest`).
   */
  reschedule(
    id: string,
    scope: ChangeScope,
    change: ChangeRequest & {
      readonly dueAt: number;
      readonly placement: Placement;
      readonly queuedBy: string;
      readonly expiresAt: number;
    },
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent | undefined } | ChangeRefused>;
  /**
   * Records where the emitter carried a moved event's payload from its copy `from` (see
   * EventRecord.carriedBy): only while the event is still queued, at the version read, and
   * carried by that copy. False when any of that changed (a reschedule, a cancel, another
   * delivery's carry): the caller reads the record again.
   */
  carry(record: EventRecord, from: string, onward: Carry, now: number): Promise<boolean>;
  /**
   * Holds an event that came due while its tenant is paused, in one write with a check of the
   * pause: its payload into its record, its record under `heldKey` in the due index (see
   * heldShardKey), and in the tenant index under `tenantShard` unless it is there already (so
   * that a listing without a label shows it), without an expiry. Only while it is queued as copy `from` left it at the
   * version read: `changed` otherwise; `not-paused` when the tenant's pause has ended.
   */
  hold(
    record: EventRecord,
    from: string,
    hold: { readonly payload: string; readonly heldKey: string; readonly tenantShard: string; readonly now: number },
  ): Promise<HoldOutcome>;
}

export type HoldOutcome = 'held' | 'changed' | 'not-paused';

/** Where the emitter carries a moved event's payload on to. */
export type Carry =
  /** A new delay-queue copy, already sent with this token. */
  | { readonly to: 'queue'; readonly queuedBy: string }
  /** Into the table, for the loader (due beyond the near-path window), under the tenant index's stored family (`<tenant>#s<n>`). */
  | { readonly to: 'table'; readonly payload: string; readonly tenantShard: string };

// ---- Recurring series: their records, from ingest to their end --------------------------------

/** A new series as ingest stores it: its first `dueAt` is the first occurrence after its cursor. */
export interface SeriesEntry {
  readonly series: NewSeries;
  readonly dueAt: number;
  readonly inputMessageId: string;
  readonly shard: number;
  readonly quotas: Quotas;
  readonly now: number;
  readonly expiresAt: number;
}

export type SeriesCreateOutcome =
  | { readonly outcome: 'created'; readonly record: SeriesRecord }
  /** The id names a series already: this request's own (delivered again) or another's (see requestHash). */
  | { readonly outcome: 'duplicate'; readonly existing: SeriesRecord }
  | { readonly outcome: 'quota-exceeded'; readonly quota: keyof Quotas };

/** What a series' cancel did: cancelled, with the record at the cursor it had; or refused, with the record as it is (undefined: no such id). */
export type SeriesCancelOutcome =
  | { readonly outcome: 'cancelled'; readonly series: SeriesRecord }
  | { readonly outcome: 'refused'; readonly current: SeriesRecord | undefined };

/** A take's move of a series past what it materialised: to its next occurrence, or to its end. */
export interface SeriesAdvance {
  readonly cursor: SeriesCursor;
  /** The next occurrence not materialised; undefined: the series is completed, and leaves the index. */
  readonly next: number | undefined;
  readonly now: number;
  /** The record's expiry (epoch seconds): the retention period after its next or last due time. */
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
   * Moves a series past a take, only at the version read: false when another take moved it
   * first (it then made the same occurrences). A completed series frees its place in the quota.
   */
  advance(series: SeriesRecord, step: SeriesAdvance): Promise<boolean>;
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

// ---- The loader: the due index and its cursors ------------------------------------------------

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

// ---- Failure notices: published once --------------------------------------------------------

export interface NoticeClaim {
  readonly owner: string;
  readonly now: number;
  readonly leaseUntil: number;
}

/** Claims on publishing failure notices, keyed like events, so a redelivered notice is published once. */
export interface NoticeClaims {
  /** Claims a notice's publication; its record is kept until `expiresAt` (epoch seconds). */
  claim(noticeId: string, claim: NoticeClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'>;
  /** Gives up a claim after a failed publish, so the retry need not wait for the lease. */
  release(noticeId: string, owner: string): Promise<void>;
  markSent(noticeId: string, sentAt: number): Promise<void>;
}

// ---- Bulk cancel: jobs the changes function works page by page ------------------------------

/** Which of a tenant's labelled events a page asks for. */
export interface LabelledEventsQuery {
  readonly tenant: string;
  readonly label: string;
  /** Due at or after this (epoch ms). */
  readonly fromMs: number;
  /** Due before this (epoch ms); undefined: no bound. */
  readonly beforeMs: number | undefined;
  /** Only events after this one in (dueAt, id) order; undefined: from `fromMs` on. */
  readonly after: JobPosition | undefined;
  readonly limit: number;
}

/** A tenant's events with a label, in due order, from a cursor: read from the tenant index's label entries. */
export interface LabelledEvents {
  /**
   * The first `limit` events of the query in (dueAt, id) order (fewer only when there are no
   * more). A label entry lives as long as its event's record, so ended events are among them.
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

/** The `changes` queue: pages of jobs for the changes function. */
/** The changes function's queue: jobs over many events, a page at a time (TransientError when SQS refuses). */
export interface ChangesQueue {
  /** Sends a bulk cancel's page from `from`. */
  sendPage(jobId: string, from: string): Promise<void>;
  /** Sends one page of a resume, visible after `delaySeconds`. */
  send(job: ChangeJob, delaySeconds: number): Promise<void>;
}

// ---- Queues and topics ------------------------------------------------------------------------

export interface DelayedSend {
  readonly event: ScheduledEvent;
  readonly delaySeconds: number;
  /** The copy's token, as recorded on the event (see EventRecord.queuedBy). */
  readonly queuedBy: string | undefined;
}

export interface DelayedSendFailure {
  readonly eventId: string;
  readonly reason: string;
}

/**
 * Where one emitter process keeps the ends it has published and not yet recorded, durably (the
 * local service on disk: a file): settled there, their messages may go, and the next process
 * records what a crash left (see EndWriter).
 */
export interface EndJournal {
  /** Keeps ends; resolves once they would survive whatever the table's own state survives (a kill of the process, on disk). */
  keep(ends: readonly EmissionEnding[]): Promise<void>;
  /** Forgets every end kept so far: each is recorded or handed over. */
  clear(): Promise<void>;
}

export interface DelayQueue {
  /** Sends in batches of 10; returns the events that could not be sent, and why. */
  send(items: readonly DelayedSend[]): Promise<readonly DelayedSendFailure[]>;
  /** Hands a failure notice to the emitter, which publishes it once (TransientError when SQS refuses). */
  sendNotice(noticeId: string, tenant: string, destination: NoticeDestination, notice: FailureNotice): Promise<void>;
  /** Hands ends the emitter could not record over to a later delivery, which records them (TransientError when SQS refuses). */
  sendEnds(ends: readonly EmissionEnding[]): Promise<void>;
  /** Makes a message received from the delay queue come back after `delaySeconds` (its retry), instead of the visibility timeout. */
  retryLater(receiptHandle: string, delaySeconds: number): Promise<void>;
}

export interface LoadingQueue {
  send(chunks: readonly LoadingChunk[]): Promise<void>;
}

export interface TopicPublisher {
  /**
   * Publishes a message with string attributes. Throws EventRejectedError when the topic
   * cannot take it (missing, access denied) or no request can carry it, and TransientError when
   * a retry may succeed.
   */
  publish(topicArn: string, message: string, attributes?: Readonly<Record<string, string>>): Promise<void>;
}

// ---- Dead letters ----------------------------------------------------------------------------

/** Why a function failed a record, as the dead-letter tools show it beside the message. */
export interface LastError {
  /** The SQS message id: SQS keeps it when it moves the message to a dead-letter queue. */
  readonly messageId: string;
  /** The function that failed it (ingest, loading, emitter, ...). */
  readonly fn: string;
  readonly error: { readonly name: string; readonly message: string };
  /** When it failed, epoch ms. */
  readonly at: number;
  /** The delivery that failed (1 on the first). */
  readonly receiveCount: number;
}

/** The last error of each record a function failed, by message id: written as records fail, read by the dead-letter tools. */
export interface LastErrors {
  /** Keeps each error, replacing the message's earlier one. */
  write(errors: readonly LastError[]): Promise<void>;
  /** The last errors of these messages (a message without one is absent). */
  read(messageIds: readonly string[]): Promise<ReadonlyMap<string, LastError>>;
}

// ---- Refusals: what ingest refused, for operators and clients to find ------------------------

/** A tenant's latest refusals (see REFUSALS_KEPT): written by ingest after its batch, read by the admin CLI and the console. */
export interface RefusalLog {
  /**
   * Keeps one batch's refusals of each tenant, overwriting that tenant's oldest beyond
   * REFUSALS_KEPT.perTenant, and counts the ones not kept; each kept until `expiresAt` (epoch seconds).
   */
  keep(batch: readonly TenantRefusals[], expiresAt: number): Promise<void>;
  /** A tenant's kept refusals, newest first. */
  recent(tenant: string): Promise<RecentRefusals>;
}

// ---- Operators --------------------------------------------------------------------------------

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

/** The counter a tenant's open-events quota is taken from. */
export interface OpenEventsCounter {
  openEvents(tenant: string): Promise<number>;
  correctOpenEvents(tenant: string, delta: number): Promise<void>;
}

/** A count of a tenant's open events from the events themselves (a scan). */
export interface OpenEventsCensus {
  countOpen(tenant: string): Promise<number>;
}
