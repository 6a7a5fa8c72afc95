import type { ScheduledEvent } from './event.js';
import { REASON, type ReasonCode } from './reasons.js';

/**
 * An event's states: `scheduled` (stored for the loader), `queued` (in the delay queue), then
 * one of the ends. Cancel and reschedule apply until the emitter claims it for its due time.
 */
export const EVENT_STATE = {
  scheduled: 'scheduled',
  queued: 'queued',
  emitted: 'emitted',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;

export type EventState = (typeof EVENT_STATE)[keyof typeof EVENT_STATE];

export const OPEN_STATES: readonly EventState[] = [EVENT_STATE.scheduled, EVENT_STATE.queued];

export function isOpen(state: EventState): boolean {
  return OPEN_STATES.includes(state);
}

export function isEventState(value: unknown): value is EventState {
  return typeof value === 'string' && (Object.values(EVENT_STATE) as string[]).includes(value);
}

/** An event as the store keeps it: the event, where it is in its lifecycle, and when it got there (epoch ms). */
export interface EventRecord extends ScheduledEvent {
  readonly state: EventState;
  /** The client's idempotency key, when it gave one. */
  readonly clientId?: string | undefined;
  /** The SNS message that created it. */
  readonly inputMessageId?: string | undefined;
  readonly createdAt: number;
  readonly queuedAt?: number | undefined;
  readonly rescheduledAt?: number | undefined;
  readonly emittedAt?: number | undefined;
  readonly failedAt?: number | undefined;
  readonly cancelledAt?: number | undefined;
  /** The input message that cancelled it: its redelivery is not refused. */
  readonly cancelledBy?: string | undefined;
  /** Why it failed. */
  readonly reason?: ReasonCode | undefined;
  /** Until when an emitter holds it for its due time (epoch ms); cancel and reschedule wait for no one. */
  readonly emitClaimUntil?: number | undefined;
  /** When the store may drop the record (epoch seconds): the retention period after its end, or after its due time. */
  readonly expiresAt: number;
}

/** Why a cancel or reschedule of `current` by `tenant` was refused; undefined when nothing forbids it (a race to retry). */
export function changeRefusal(
  current: EventRecord | undefined,
  tenant: string,
  now: number,
): { readonly reason: ReasonCode; readonly details: Readonly<Record<string, unknown>> } | undefined {
  // Another tenant's event is reported exactly like a missing one: ids reveal nothing.
  if (current === undefined || current.tenant !== tenant) return { reason: REASON.EVENT_NOT_FOUND, details: {} };
  if (!isOpen(current.state)) return { reason: REASON.EVENT_ALREADY_ENDED, details: { state: current.state } };
  if (current.emitClaimUntil !== undefined && current.emitClaimUntil >= now) {
    return { reason: REASON.EVENT_EMITTING, details: { dueAt: new Date(current.dueAt).toISOString() } };
  }
  return undefined;
}
