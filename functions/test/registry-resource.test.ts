import type { RegistryChanges, TenantRegistryTable, TenantsDocument } from '@adhoc-scheduler/shared';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { REGISTRY_PROPERTY, REGISTRY_RESOURCE_ID, writeRegistryResource } from '../src/registry-resource.js';

/** The stack's custom resource that writes its registry into the table, on a table in memory. */

class MemoryRegistryTable implements TenantRegistryTable {
  document: TenantsDocument = {};
  writes: RegistryChanges[] = [];
  /** Times the entries were listed by id before anything was read. */
  listings = 0;

  async listEveryEntry(): Promise<number> {
    if (this.writes.length === 0) this.listings++;
    return 0;
  }

  async read(): Promise<TenantsDocument> {
    return this.document;
  }

  async write(changes: RegistryChanges): Promise<void> {
    this.writes.push(changes);
    const kept = (this.document.tenants ?? []).filter(
      ({ id }) => !changes.remove.includes(id) && !changes.put.some((entry) => entry.id === id),
    );
    this.document = { tenants: [...kept, ...changes.put] };
  }
}

const ACME = { id: 'acme', accounts: ['111111111111'] };
const GLOBEX = { id: 'globex', accounts: ['222222222222'] };
/** A tenant added at runtime (scripts/admin tenant add): in the table, never in the CDK props. */
const INITECH = { id: 'initech', accounts: ['333333333333'] };

function event(
  requestType: 'Create' | 'Update' | 'Delete',
  registry: TenantsDocument,
  previous: TenantsDocument = registry,
): CloudFormationCustomResourceEvent {
  const properties = (document: TenantsDocument) => ({
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
    [REGISTRY_PROPERTY]: JSON.stringify(document),
  });
  const base = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
    ResponseURL: 'https://example.invalid/response',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Scheduler/1',
    RequestId: 'request',
    LogicalResourceId: 'TenantRegistry',
    ResourceType: 'Custom::TenantRegistry',
    ResourceProperties: properties(registry),
  };
  if (requestType === 'Create') return { ...base, RequestType: 'Create' };
  if (requestType === 'Update')
    return { ...base, RequestType: 'Update', PhysicalResourceId: REGISTRY_RESOURCE_ID, OldResourceProperties: properties(previous) };
  return { ...base, RequestType: 'Delete', PhysicalResourceId: REGISTRY_RESOURCE_ID };
}

describe("the stack's registry written into its table", () => {
  it('writes the registry on create, and on update what the props changed: a tenant they no longer name is taken out', async () => {
    const table = new MemoryRegistryTable();
    expect(await writeRegistryResource(event('Create', { tenants: [ACME, GLOBEX] }), table)).toEqual({
      PhysicalResourceId: REGISTRY_RESOURCE_ID,
      Data: { written: 2, removed: 0 },
    });
    expect(table.document.tenants?.map(({ id }) => id)).toEqual(['acme', 'globex']);
    // The entries an earlier version wrote are listed by id first (an upgrade's update runs it).
    expect(table.listings).toBe(1);
    const updated = await writeRegistryResource(
      event('Update', { tenants: [{ ...ACME, maxOpenEvents: 10 }] }, { tenants: [ACME, GLOBEX] }),
      table,
    );
    expect(updated.Data).toEqual({ written: 1, removed: 1 });
    expect(table.document.tenants).toEqual([{ ...ACME, maxOpenEvents: 10 }]);
  });

  it('leaves the tenants added at runtime as they are, whatever the deployment changes', async () => {
    const table = new MemoryRegistryTable();
    table.document = { tenants: [ACME, INITECH] };
    await writeRegistryResource(event('Create', { tenants: [ACME] }), table);
    await writeRegistryResource(event('Update', { tenants: [GLOBEX] }, { tenants: [ACME] }), table);
    expect(table.document.tenants?.map(({ id }) => id).sort()).toEqual(['globex', 'initech']);
    await writeRegistryResource(event('Update', {}, { tenants: [GLOBEX] }), table);
    expect(table.document.tenants).toEqual([INITECH]);
  });

  it('refuses a deployment whose tenants break a rule beside those added at runtime, and writes nothing', async () => {
    const table = new MemoryRegistryTable();
    table.document = { tenants: [INITECH] };
    const grab = { tenants: [{ ...GLOBEX, targetAccounts: [INITECH.accounts[0] as string] }] };
    await expect(writeRegistryResource(event('Create', grab), table)).rejects.toThrow(/account of tenant "initech"/);
    expect(table.writes).toEqual([]);
  });

  it('writes nothing when the registry is what the table holds, and nothing on delete', async () => {
    const table = new MemoryRegistryTable();
    table.document = { tenants: [ACME] };
    await writeRegistryResource(event('Update', { tenants: [ACME] }), table);
    await writeRegistryResource(event('Delete', {}), table);
    expect(table.writes).toEqual([]);
    expect(table.document).toEqual({ tenants: [ACME] });
  });

  it('refuses a registry that breaks a rule, and writes nothing', async () => {
    const table = new MemoryRegistryTable();
    const grab = { tenants: [ACME, { ...GLOBEX, targetAccounts: ['111111111111'] }] };
    await expect(writeRegistryResource(event('Create', grab), table)).rejects.toThrow(/account of tenant "acme"/);
    expect(table.writes).toEqual([]);
  });
});
