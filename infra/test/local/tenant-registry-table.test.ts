import {
  applyRegistry,
  CachedTenantDirectory,
  DynamoDbTenantRegistry,
  registryChanges,
  systemClock,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { capturingLogger, sharedEmulators } from './kit.js';
import { newTable as newTableOf, tableClient } from './table-kit.js';

/** The tenant registry kept as data on DynamoDB Local: written as changes, read back by key, and read whole. */
const emulators = sharedEmulators();
const client = tableClient(emulators);
afterAll(() => {
  client.destroy();
});
const newRegistry = async () => new DynamoDbTenantRegistry(client, await newTableOf(emulators, 'registry'), systemClock);

const REGISTRY: TenantsDocument = {
  public: { maxIngestPerSecond: 50 },
  tenants: [
    { id: 'acme', accounts: ['111111111111'], targetAccounts: ['333333333333'], maxOpenEvents: 10 },
    { id: 'globex', accounts: ['222222222222', '111111111111'], requireUser: false },
  ],
};

describe('the registry as data', () => {
  it('reads back what was written: each entry by id, the public settings, each account with its owners, every id', async () => {
    const registry = await newRegistry();
    await registry.write(registryChanges({}, REGISTRY));
    const entries = await registry.entries(['acme', 'globex', 'initech']);
    expect(Object.fromEntries(entries)).toEqual({ acme: REGISTRY.tenants?.[0], globex: REGISTRY.tenants?.[1] });
    expect(await registry.publicSettings()).toEqual({ maxIngestPerSecond: 50 });
    expect(Object.fromEntries(await registry.owners(['111111111111', '222222222222', '333333333333']))).toEqual({
      '111111111111': ['acme', 'globex'],
      '222222222222': ['globex'],
    });
    expect(await registry.ids()).toEqual(['acme', 'globex']);
    expect(await registry.read()).toEqual(REGISTRY);
  });

  it('applies a registry over what an earlier one left: tenants gone are taken out, with their accounts', async () => {
    const registry = await newRegistry();
    await applyRegistry(registry, REGISTRY);
    const next: TenantsDocument = {
      tenants: [
        { id: 'globex', accounts: ['222222222222'] },
        { id: 'initech', accounts: ['444444444444'] },
      ],
    };
    await applyRegistry(registry, next);
    expect(await registry.read()).toEqual(next);
    expect(Object.fromEntries(await registry.owners(['111111111111', '222222222222', '444444444444']))).toEqual({
      '222222222222': ['globex'],
      '444444444444': ['initech'],
    });
    expect(await registry.publicSettings()).toEqual({});
  });

  it("is what the functions' cache reads: a tenant by its input topic, and another tenant's own account kept from the public one", async () => {
    const registry = await newRegistry();
    await applyRegistry(registry, REGISTRY);
    const directory = new CachedTenantDirectory(registry, {
      topicPrefix: 'sched',
      maxAgeMs: 5000,
      clock: systemClock,
      logger: capturingLogger().logger,
    });
    const topic = 'arn:aws:sns:us-east-1:000000000000:sched-tenant-acme';
    const found = await directory.lookup({
      topicArns: [topic, 'arn:aws:sns:us-east-1:000000000000:sched-input'],
      accounts: ['222222222222'],
    });
    expect(found.forTopic(topic)?.quotas.maxOpenEvents).toBe(10);
    expect(found.tenant('public')?.quotas.maxIngestPerSecond).toBe(50);
    expect(found.tenant('public')?.otherTenantsAccounts.has('222222222222')).toBe(true);
  });
});
