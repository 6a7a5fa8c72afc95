import { noRegistryChanges, registryChanges, type RegistryChanges } from '../domain/registry-changes.js';
import type { TenantsDocument } from '../domain/tenants.js';
import type { TenantRegistryTable } from './ports/tenants.js';

/**
 * Writes a registry over what the table holds, as the changes from that: what is the same is not
 * written again. The local service's start and its tenants file each apply the registry they are
 * given so. What it wrote.
 */
export async function applyRegistry(table: TenantRegistryTable, document: TenantsDocument): Promise<RegistryChanges> {
  const changes = registryChanges(await table.read(), document);
  if (!noRegistryChanges(changes)) await table.write(changes);
  return changes;
}
