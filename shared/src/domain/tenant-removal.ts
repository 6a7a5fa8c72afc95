import { toIso } from './dates.js';

/**
 * A removed tenant, as its id remembers it. Its records stay until their retention ends, and its
 * notices and dead letters may still be in the queues (dead letters for up to their queue's
 * retention). Until all of that has expired, the id is the removed tenant's: registering it again
 * is a restore (the same client coming back, who may get what is left) and never a new tenant,
 * which would otherwise find the old one's client ids taken, its history listed, and its
 * notices sent to the new dead-letter topic.
 */
export interface TenantRemoval {
  readonly tenant: string;
  readonly removedAt: number;
  /** From this time on (epoch ms) the id may name a new tenant. */
  readonly reusableFrom: number;
}

/** How long what a tenant leaves may outlive it: its records' retention, and its dead letters' queue's. */
export interface LeftoverRetention {
  readonly retentionSeconds: number;
  readonly deadLetterRetentionSeconds: number;
}

/** How long a removed tenant's id stays its own: the longest anything it left may last. */
export function leftoversLastSeconds(kept: LeftoverRetention): number {
  return Math.max(kept.retentionSeconds, kept.deadLetterRetentionSeconds);
}

export function tenantRemoval(tenant: string, removedAt: number, kept: LeftoverRetention): TenantRemoval {
  return { tenant, removedAt, reusableFrom: removedAt + leftoversLastSeconds(kept) * 1000 };
}

/**
 * Why the id may not be registered now, or undefined: a removal that still stands refuses a new
 * registration and admits a restore (the operator says which).
 */
export function registrationRefusal(removal: TenantRemoval | undefined, now: number, restore: boolean): string | undefined {
  if (removal === undefined || restore || now >= removal.reusableFrom) return undefined;
  return (
    `tenant "${removal.tenant}" was removed at ${toIso(removal.removedAt)}, and what it left (its records, notices and dead letters) ` +
    `stands until ${toIso(removal.reusableFrom)}: until then the id is that tenant's. Register it again with --restore to give it ` +
    'back to the same client, or choose another id'
  );
}
