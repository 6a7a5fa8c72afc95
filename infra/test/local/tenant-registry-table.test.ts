import {
  applyRegistry,
  CachedTenantDirectory,
  DynamoDbTenantRegistry,
  REGISTRY_KEY,
  REGISTRY_LISTING,
  registryChanges,
  registryEntryId,
  registryListingTableName,
  systemClock,
  TABLE,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { BatchWriteCommand, DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
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

  it('pages its entries by id, by prefix and by account: every entry once, none skipped, whatever the page size', async () => {
    const registry = await newRegistry();
    // Ids of several lengths, written out of order, every fifth also in account 999999999999.
    const ids = Array.from({ length: 250 }, (_, index) => `t-${(index * 7919) % 250}`);
    await registry.write(
      registryChanges(
        {},
        {
          tenants: ids.map((id, index) => ({
            id,
            accounts: [String(100_000_000_000 + index), ...(index % 5 === 0 ? ['999999999999'] : [])],
          })),
        },
      ),
    );
    const every = async (
      read: (after: string | undefined) => Promise<{ entries: readonly { id: string }[]; next: string | undefined }>,
    ) => {
      const pages: string[][] = [];
      let after: string | undefined;
      do {
        const page = await read(after);
        pages.push(page.entries.map(({ id }) => id));
        after = page.next;
      } while (after !== undefined);
      return pages;
    };
    for (const limit of [1, 7, 100, 249, 250, 1000]) {
      const pages = await every((after) => registry.page({ after, limit }));
      expect(pages.flat()).toEqual([...ids].sort());
      expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
    }
    const prefixed = [...ids].filter((id) => id.startsWith('t-1')).sort();
    expect((await every((after) => registry.page({ prefix: 't-1', after, limit: 9 }))).flat()).toEqual(prefixed);
    // An id before the prefix's starts at it; one past them finds nothing.
    expect((await registry.page({ prefix: 't-2', after: 't-1', limit: 3 })).entries.map(({ id }) => id)).toEqual(['t-2', 't-20', 't-200']);
    expect(await registry.page({ prefix: 't-1', after: 't-2', limit: 3 })).toEqual({ entries: [], next: undefined });
    const owning = ids.filter((_, index) => index % 5 === 0).sort();
    expect((await every((after) => registry.pageOwning('999999999999', { after, limit: 4 }))).flat()).toEqual(owning);
    expect((await registry.page({ limit: 2 })).entries).toEqual([
      expect.objectContaining({ id: 't-0' }),
      expect.objectContaining({ id: 't-1' }),
    ]);
  });

  it('lists by id, once, the entries an earlier version wrote before the listing table', async () => {
    const tableName = await newTableOf(emulators, 'registry');
    const registry = new DynamoDbTenantRegistry(client, tableName, systemClock);
    // As the versions before wrote them: listed by when they were written, and in an index of the table by id.
    await client.send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName]: ['acme', 'globex'].map((id) => ({
            PutRequest: {
              Item: {
                id: registryEntryId(id),
                entry: { id, accounts: ['111111111111'] },
                [TABLE.tenantShardKey]: REGISTRY_KEY,
                [TABLE.dueAtKey]: 1,
                [REGISTRY_LISTING.partitionKey]: REGISTRY_KEY,
                [REGISTRY_LISTING.sortKey]: id,
              },
            },
          })),
        },
      }),
    );
    expect((await registry.page({ limit: 10 })).entries).toEqual([]);
    expect(await registry.listEveryEntry()).toBe(2);
    expect((await registry.page({ limit: 10 })).entries.map(({ id }) => id)).toEqual(['acme', 'globex']);
    // Done once: marked, and not read again.
    expect(await registry.listEveryEntry()).toBe(0);
  });

  it('lists a tenant before its entry is written and takes it off after its entry is gone: a name left over is passed over', async () => {
    const tableName = await newTableOf(emulators, 'registry');
    const registry = new DynamoDbTenantRegistry(client, tableName, systemClock);
    await registry.write(
      registryChanges(
        {},
        {
          tenants: [
            { id: 'acme', accounts: ['111111111111'] },
            { id: 'globex', accounts: ['222222222222'] },
          ],
        },
      ),
    );
    // As a removal cut short between its two writes leaves it: the entry gone, the name still listed.
    await client.send(new DeleteCommand({ TableName: tableName, Key: { id: registryEntryId('acme') } }));
    expect(await registry.page({ limit: 10 })).toEqual({ entries: [expect.objectContaining({ id: 'globex' })], next: undefined });
    await registry.write(registryChanges({ tenants: [{ id: 'globex', accounts: ['222222222222'] }] }, {}));
    const listed = await client.send(
      new QueryCommand({
        TableName: registryListingTableName(tableName),
        KeyConditionExpression: '#list = :list',
        ExpressionAttributeNames: { '#list': REGISTRY_LISTING.partitionKey },
        ExpressionAttributeValues: { ':list': REGISTRY_KEY },
      }),
    );
    expect(listed.Items?.map((item) => item[REGISTRY_LISTING.sortKey])).not.toContain('globex');
  });
});
