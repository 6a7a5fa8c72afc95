import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TenantRegistryReads, TenantRegistryTable } from '../app/ports/tenants.js';
import type { RegistryChanges } from '../domain/registry-changes.js';
import { REGISTRY_KEY, REGISTRY_PUBLIC_ID, registryAccountId, registryEntryId, tenantOfRegistryEntryId } from '../domain/table-keys.js';
import { DYNAMODB_BATCH_WRITE_ITEMS } from '../domain/limits.js';
import type { PublicTenantSettings, TenantEntry, TenantsDocument } from '../domain/tenants.js';
import { batchDelete, batchGet, batchPut, chunks } from './dynamodb-batches.js';
import { DynamoDbDueIndex } from './dynamodb-due-index.js';
import { TABLE, transient } from './dynamodb-table.js';

/**
 * The tenant registry kept as data in the events' table: one item per registered tenant
 * (`#registry#<id>`, its entry as the tenants file writes it, listed in the tenant index under
 * REGISTRY_KEY), the public tenant's settings (`#registry-public`), and one item per account a
 * tenant owns (`#registry-account#<account>`, its owners): ingest and the emitter read the
 * tenants a batch names and the accounts its topics are in by key, never the registry whole.
 * The registry a change makes is checked whole before it is written (parseTenantsDocument).
 */
export class DynamoDbTenantRegistry implements TenantRegistryReads, TenantRegistryTable {
  /** The entries are one partition of the tenant index, read as the loader reads a tenant's. */
  private readonly index: DynamoDbDueIndex;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: { now(): number },
  ) {
    this.index = new DynamoDbDueIndex(client, tableName);
  }

  async entries(ids: readonly string[]): Promise<ReadonlyMap<string, TenantEntry>> {
    const items = await batchGet(this.client, this.tableName, ids.map(registryEntryId));
    const entries = new Map<string, TenantEntry>();
    for (const [itemId, item] of items) entries.set(tenantOfRegistryEntryId(itemId), item.entry as TenantEntry);
    return entries;
  }

  async publicSettings(): Promise<PublicTenantSettings> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: REGISTRY_PUBLIC_ID }, ConsistentRead: true }),
      );
      return (Item?.settings as PublicTenantSettings | undefined) ?? {};
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  async owners(accounts: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>> {
    const items = await batchGet(this.client, this.tableName, accounts.map(registryAccountId));
    const owners = new Map<string, readonly string[]>();
    for (const account of accounts) {
      const owning = items.get(registryAccountId(account))?.owners as readonly string[] | undefined;
      if (owning !== undefined && owning.length > 0) owners.set(account, owning);
    }
    return owners;
  }

  async ids(): Promise<readonly string[]> {
    const ids: string[] = [];
    for await (const page of this.index.query(REGISTRY_KEY, 0, Number.MAX_SAFE_INTEGER)) {
      for (const ref of page) ids.push(tenantOfRegistryEntryId(ref.id));
    }
    return ids.sort();
  }

  /** The registry whole, as the tenants file holds it: the public tenant's settings, then each tenant by id. */
  async read(): Promise<TenantsDocument> {
    const [settings, ids] = await Promise.all([this.publicSettings(), this.ids()]);
    const entries = await this.entries(ids);
    const tenants = ids.flatMap((id) => {
      const entry = entries.get(id);
      return entry === undefined ? [] : [entry];
    });
    return { ...(Object.keys(settings).length > 0 ? { public: settings } : {}), ...(tenants.length > 0 ? { tenants } : {}) };
  }

  /**
   * Writes what changes one registry into another (registryChanges). Entries and owners are
   * written before tenants are taken out, so an account is never without the owner both
   * registries give it.
   */
  async write(changes: RegistryChanges): Promise<void> {
    const now = this.clock.now();
    const owned = [...changes.accountOwners].filter(([, owners]) => owners.length > 0);
    const unowned = [...changes.accountOwners].filter(([, owners]) => owners.length === 0).map(([account]) => account);
    await inRounds(this.client, this.tableName, batchPut, [
      // JSON's own values only: what the file held, no undefined to marshal.
      ...changes.put.map((entry) => ({
        [TABLE.partitionKey]: registryEntryId(entry.id),
        entry: JSON.parse(JSON.stringify(entry)) as TenantEntry,
        [TABLE.tenantShardKey]: REGISTRY_KEY,
        [TABLE.dueAtKey]: now,
      })),
      ...owned.map(([account, owners]) => ({ [TABLE.partitionKey]: registryAccountId(account), owners })),
      ...(changes.publicSettings ? [{ [TABLE.partitionKey]: REGISTRY_PUBLIC_ID, settings: changes.publicSettings }] : []),
    ]);
    await inRounds(this.client, this.tableName, batchDelete, [
      ...changes.remove.map(registryEntryId),
      ...unowned.map(registryAccountId),
      ...(changes.publicSettings === null ? [REGISTRY_PUBLIC_ID] : []),
    ]);
  }
}

/**
 * Batch writes a round at a time: a registry of thousands of tenants is hundreds of requests,
 * which all at once would wait for the client's sockets.
 */
async function inRounds<T>(
  client: DynamoDBDocumentClient,
  tableName: string,
  write: (client: DynamoDBDocumentClient, tableName: string, items: readonly T[]) => Promise<void>,
  items: readonly T[],
): Promise<void> {
  for (const round of chunks(items, DYNAMODB_BATCH_WRITE_ITEMS * REGISTRY_WRITES_IN_FLIGHT)) await write(client, tableName, round);
}

/** Batch writes of the registry in flight at once. */
const REGISTRY_WRITES_IN_FLIGHT = 16;
