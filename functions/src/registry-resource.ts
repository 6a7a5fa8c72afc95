import { applyRegistry, parseTenantsDocument, type RegistryChanges, type TenantRegistryTable } from '@adhoc-scheduler/shared';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

/** The custom resource's one physical id: the registry is the table's, whatever the stack's updates. */
export const REGISTRY_RESOURCE_ID = 'tenant-registry';

/** The property the stack hands the registry over in: the tenants file's JSON. */
export const REGISTRY_PROPERTY = 'Registry';

/**
 * The stack's tenant registry written into its table when the stack is created or updated, the
 * CDK props' registry over what the table holds: a tenant the props no longer name is taken out.
 * The functions are updated after it (they depend on it), so none reads a table without the
 * tenants the deployment names. A deletion of the stack leaves the table's items to the table.
 */
export async function writeRegistryResource(
  event: CloudFormationCustomResourceEvent,
  table: TenantRegistryTable,
): Promise<{ readonly PhysicalResourceId: string; readonly Data: { readonly written: number; readonly removed: number } }> {
  let changes: Pick<RegistryChanges, 'put' | 'remove'> = { put: [], remove: [] };
  if (event.RequestType !== 'Delete') {
    const text = event.ResourceProperties[REGISTRY_PROPERTY];
    // The stack checked the registry at synth, with what it knew of the region and account.
    changes = await applyRegistry(table, parseTenantsDocument(JSON.parse(typeof text === 'string' ? text : '{}')));
  }
  return { PhysicalResourceId: REGISTRY_RESOURCE_ID, Data: { written: changes.put.length, removed: changes.remove.length } };
}
