import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { TenantRegistryReads, TenantRegistryTable } from '../app/ports/tenants.js';
import type { RegistryChanges } from '../domain/registry-changes.js';
import {
  REGISTRY_KEY,
  REGISTRY_LISTING_COMPLETE_ID,
  REGISTRY_PUBLIC_ID,
  registryAccountId,
  registryEntryId,
  tenantOfRegistryEntryId,
} from '../domain/table-keys.js';
import { DYNAMODB_BATCH_WRITE_ITEMS } from '../domain/limits.js';
import type { PublicTenantSettings, TenantEntry, TenantsDocument } from '../domain/tenants.js';
import { batchDelete, batchDeleteKeys, batchGet, batchPut, chunks } from './dynamodb-batches.js';
import { DynamoDbDueIndex } from './dynamodb-due-index.js';
import { REGISTRY_LISTING, registryListingTableName, TABLE, transient } from './dynamodb-table.js';

/**
 * The tenant registry kept as data in the events' table: one item per registered tenant
 * (`#registry#<id>`, its entry as the tenants file writes it, listed under REGISTRY_KEY in the
 * tenant index by when it was written), the public tenant's settings (`#registry-public`), and one item per account a
 * tenant owns (`#registry-account#<account>`, its owners): ingest and the emitter read the
 * tenants a batch names and the accounts its topics are in by key, never the registry whole.
 * Each registered tenant is also listed by id in the listing table beside it (see
 * REGISTRY_LISTING_LAYOUT): written before its entry and taken out after it, so the listing
 * names every entry, and a name whose entry is gone is passed over.
 * The registry a change makes is checked whole before it is written (parseTenantsDocument).
 */
export class DynamoDbTenantRegistry implements TenantRegistryReads, TenantRegistryTable {
  /** The entries are one partition of the tenant index, read as the loader reads a tenant's. */
  private readonly index: DynamoDbDueIndex;
  private readonly listingTableName: string;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: { now(): number },
  ) {
    this.index = new DynamoDbDueIndex(client, tableName);
    this.listingTableName = registryListingTableName(tableName);
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

  /**
   * A page of the registry's entries by id: those whose id starts with `prefix`, after the id
   * `after`, at most `limit`; and the id to continue after when more may follow. Reads the page's
   * ids from the listing table and its entries by key: the same requests whatever the registry's size.
   */
  async page({ prefix = '', after, limit }: RegistryPageQuery): Promise<RegistryPage> {
    // Every id with the prefix sorts between the prefix and the next id without it.
    if (after !== undefined && !after.startsWith(prefix) && after > prefix) return { entries: [], next: undefined };
    const from = after?.startsWith(prefix) ? after : undefined;
    let startKey: Record<string, unknown> | undefined = from === undefined ? undefined : listingKeys(from);
    const ids: string[] = [];
    do {
      let result: QueryCommandOutput;
      try {
        result = await this.client.send(
          new QueryCommand({
            TableName: this.listingTableName,
            KeyConditionExpression: prefix === '' ? '#list = :list' : '#list = :list AND begins_with(#id, :prefix)',
            ExpressionAttributeNames: {
              '#list': REGISTRY_LISTING.partitionKey,
              ...(prefix === '' ? {} : { '#id': REGISTRY_LISTING.sortKey }),
            },
            ExpressionAttributeValues: { ':list': REGISTRY_KEY, ...(prefix === '' ? {} : { ':prefix': prefix }) },
            ExclusiveStartKey: startKey,
            // One more than the page, to know whether another follows.
            Limit: limit + 1 - ids.length,
          }),
        );
      } catch (error) {
        throw transient('Query', error);
      }
      for (const item of result.Items ?? []) ids.push(String(item[REGISTRY_LISTING.sortKey]));
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined && ids.length <= limit);
    return this.pageOf(ids, limit);
  }

  /** A page of the entries of the tenants owning `account` (an account has few owners), by id, as `page` pages them. */
  async pageOwning(account: string, { prefix = '', after, limit }: RegistryPageQuery): Promise<RegistryPage> {
    const owners = (await this.owners([account])).get(account) ?? [];
    const ids = [...owners].sort().filter((id) => id.startsWith(prefix) && (after === undefined || id > after));
    return this.pageOf(ids.slice(0, limit + 1), limit);
  }

  private async pageOf(ids: readonly string[], limit: number): Promise<RegistryPage> {
    const shown = ids.slice(0, limit);
    const entries = await this.entries(shown);
    return { entries: shown.flatMap((id) => entries.get(id) ?? []), next: ids.length > limit ? shown.at(-1) : undefined };
  }

  /**
   * Lists by id the entries an earlier version wrote before the listing table, once: a registry
   * whose entries are all listed is marked so (REGISTRY_LISTING_COMPLETE_ID), and read no
   * further. Run before anything else writes the registry (the local service's start, a stack's
   * deployment). How many it listed.
   */
  async listEveryEntry(): Promise<number> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: REGISTRY_LISTING_COMPLETE_ID }, ConsistentRead: true }),
      );
      if (Item !== undefined) return 0;
    } catch (error) {
      throw transient('GetItem', error);
    }
    const ids = await this.ids();
    await inRounds(this.client, this.listingTableName, batchPut, ids.map(listingKeys));
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: { [TABLE.partitionKey]: REGISTRY_LISTING_COMPLETE_ID } }));
    } catch (error) {
      throw transient('PutItem', error);
    }
    return ids.length;
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
   * registries give it; a tenant is listed before its entry is written, and taken off the
   * listing after its entry is gone.
   */
  async write(changes: RegistryChanges): Promise<void> {
    const now = this.clock.now();
    const owned = [...changes.accountOwners].filter(([, owners]) => owners.length > 0);
    const unowned = [...changes.accountOwners].filter(([, owners]) => owners.length === 0).map(([account]) => account);
    await inRounds(
      this.client,
      this.listingTableName,
      batchPut,
      changes.put.map((entry) => listingKeys(entry.id)),
    );
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
    await inRounds(this.client, this.listingTableName, batchDeleteKeys, changes.remove.map(listingKeys));
  }
}

/** Which entries a page of the registry holds (see DynamoDbTenantRegistry.page). */
export interface RegistryPageQuery {
  readonly prefix?: string | undefined;
  /** The id the previous page ended with. */
  readonly after?: string | undefined;
  readonly limit: number;
}

export interface RegistryPage {
  readonly entries: readonly TenantEntry[];
  /** The id to continue after; undefined: none follows. */
  readonly next: string | undefined;
}

/** A tenant's item in the listing table: its keys alone. */
function listingKeys(tenant: string): Record<string, string> {
  return { [REGISTRY_LISTING.partitionKey]: REGISTRY_KEY, [REGISTRY_LISTING.sortKey]: tenant };
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
