import type { EmissionEnding } from '../../domain/emission.js';
import type { EndCountIncrement } from '../../domain/end-counts.js';
import type { ScheduledEvent } from '../../domain/event.js';
import type { EventRecord } from '../../domain/lifecycle.js';
import type { EventQuota } from '../../domain/quotas.js';
import type { Quotas } from '../../domain/tenants.js';
import type { Placement } from '../../domain/placement.js';

/** The events' records, from ingest to their end: the store, and what its writes take and return. */

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
  | { readonly outcome: 'quota-exceeded'; readonly quota: EventQuota }
  /** The write kept failing, or its answer was lost: to retry (a retry finds it created, or creates it). */
  | { readonly outcome: 'unknown' };

/**
 * One tenant's new events and control requests of an ingest batch, counted against its quotas
 * together: its counter item is written once for both (see EventStore.admit).
 */
export interface TenantAdmission {
  readonly tenant: string;
  readonly quotas: Quotas;
  readonly now: number;
  /** Its new events (each with the same tenant, quotas and time). */
  readonly entries: readonly NewEvent[];
  /** How many control requests of the tenant's the batch holds. */
  readonly controls: number;
}

/** What an admission did: the outcomes of its new events, in their order, and how many of its control requests were taken. */
export interface Admitted {
  readonly outcomes: readonly CreateOutcome[];
  /** The first this many control requests are taken; the others are over `maxControlPerSecond`. */
  readonly controls: number;
}

/** Options of createMany. */
export interface CreateOptions {
  /**
   * The entries' places were held ahead (see EventStore.holdPlaces): none is taken for them, and
   * one whose id exists already gives none back (its holder counts it among the places unused).
   */
  readonly placesHeld?: boolean;
}

/** What a holder of places (see EventStore.holdPlaces) settles once done with them. */
export interface PlacesSettled {
  /** When the places were held: the unused ones are given back to that second's count too. */
  readonly heldAt: number;
  /** Places held and not taken by an event (none made, or a duplicate's). */
  readonly unused: number;
  /** Places of series that ended meanwhile (see SeriesAdvance.placeFreedByCaller), freed with them. */
  readonly freed: number;
}

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
  createMany(entries: readonly NewEvent[], options?: CreateOptions): Promise<CreateOutcome[]>;
  /**
   * Takes `count` places in the tenant's event quotas (its open events, and its new events this
   * second) in one write, all or none: for the occurrences a batch of series' takes is about to
   * create (createMany with `placesHeld`), so that the batch writes the counter once rather than
   * once a take. False, with nothing taken, when they do not all fit.
   */
  holdPlaces(tenant: string, quotas: Quotas, now: number, count: number): Promise<boolean>;
  /**
   * Gives back the places held and not used, and frees the places of series that ended, in one
   * write (none when there is nothing to settle). False when that write failed: the tenant's
   * count is then that much too high until reconciled (a count errs high, never low).
   */
  settlePlaces(tenant: string, settled: PlacesSettled): Promise<boolean>;
  /**
   * As createMany, with the tenant's control requests counted in the same counter write against
   * its `maxControlPerSecond`: the first ones that fit are taken. Each quota is its own: new
   * events over theirs take nothing from the control requests, nor these from the events.
   */
  admit(admission: TenantAdmission): Promise<Admitted>;
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
   * pause: its payload into its record, its record under `heldKey` in the tenant index (see
   * heldShardKey: where a resume reads it, and a listing without a label shows it), without an
   * expiry. Only while it is queued as copy `from` left it at the version read: `changed`
   * otherwise; `not-paused` when the tenant's pause has ended.
   */
  hold(
    record: EventRecord,
    from: string,
    hold: { readonly payload: string; readonly heldKey: string; readonly now: number },
  ): Promise<HoldOutcome>;
}

export type HoldOutcome = 'held' | 'changed' | 'not-paused';

/** Where the emitter carries a moved event's payload on to. */
export type Carry =
  /** A new delay-queue copy, already sent with this token. */
  | { readonly to: 'queue'; readonly queuedBy: string }
  /** Into the table, for the loader (due beyond the near-path window), under the tenant index's stored family (`<tenant>#s<n>`). */
  | { readonly to: 'table'; readonly payload: string; readonly tenantShard: string };
