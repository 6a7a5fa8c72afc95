import type { Quotas } from './tenants.js';

/** What a tenant's quota counters say: its open events, and its new events in the current second. */
export interface QuotaCounts {
  readonly openEvents: number;
  readonly thisSecond: number;
}

/** How many more new events the counts leave room for, and which quota is the nearer to full. */
export function quotaRoom(counts: QuotaCounts, quotas: Quotas): { readonly room: number; readonly quota: keyof Quotas } {
  const open = quotas.maxOpenEvents - counts.openEvents;
  const rate = quotas.maxIngestPerSecond - counts.thisSecond;
  return open <= rate ? { room: Math.max(0, open), quota: 'maxOpenEvents' } : { room: Math.max(0, rate), quota: 'maxIngestPerSecond' };
}

/** How long an open-events quota found full is taken as full without asking its counter again. */
export const OPEN_EVENTS_FULL_FOR_MS = 1000;

const secondOf = (now: number): number => Math.floor(now / 1000);

/**
 * What one process last learnt of each tenant's quotas being full, so that a flood of requests
 * over a quota is refused without writing the tenant's one counter item for each: for the rest
 * of that second when its ingest rate is used up, for a second when its open events are at the
 * quota. Then the counter is asked again. Places freed meanwhile by another process wait at
 * most that long; places this process gives back or frees are taken at once (`forget`).
 */
export class FullQuotas {
  private readonly full = new Map<string, { readonly rateSecond?: number; readonly openUntil?: number }>();

  /** Takes note of what a tenant's counters said at `now`. */
  note(tenant: string, counts: QuotaCounts, quotas: Quotas, now: number): void {
    const rateFull = counts.thisSecond >= quotas.maxIngestPerSecond;
    const openFull = counts.openEvents >= quotas.maxOpenEvents;
    if (!rateFull && !openFull) {
      this.full.delete(tenant);
      return;
    }
    this.full.set(tenant, {
      ...(rateFull ? { rateSecond: secondOf(now) } : {}),
      ...(openFull ? { openUntil: now + OPEN_EVENTS_FULL_FOR_MS } : {}),
    });
  }

  /** The quota known to be full for a tenant at `now`, if any. */
  at(tenant: string, now: number): keyof Quotas | undefined {
    const full = this.full.get(tenant);
    if (full?.openUntil !== undefined && now < full.openUntil) return 'maxOpenEvents';
    if (full?.rateSecond === secondOf(now)) return 'maxIngestPerSecond';
    return undefined;
  }

  forget(tenant: string): void {
    this.full.delete(tenant);
  }
}
