import type { ScheduledEvent } from './event.js';
import { REASON, type ReasonCode } from './reasons.js';

/**
 * An event's states: `scheduled` (stored for the loader), `queued` (in the delay queue), `held`
 * (came due while its tenant was paused: stored until it resumes), then one of the ends. Cancel
 * and reschedule apply until a cutoff before its due time (see changeRefusal), and to a held event.
 */
export const EVENT_STATE = {
  scheduled: 'scheduled',
  queued: 'queued',
  held: 'held',
  emitted: 'emitted',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;

export type EventState = (typeof EVENT_STATE)[keyof typeof EVENT_STATE];

export const OPEN_STATES: readonly EventState[] = [EVENT_STATE.scheduled, EVENT_STATE.queued, EVENT_STATE.held];

export function isOpen(state: EventState): boolean {
  return OPEN_STATES.includes(state);
}

export function isEventState(value: unknown): value is EventState {
  return typeof value === 'string' && (Object.values(EVENT_STATE) as string[]).includes(value);
}

/**
 * An event as the store keeps it: small, so that no state change rewrites a payload. The
 * payload is kept only for events stored for the loader (far path); one sent straight to the
 * delay queue travels with its payload there and nowhere else.
 */
export interface EventRecord extends Omit<ScheduledEvent, 'payload'> {
  readonly state: EventState;
  /** The payload, when the record holds it (a far-path event whose record stays within one write unit). */
  readonly payload?: string | undefined;
  /** Where the payload is kept: in the record, in an item of its own, or only in the delay queue. */
  readonly payloadKept: PayloadKept;
  /** The client's idempotency key, when it gave one. */
  readonly clientId?: string | undefined;
  /** The labels the request gave it, to find it by (absent when it gave none). */
  readonly labels?: readonly string[] | undefined;
  /** The SNS message that created it. */
  readonly inputMessageId?: string | undefined;
  /** The digest of the request that created it (see requestHashOf); absent on records written before it was kept. */
  readonly requestHash?: string | undefined;
  /** The create attempt that wrote it: an attempt whose insert seems refused knows its own write by it. */
  readonly createdBy?: string | undefined;
  /**
   * The delay-queue copy that may emit it: each send of an event carries a new token, so an
   * older copy (a resend after a redelivery) is dropped by the emitter. Absent on records
   * written before tokens existed, whose copies carry none either.
   */
  readonly queuedBy?: string | undefined;
  /**
   * The delay-queue copy that still holds the payload of an event rescheduled while its payload
   * was only in the delay queue (near path): when that copy reaches the emitter, the emitter
   * carries the payload on (see emissionDecision) instead of dropping it. Set by the first such
   * reschedule and kept through later ones; removed once the payload is carried.
   */
  readonly carriedBy?: string | undefined;
  /** The loading message that moved it from the table to the delay queue (far path). */
  readonly loadedBy?: string | undefined;
  readonly createdAt: number;
  /*
   * Each step keeps its own time, written by the step itself (the latest of its kind), so that a
   * later step never rewrites an earlier one's: lifecycleSteps orders them and names who took each.
   */
  /** When ingest sent it to the delay queue (near path). */
  readonly queuedAt?: number | undefined;
  /** When ingest sent it to the delay queue again, its input message delivered again. */
  readonly resentAt?: number | undefined;
  /** When the loader took it from the table into the delay queue. */
  readonly loadedAt?: number | undefined;
  /** When the loader's sweep sent it again, its delay-queue copy lost. */
  readonly sweptAt?: number | undefined;
  /** When the emitter held it, its tenant paused (see EVENT_STATE.held). */
  readonly heldAt?: number | undefined;
  /** When the resume job sent it, held, to the delay queue. */
  readonly resumedAt?: number | undefined;
  readonly rescheduledAt?: number | undefined;
  /** When the emitter carried a rescheduled copy's payload on: in the delay queue, or into the table. */
  readonly carriedAt?: number | undefined;
  readonly carriedToTableAt?: number | undefined;
  readonly emittedAt?: number | undefined;
  readonly failedAt?: number | undefined;
  readonly cancelledAt?: number | undefined;
  /** The input message that cancelled it: its redelivery is not refused. */
  readonly cancelledBy?: string | undefined;
  /** The last reschedule applied (its input message), and when its client published it. */
  readonly lastChangeBy?: string | undefined;
  readonly lastChangeAt?: number | undefined;
  /** The delivery that recorded its end (see EmissionEnding.endedBy). */
  readonly endedBy?: string | undefined;
  /** Why it failed. */
  readonly reason?: ReasonCode | undefined;
  /**
   * When the store may drop the record (epoch seconds): the retention period after its end, or
   * after its due time; none (NaN) while it is held.
   */
  readonly expiresAt: number;
}

export type PayloadKept = 'record' | 'item' | 'queue';

/** The event a record describes, with its payload (which the record may not hold itself). */
export function eventOf(record: EventRecord, payload: string): ScheduledEvent {
  const { id, tenant, user, target, failureTopic, dueAt, version, labels, series } = record;
  return {
    id,
    tenant,
    user,
    target,
    payload,
    failureTopic,
    dueAt,
    version,
    ...(labels === undefined ? {} : { labels }),
    ...(series === undefined ? {} : { series }),
  };
}

/**
 * The input message that placed an event on the delay queue, while the event is still queued as
 * that message left it: its create (version 1) or the reschedule that made its version. Its
 * redelivery may send the event again. Undefined once anything else has moved it (an end, a
 * change, loading's take: the loader's sweep repairs what loading took).
 */
export function placedOnDelayQueueBy(record: EventRecord): string | undefined {
  if (record.state !== EVENT_STATE.queued || record.loadedBy !== undefined) return undefined;
  if (record.version === 1) return record.inputMessageId;
  // A reschedule of an event whose payload only the delay queue holds sends nothing: the emitter carries the copy on.
  return record.payloadKept === 'queue' ? undefined : record.lastChangeBy;
}

/**
 * Whether a record was created by a request other than the one whose content hashes to
 * `requestHash`: the same idempotency key with another content. A record written before
 * digests were kept counts as created by the same request.
 */
export function createdByOtherRequest(record: Pick<EventRecord, 'requestHash'>, requestHash: string): boolean {
  return record.requestHash !== undefined && record.requestHash !== requestHash;
}

/**
 * Why a cancel or reschedule of `current` by `tenant` at `now` was refused, in words and as
 * details; undefined when nothing forbids it (a race to retry). Changes close `cutoffMs` before
 * the due time: the emitter reads the record when the event reaches it, which is always later.
 */
export function changeRefusal(
  current: EventRecord | undefined,
  request: { readonly tenant: string; readonly action: 'cancel' | 'reschedule'; readonly now: number; readonly cutoffMs: number },
): { readonly reason: ReasonCode; readonly explanation: string; readonly details: Readonly<Record<string, unknown>> } | undefined {
  // Another tenant's event is reported exactly like a missing one: ids reveal nothing.
  if (current === undefined || current.tenant !== request.tenant)
    return {
      reason: REASON.EVENT_NOT_FOUND,
      explanation: 'the tenant has no event with that id (or it ended longer ago than the retention period)',
      details: {},
    };
  if (!isOpen(current.state))
    return { reason: REASON.EVENT_ALREADY_ENDED, explanation: `it has already ended: ${current.state}`, details: { state: current.state } };
  // A held event waits for its tenant's resume, however overdue: nothing emits it meanwhile.
  if (current.state !== EVENT_STATE.held && current.dueAt <= request.now + request.cutoffMs) {
    const dueAt = new Date(current.dueAt).toISOString();
    return {
      reason: REASON.EVENT_EMITTING,
      explanation: `it is due at ${dueAt}, within the change cutoff (${request.cutoffMs} ms before): it will be emitted`,
      details: { dueAt, cutoffMs: request.cutoffMs },
    };
  }
  return undefined;
}

/**
 * The fields of a schedule request, as its client wrote them, in which `event` differs from the
 * request that created `record` (the same idempotency key with another content). The record
 * keeps every field the request digest covers (see requestHashOf) but a near-path payload: when
 * the others match, the payload is what differs.
 */
export function requestFieldsDiffering(record: EventRecord, event: ScheduledEvent): string[] {
  const labels = (list: readonly string[] | undefined) => JSON.stringify([...(list ?? [])].sort());
  const differing = [
    record.dueAt !== event.dueAt ? 'date' : undefined,
    record.target !== event.target ? 'target' : undefined,
    record.payload !== undefined && record.payload !== event.payload ? 'payload' : undefined,
    (record.failureTopic ?? null) !== (event.failureTopic ?? null) ? 'failure_topic' : undefined,
    record.user !== event.user ? 'user' : undefined,
    labels(record.labels) !== labels(event.labels) ? 'labels' : undefined,
  ].filter((field): field is string => field !== undefined);
  return differing.length === 0 ? ['payload'] : differing;
}

/** The last of a client's changes applied to an item: its request, and when its client published it. */
export interface LastChange {
  readonly by?: string | undefined;
  readonly at?: number | undefined;
}

/**
 * Whether a change (request `by`, published at `publishedAt` by SNS's Timestamp) applies after
 * the last one applied: once per request, and never behind one the client published later, in
 * whatever order they arrive. Two of the same millisecond apply in arrival order.
 */
export function followsLastChange(last: LastChange, change: { readonly by: string; readonly publishedAt: number }): boolean {
  return last.at === undefined || last.at < change.publishedAt || (last.at === change.publishedAt && last.by !== change.by);
}
