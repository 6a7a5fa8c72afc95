import {
  noRegistryChanges,
  parseTenantsDocument,
  registryChanges,
  withChanges,
  type RegistryChanges,
  type TenantRegistryTable,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

/** The custom resource's one physical id: the registry is the table's, whatever the stack's updates. */
export const REGISTRY_RESOURCE_ID = 'tenant-registry';

/** The property the stack hands the registry over in: the tenants file's JSON. */
export const REGISTRY_PROPERTY = 'Registry';

/**
 * Where the entries are listed by id, a property too: a stack deployed when they were listed
 * elsewhere (or not at all) gets an update of the resource, which lists them (listEveryEntry).
 */
export const LISTING_PROPERTY = 'Listing';

/**
 * The stack's tenant registry written into its table when the stack is created or updated: what
 * the deployment changes in the CDK props' registry (a tenant added, changed or no longer named,
 * the public settings) is laid over what the table holds, so the tenants added at runtime
 * (scripts/admin tenant add) stay as they are. The registry that makes is checked whole: one that
 * breaks a rule fails the deployment with the rule's message. The functions are updated after
 * it (they depend on it), so none reads a table without the tenants the deployment names. A
 * deletion of the stack leaves the table's items to the table.
 */
export async function writeRegistryResource(
  event: CloudFormationCustomResourceEvent,
  table: TenantRegistryTable,
): Promise<{ readonly PhysicalResourceId: string; readonly Data: { readonly written: number; readonly removed: number } }> {
  let changes: Pick<RegistryChanges, 'put' | 'remove'> = { put: [], remove: [] };
  if (event.RequestType !== 'Delete') {
    const before = event.RequestType === 'Update' ? registryOf(event.OldResourceProperties) : {};
    await table.listEveryEntry();
    const current = await table.read();
    const next = parseTenantsDocument(withChanges(current, registryChanges(before, registryOf(event.ResourceProperties))));
    const written = registryChanges(current, next);
    if (!noRegistryChanges(written)) await table.write(written);
    changes = written;
  }
  return { PhysicalResourceId: REGISTRY_RESOURCE_ID, Data: { written: changes.put.length, removed: changes.remove.length } };
}

/** The registry a version of the resource's properties holds (the stack checked it at synth). */
function registryOf(properties: Record<string, unknown>): TenantsDocument {
  const text = properties[REGISTRY_PROPERTY];
  return parseTenantsDocument(JSON.parse(typeof text === 'string' ? text : '{}'));
}
