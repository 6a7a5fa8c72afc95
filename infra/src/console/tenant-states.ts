import { DynamoDbQuotaCounters, DynamoDbTenantPauses, type Pause, type Tenant } from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { withTable, type Location } from '../admin/location.js';
import type { PauseState, TenantSummary } from './backend.js';

/** Some tenants' states: their open-events counts, in their order, and their pauses (or why those are unknown). */
export interface TenantStatesRead {
  readonly openEvents: readonly number[];
  readonly pauses: { readonly pauses: ReadonlyMap<string, Pause> } | { readonly unknown: string };
}

/**
 * What the console reads of a tenant beside the registry, from its counter item: its open
 * events and its pause. A page reads them for its own tenants alone, through this port, so that
 * a registry of 100,000 tenants costs a page no more reads than one of ten.
 */
export interface TenantStates {
  read(tenants: readonly string[]): Promise<TenantStatesRead>;
}

/**
 * The states at a location, through one client of its table: a BatchGetItem of the tenants'
 * counter items for their counts, another for their pauses (read as `scripts/admin tenant list`
 * reads them). Pauses that cannot be read are said unknown; counts that cannot be, an AdminError.
 */
export function tenantStatesAt(location: Location): TenantStates {
  return {
    read: (tenants) =>
      withTable(location, async (client, tableName) => {
        const [openEvents, pauses] = await Promise.all([
          new DynamoDbQuotaCounters(client, tableName).openEventsOf(tenants),
          new DynamoDbTenantPauses(client, tableName).paused(tenants).then(
            (paused) => ({ pauses: paused }),
            (error: unknown) => ({ unknown: describeError(error) }),
          ),
        ]);
        return { openEvents, pauses };
      }),
  };
}

/** These tenants as the console shows them: their quotas, with their open events and pauses read now. */
export async function summariesOf(tenants: readonly Tenant[], states: TenantStates): Promise<TenantSummary[]> {
  if (tenants.length === 0) return [];
  const { openEvents, pauses: paused } = await states.read(tenants.map((tenant) => tenant.id));
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
    maxControlPerSecond: tenant.quotas.maxControlPerSecond,
    openEvents: openEvents[index],
    pause: pauseOf(tenant.id),
  }));
}
