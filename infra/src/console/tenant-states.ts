import { DynamoDbQuotaCounters, type Pause, type Tenant } from '@adhoc-scheduler/shared';
import { withTable, type Location } from '../admin/location.js';
import { pausesAt } from '../admin/pause-commands.js';
import type { PauseState, TenantSummary } from './backend.js';

/**
 * What the console reads of a tenant beside the registry, from its counter item: its open
 * events and its pause. A page reads them for its own tenants alone, through this port, so that
 * a registry of 100,000 tenants costs a page no more reads than one of ten.
 */
export interface TenantStates {
  /** The open-events counts of these tenants, in their order. */
  openEvents(tenants: readonly string[]): Promise<readonly number[]>;
  /** Their pauses, or why they are unknown (the table could not be read). */
  pauses(tenants: readonly string[]): Promise<{ readonly pauses: ReadonlyMap<string, Pause> } | { readonly unknown: string }>;
}

/** The states at a location: a BatchGetItem of the page's counter items for the counts, another for the pauses (as `scripts/admin tenant list` reads them). */
export function tenantStatesAt(location: Location): TenantStates {
  return {
    openEvents: (tenants) => withTable(location, (client, tableName) => new DynamoDbQuotaCounters(client, tableName).openEventsOf(tenants)),
    pauses: (tenants) => pausesAt(location, tenants),
  };
}

/** These tenants as the console shows them: their quotas, with their open events and pauses read now. */
export async function summariesOf(tenants: readonly Tenant[], states: TenantStates): Promise<TenantSummary[]> {
  if (tenants.length === 0) return [];
  const ids = tenants.map((tenant) => tenant.id);
  const [counts, paused] = await Promise.all([states.openEvents(ids), states.pauses(ids)]);
  const pauseOf = (id: string): PauseState => {
    if ('unknown' in paused) return { paused: 'unknown' };
    const pause = paused.pauses.get(id);
    return pause === undefined
      ? { paused: false }
      : { paused: true, since: pause.pausedAt, note: pause.note, by: pause.pausedBy, owner: pause.owner };
  };
  return tenants.map((tenant, index) => ({
    id: tenant.id,
    enabled: tenant.enabled,
    maxOpenEvents: tenant.quotas.maxOpenEvents,
    maxIngestPerSecond: tenant.quotas.maxIngestPerSecond,
    openEvents: counts[index],
    pause: pauseOf(tenant.id),
  }));
}
