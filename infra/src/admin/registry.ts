import {
  DynamoDbTenantRegistry,
  type RegistryPage,
  noRegistryChanges,
  PUBLIC_TENANT_ID,
  registryChanges,
  systemClock,
  TenantRegistry,
  type Tenant,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { readTenantsFile, TenantsFileError, writeTenantsFile } from '../local/tenants-file.js';
import { AdminError } from './errors.js';
import { withTable, type Location } from './location.js';

/** The tenants file as the service reads it; an invalid one is the operator's to correct first. */
export function readRegistry(path: string): TenantsDocument {
  try {
    return readTenantsFile(path);
  } catch (error) {
    if (!(error instanceof TenantsFileError)) throw error;
    throw new AdminError(`${error.message}. Correct it first.`);
  }
}

/**
 * Writes a change to the local service's registry: the tenants file whole, then the change to
 * the registry's table, where the functions read it. So what a command changes is in force
 * within their cache's bound (SCHEDULER_REGISTRY_MAX_AGE_MS) without waiting for the service to
 * see the file; the service applies the file too, which then writes nothing new.
 */
export async function writeRegistry(
  tenantsPath: string,
  location: Location,
  before: TenantsDocument,
  after: TenantsDocument,
): Promise<void> {
  await writeTenantsFile(tenantsPath, after);
  const changes = registryChanges(before, after);
  if (noRegistryChanges(changes)) return;
  await withTable(location, (client, tableName) => new DynamoDbTenantRegistry(client, tableName, systemClock).write(changes));
}

/**
 * Why a lookup of a tenant's events found nothing, when the registry does not know the tenant
 * (an id mistyped, or a tenant removed since): empty when it does, or when no registry is known
 * (a deployed stack named without --tenants).
 */
export function unregisteredTenant(tenant: string, location: Location, tenantsFile: string | undefined): string {
  const path = tenantsFile ?? (location.kind === 'local' ? LOCAL_SERVICE_FILES.tenants : undefined);
  if (tenant === PUBLIC_TENANT_ID || path === undefined || new TenantRegistry(readRegistry(path), '').tenant(tenant) !== undefined)
    return '';
  return `tenant "${tenant}" is not registered in ${path} (scripts/admin tenant list shows who is)`;
}

/** Which tenants a listing shows: by id prefix, by an account of their own, a page at a time after the last one shown. */
export interface TenantFilter {
  readonly prefix?: string | undefined;
  readonly account?: string | undefined;
  /** The id the previous page ended with. */
  readonly after?: string | undefined;
  readonly limit: number;
}

/**
 * A page of the registry's tenants in the listing's order, the public one first, then by id, and
 * the id to continue after when more may follow. The order is the ids', so a tenant added
 * between two pages is shown in its place, and none is shown twice. One pass keeps the first
 * `limit + 1` matches in order: a page of a registry of 100,000 tenants costs no sort of them all.
 */
export function pageOfTenants(
  registry: TenantRegistry,
  { prefix, account, after, limit }: TenantFilter,
): { readonly tenants: readonly Tenant[]; readonly next: string | undefined } {
  const rank = (id: string) => (id === PUBLIC_TENANT_ID ? '' : `~${id}`);
  const afterRank = after === undefined ? undefined : rank(after);
  // Sorted by rank; one more than the page, to know whether another follows.
  const first: { readonly rank: string; readonly tenant: Tenant }[] = [];
  for (const tenant of registry.all()) {
    if (prefix !== undefined && !tenant.id.startsWith(prefix)) continue;
    if (account !== undefined && !tenant.accounts.includes(account)) continue;
    const key = rank(tenant.id);
    if (afterRank !== undefined && key <= afterRank) continue;
    const last = first[limit];
    if (last !== undefined && key >= last.rank) continue;
    first.splice(insertionIndex(first, key), 0, { rank: key, tenant });
    if (first.length > limit + 1) first.pop();
  }
  const tenants = first.slice(0, limit).map((kept) => kept.tenant);
  return { tenants, next: first.length > limit ? tenants.at(-1)?.id : undefined };
}

/** Where `rank` goes in entries sorted by rank (a binary search). */
function insertionIndex(sorted: readonly { readonly rank: string }[], rank: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle]?.rank ?? '') < rank) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * A page of the registry in force at a location (its table), in the listing's order (the public
 * tenant first, then by id), as pageOfTenants pages a registry in memory: the page's ids from
 * the registry's listing table, or an account's owners, and the page's entries by key, so a page
 * costs the same reads whatever the registry's size.
 */
export async function pageOfTenantsAt(
  location: Location,
  { prefix = '', account, after, limit }: TenantFilter,
): Promise<{ readonly tenants: readonly Tenant[]; readonly next: string | undefined }> {
  return withTable(location, async (client, tableName) => {
    const table = new DynamoDbTenantRegistry(client, tableName, systemClock);
    // The public tenant owns no account, and leads the first page.
    const publicFirst = after === undefined && account === undefined && PUBLIC_TENANT_ID.startsWith(prefix);
    const query = { prefix, after: after === PUBLIC_TENANT_ID ? undefined : after, limit: Math.max(1, limit - (publicFirst ? 1 : 0)) };
    const [settings, page] = await Promise.all([
      table.publicSettings(),
      account === undefined ? table.page(query) : table.pageOwning(account, query),
    ]);
    const shown: RegistryPage =
      publicFirst && limit === 1 ? { entries: [], next: page.entries.length > 0 ? PUBLIC_TENANT_ID : undefined } : page;
    const registry = new TenantRegistry({ public: settings, tenants: [...shown.entries] }, '');
    const tenants = [...(publicFirst ? [PUBLIC_TENANT_ID] : []), ...shown.entries.map(({ id }) => id)].flatMap(
      (id) => registry.tenant(id) ?? [],
    );
    return { tenants, next: shown.next };
  });
}

/** A tenant as the registry in force at a location (its table) has it, the public one included; undefined when not registered. */
export async function tenantAt(location: Location, id: string): Promise<Tenant | undefined> {
  return withTable(location, async (client, tableName) => {
    const table = new DynamoDbTenantRegistry(client, tableName, systemClock);
    const [settings, entries] = await Promise.all([table.publicSettings(), id === PUBLIC_TENANT_ID ? new Map() : table.entries([id])]);
    return new TenantRegistry({ public: settings, tenants: [...entries.values()] }, '').tenant(id);
  });
}
