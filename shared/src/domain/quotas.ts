import { EventRejectedError, REASON } from './reasons.js';
import type { Quotas } from './tenants.js';

/** The quotas new events are counted against (control requests have `maxControlPerSecond`). */
export type EventQuota = 'maxOpenEvents' | 'maxIngestPerSecond';

/** What a tenant's quota counters say: its open events, its new events and its control requests in the current second. */
export interface QuotaCounts {
  readonly openEvents: number;
  readonly thisSecond: number;
  readonly controlsThisSecond: number;
}

/** What one counter write takes for a tenant: places for new events, and for control requests. */
export interface QuotaAsk {
  readonly events: number;
  readonly controls: number;
}

/**
 * The room a count leaves under a limit, in whole places: never below nothing, never above the
 * limit (a count below zero, which only a broken item holds, frees no more than the whole
 * limit), none for a count that is no number at all, and a fraction of a place taken as a place.
 */
function roomUnder(limit: number, used: number): number {
  if (Number.isNaN(used)) return 0;
  return Math.min(limit, Math.max(0, Math.floor(limit - used)));
}

/** How many more new events the counts leave room for, and which quota is the nearer to full. */
export function quotaRoom(counts: QuotaCounts, quotas: Quotas): { readonly room: number; readonly quota: EventQuota } {
  const open = roomUnder(quotas.maxOpenEvents, counts.openEvents);
  const rate = roomUnder(quotas.maxIngestPerSecond, counts.thisSecond);
  return open <= rate ? { room: open, quota: 'maxOpenEvents' } : { room: rate, quota: 'maxIngestPerSecond' };
}

/** How many more control requests the counts leave room for in their second. */
export function controlRoom(counts: QuotaCounts, quotas: Quotas): number {
  return roomUnder(quotas.maxControlPerSecond, counts.controlsThisSecond);
}

/**
 * What of an ask the counts leave room for: as many of the events and of the controls as fit,
 * each within its own quotas, so that a tenant at its event quotas still has its cancels taken,
 * and one flooding controls still has its new events. `quota` names the nearer event quota.
 */
export function fitting(ask: QuotaAsk, counts: QuotaCounts, quotas: Quotas): QuotaAsk & { readonly quota: EventQuota } {
  const { room, quota } = quotaRoom(counts, quotas);
  return { events: Math.min(ask.events, room), controls: Math.min(ask.controls, controlRoom(counts, quotas)), quota };
}

/** Counts that leave the whole of every quota: what a second without a count yet holds, at most. */
export const NO_QUOTA_COUNTS: QuotaCounts = { openEvents: 0, thisSecond: 0, controlsThisSecond: 0 };

/** The refusal of a request over one of its tenant's quotas: `details.quota` names it, `details.limit` is its value. */
export function quotaExceeded(tenant: string, quota: keyof Quotas, quotas: Quotas): EventRejectedError {
  const limit = quotas[quota];
  return new EventRejectedError(REASON.QUOTA_EXCEEDED, `tenant "${tenant}" is at its ${quota} quota (${limit})`, { quota, limit });
}

/** How long an open-events quota found full is taken as full without asking its counter again. */
export const OPEN_EVENTS_FULL_FOR_MS = 1000;

const secondOf = (now: number): number => Math.floor(now / 1000);

interface Full {
  readonly rateSecond?: number;
  readonly openUntil?: number;
  readonly controlSecond?: number;
}

/**
 * What one process last learnt of each tenant's quotas being full, so that a flood of requests
 * over a quota is refused without writing the tenant's one counter item for each: for the rest
 * of that second when its ingest rate or its control rate is used up, for a second when its open
 * events are at the quota. Then the counter is asked again. Places freed meanwhile by another
 * process wait at most that long; places this process gives back or frees are taken at once
 * (`forget`).
 */
export class FullQuotas {
  private readonly full = new Map<string, Full>();

  /** Takes note of what a tenant's counters said at `now`. */
  note(tenant: string, counts: QuotaCounts, quotas: Quotas, now: number): void {
    const rateFull = counts.thisSecond >= quotas.maxIngestPerSecond;
    const openFull = counts.openEvents >= quotas.maxOpenEvents;
    const controlsFull = counts.controlsThisSecond >= quotas.maxControlPerSecond;
    if (!rateFull && !openFull && !controlsFull) {
      this.full.delete(tenant);
      return;
    }
    this.full.set(tenant, {
      ...(rateFull ? { rateSecond: secondOf(now) } : {}),
      ...(openFull ? { openUntil: now + OPEN_EVENTS_FULL_FOR_MS } : {}),
      ...(controlsFull ? { controlSecond: secondOf(now) } : {}),
    });
  }

  /** The event quota known to be full for a tenant at `now`, if any. */
  at(tenant: string, now: number): EventQuota | undefined {
    const full = this.full.get(tenant);
    if (full?.openUntil !== undefined && now < full.openUntil) return 'maxOpenEvents';
    if (full?.rateSecond === secondOf(now)) return 'maxIngestPerSecond';
    return undefined;
  }

  /** Whether the tenant's control requests are known to fill its `maxControlPerSecond` in the second of `now`. */
  controlsFullAt(tenant: string, now: number): boolean {
    return this.full.get(tenant)?.controlSecond === secondOf(now);
  }

  /** Forgets that the tenant's event quotas were full (this process freed places); freeing events frees no control request. */
  forget(tenant: string): void {
    const controlSecond = this.full.get(tenant)?.controlSecond;
    if (controlSecond === undefined) this.full.delete(tenant);
    else this.full.set(tenant, { controlSecond });
  }
}
