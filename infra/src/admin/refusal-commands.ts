import {
  DynamoDbRefusalLog,
  PUBLIC_TENANT_ID,
  REFUSALS_KEPT,
  TenantRegistry,
  type RecentRefusals,
  type Refusal,
} from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { commandLine, LOCATION_OPTIONS, noPositionals, wholeNumber } from './arguments.js';
import { AdminError, AdminUsageError } from './errors.js';
import type { Output } from './format.js';
import { locationOf, withTable, type Location } from './location.js';
import { notKeptNote, refusalJson, refusalsTable } from './refusal-view.js';
import { readRegistry, unregisteredTenant } from './registry.js';
import { USAGE } from './usage.js';

/** Runs `use` with the location's refusal log. */
export function withRefusalLog<T>(location: Location, use: (log: DynamoDbRefusalLog) => Promise<T>): Promise<T> {
  return withTable(location, (client, tableName) => use(new DynamoDbRefusalLog(client, tableName)));
}

/**
 * The latest refusal of the request that named `eventId`, among these tenants' (the tenant given,
 * or, for a bare event id, the public tenant and every one the registry knows).
 */
export async function refusalOfEvent(location: Location, tenants: readonly string[], eventId: string): Promise<Refusal | undefined> {
  return withRefusalLog(location, async (log) => {
    for (const tenant of tenants) {
      const found = (await log.recent(tenant)).refusals.find((refusal) => refusal.eventId === eventId);
      if (found !== undefined) return found;
    }
    return undefined;
  });
}

/** The tenants whose refusals a bare event id may be among: the public one, and the registry's when it is known. */
export function knownTenants(location: Location, tenantsFile: string | undefined): string[] {
  const path = tenantsFile ?? (location.kind === 'local' ? LOCAL_SERVICE_FILES.tenants : undefined);
  if (path === undefined) return [PUBLIC_TENANT_ID];
  return [
    PUBLIC_TENANT_ID,
    ...new TenantRegistry(readRegistry(path), '').all().flatMap((tenant) => (tenant.id === PUBLIC_TENANT_ID ? [] : [tenant.id])),
  ];
}

export async function refusalsList(args: string[], output: Output): Promise<number> {
  const command = 'refusals';
  const line = commandLine(
    command,
    args,
    {
      tenant: { type: 'string' },
      limit: { type: 'string', default: String(REFUSALS_KEPT.perTenant) },
      json: { type: 'boolean', default: false },
      tenants: { type: 'string' },
      ...LOCATION_OPTIONS,
    },
    { usage: USAGE.refusals, output },
  );
  if (line === undefined) return 0;
  const { values, positionals } = line;
  noPositionals(positionals, command);
  const { tenant } = values;
  if (tenant === undefined) throw new AdminUsageError('--tenant is missing', command);
  const limit = wholeNumber('--limit', values.limit, { min: 1, max: REFUSALS_KEPT.perTenant }, command);
  const location = locationOf(values, command);
  const recent: RecentRefusals = await withRefusalLog(location, (log) => log.recent(tenant));
  const refusals = recent.refusals.slice(0, limit);
  if (refusals.length === 0) {
    const unregistered = unregisteredTenant(tenant, location, values.tenants);
    if (unregistered !== '') throw new AdminError(`no refusals: ${unregistered}`);
  }
  if (values.json) {
    output.out(JSON.stringify({ refusals: refusals.map(refusalJson), refused: recent.refused, notKept: recent.notKept }, null, 2));
    return 0;
  }
  output.out(refusals.length === 0 ? `no refusals of tenant ${tenant} kept` : refusalsTable(refusals));
  const note = notKeptNote(recent);
  if (note !== undefined) output.err(note);
  return 0;
}
