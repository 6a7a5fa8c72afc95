import { ownersByAccount, type PublicTenantSettings, type TenantEntry, type TenantsDocument } from './tenants.js';

/**
 * What turns one registry into another, item by item, for a registry kept as data: the entries
 * to write (new or changed), the tenants to take out, the public tenant's settings when they
 * changed (null: back to its defaults), and the owners of each account whose owners changed
 * (empty: no tenant owns it now).
 */
export interface RegistryChanges {
  readonly put: readonly TenantEntry[];
  readonly remove: readonly string[];
  readonly publicSettings: PublicTenantSettings | null | undefined;
  readonly accountOwners: ReadonlyMap<string, readonly string[]>;
}

export function registryChanges(before: TenantsDocument, after: TenantsDocument): RegistryChanges {
  const previous = new Map((before.tenants ?? []).map((entry) => [entry.id, entry]));
  const next = new Map((after.tenants ?? []).map((entry) => [entry.id, entry]));
  const put = [...next.values()].filter((entry) => {
    const was = previous.get(entry.id);
    return was === undefined || !sameEntry(was, entry);
  });
  const remove = [...previous.keys()].filter((id) => !next.has(id));
  const [ownersBefore, ownersAfter] = [ownersByAccount(before), ownersByAccount(after)];
  const accountOwners = new Map<string, readonly string[]>();
  for (const account of new Set([...ownersBefore.keys(), ...ownersAfter.keys()])) {
    const owners = [...(ownersAfter.get(account) ?? [])].sort();
    if (JSON.stringify([...(ownersBefore.get(account) ?? [])].sort()) !== JSON.stringify(owners)) accountOwners.set(account, owners);
  }
  const publicChanged = canonical(before.public ?? {}) !== canonical(after.public ?? {});
  return {
    put,
    remove,
    publicSettings: !publicChanged ? undefined : after.public === undefined || Object.keys(after.public).length === 0 ? null : after.public,
    accountOwners,
  };
}

/**
 * A registry with changes made to another laid over it: their entries put in (replacing those of
 * their ids, or added after the others), their removals taken out, their public settings in
 * place of its own when they changed those; every other tenant as it is. A stack's deployment
 * lays the change its CDK props make over the registry its table holds so, leaving the tenants
 * added at runtime to themselves.
 */
export function withChanges(
  registry: TenantsDocument,
  changes: Pick<RegistryChanges, 'put' | 'remove' | 'publicSettings'>,
): TenantsDocument {
  const put = new Map(changes.put.map((entry) => [entry.id, entry]));
  const removed = new Set(changes.remove);
  const kept = (registry.tenants ?? []).filter((entry) => !removed.has(entry.id));
  const keptIds = new Set(kept.map(({ id }) => id));
  const tenants = [...kept.map((entry) => put.get(entry.id) ?? entry), ...changes.put.filter((entry) => !keptIds.has(entry.id))];
  const publicSettings = changes.publicSettings === undefined ? registry.public : (changes.publicSettings ?? undefined);
  return { ...(publicSettings !== undefined ? { public: publicSettings } : {}), ...(tenants.length > 0 ? { tenants } : {}) };
}

/** Whether the changes change nothing. */
export function noRegistryChanges(changes: RegistryChanges): boolean {
  return (
    changes.put.length === 0 && changes.remove.length === 0 && changes.publicSettings === undefined && changes.accountOwners.size === 0
  );
}

/** The same entry written the same way, whatever the key order in the file. */
export function sameEntry(a: TenantEntry, b: TenantEntry): boolean {
  return canonical(a) === canonical(b);
}

/** The same settings written the same way, whatever their keys' order. */
function canonical(value: object): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}
