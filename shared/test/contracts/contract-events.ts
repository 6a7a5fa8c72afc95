import { randomBytes } from 'node:crypto';
import type { LoadingTake, NewEvent } from '../../src/app/ports/event-store.js';
import type { Clock } from '../../src/app/ports/process.js';
import { systemClock } from '../../src/adapters/system-clock.js';
import type { EmissionEnding } from '../../src/domain/emission.js';
import { requestHashOf, type ScheduledEvent } from '../../src/domain/event.js';
import { EVENT_STATE } from '../../src/domain/lifecycle.js';
import { DEFAULT_QUOTAS, type Quotas } from '../../src/domain/tenants.js';
import type { Placement } from '../../src/domain/placement.js';

/**
 * The events the contract cases write, each case under a tenant of its own: a store on a table
 * that other cases share (DynamoDB Local, one table a file) sees nothing of theirs.
 */

export const NOW = Date.now();

/** A clock the case moves: what the store checks a change's cutoff against. */
export interface MovableClock extends Clock {
  at: number;
}

export function movableClock(at = NOW): MovableClock {
  const clock: MovableClock = { at, now: () => clock.at, sleep: systemClock.sleep };
  return clock;
}

/**
 * One case's tenant (a new one unless named), and the builders of what it writes: ids are the
 * names given, prefixed with the tenant unless `idOf` says otherwise.
 */
export class CaseEvents {
  constructor(
    readonly tenant = `t${randomBytes(4).toString('hex')}`,
    private readonly idOf: (name: string) => string = (name) => `${tenant}-${name}`,
  ) {}

  /** Its changes, closing 5 s before the due time. */
  get changes(): { readonly tenant: string; readonly cutoffMs: number } {
    return { tenant: this.tenant, cutoffMs: 5_000 };
  }
  private attempts = 0;

  /** An event of the tenant, due an hour from NOW. */
  event(name: string, overrides: Partial<ScheduledEvent> = {}): ScheduledEvent {
    return {
      id: this.idOf(name),
      tenant: this.tenant,
      user: 'alice',
      target: 'arn:aws:sns:us-east-1:000000000000:out',
      payload: `payload of ${name}`,
      dueAt: NOW + 3_600_000,
      version: 1,
      ...overrides,
    };
  }

  id(name: string): string {
    return this.idOf(name);
  }

  /**
   * A new event as one create attempt asks for it (each call an attempt of its own): placed in
   * the delay queue (the near path, copy `token-<name>`) or stored for the loader (the far path).
   */
  newEvent(e: ScheduledEvent, path: 'near' | 'far', extra: Partial<NewEvent> = {}): NewEvent {
    this.attempts += 1;
    const near = path === 'near';
    return {
      event: e,
      clientId: undefined,
      inputMessageId: `input-${e.id}`,
      requestHash: requestHashOf(e),
      placement: { state: near ? EVENT_STATE.queued : EVENT_STATE.scheduled, shard: 0 },
      queuedBy: near ? `token-${e.id}` : undefined,
      createdBy: `attempt-${this.attempts}`,
      quotas: DEFAULT_QUOTAS,
      now: NOW,
      expiresAt: Math.ceil(NOW / 1000) + 3600,
      ...extra,
    };
  }

  /** A cancel by request `by`, published at NOW, its record kept a minute. */
  cancelBy(by: string): { by: string; publishedAt: number; expiresAt: number } {
    return { by, publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 60 };
  }

  /** A reschedule to `dueAt` by request `by`, published at NOW, into the table (shard 0); its record kept a minute past the new due time. */
  moveTo(dueAt: number, by: string, overrides: Partial<RescheduleChange> = {}): RescheduleChange {
    return {
      dueAt,
      by,
      publishedAt: NOW,
      placement: { state: EVENT_STATE.scheduled, shard: 0 },
      queuedBy: 'unused',
      expiresAt: Math.ceil(dueAt / 1000) + 60,
      ...overrides,
    };
  }

  /** The emitter's end of an event, emitted at NOW by delivery `endedBy`. */
  ending(e: ScheduledEvent, endedBy: string, end: EmissionEnding['end'] = { state: 'emitted', at: NOW }): EmissionEnding {
    return { event: e, end, expiresAt: Math.ceil(NOW / 1000) + 7200, endedBy };
  }

  /** A loading chunk's take of the events due before `horizonMs` (two hours from NOW by default). */
  load(owner: string, queuedBy: string, horizonMs = NOW + 7_200_000): LoadingTake {
    return { now: NOW, horizonMs, owner, queuedBy };
  }

  /** A resume's take of held events, giving their records an hour's expiry. */
  resume(owner: string, queuedBy: string): LoadingTake {
    return { now: NOW, horizonMs: NOW, owner, queuedBy, resume: { expiresAt: Math.ceil(NOW / 1000) + 3600 } };
  }

  /** The emitter's hold of event `name`, its payload into the record. */
  hold(name: string): { payload: string; heldKey: string; now: number } {
    return { payload: `payload of ${name}`, heldKey: `${this.tenant}#h0`, now: NOW };
  }

  /** The tenant's own pause or resume, by request `by` published at `publishedAt`. */
  asks(by: string, publishedAt = NOW): { readonly owner: 'tenant'; readonly request: { by: string; publishedAt: number } } {
    return { owner: 'tenant', request: { by, publishedAt } };
  }

  /** Quotas well above what a case sends, or as given. */
  quotas(overrides: Partial<Quotas>): Quotas {
    return { maxOpenEvents: 100, maxIngestPerSecond: 100, maxControlPerSecond: 100, ...overrides };
  }
}

export interface RescheduleChange {
  readonly dueAt: number;
  readonly by: string;
  readonly publishedAt: number;
  readonly placement: Placement;
  readonly queuedBy: string;
  readonly expiresAt: number;
}
