import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_GET_KEYS } from '../domain/limits.js';
import { REMOVALS_KEY, tenantOfRemovalItemId, tenantRemovalItemId } from '../domain/table-keys.js';
import type { TenantRemoval } from '../domain/tenant-removal.js';
import { batchGet } from './dynamodb-batches.js';
import { DynamoDbDueIndex } from './dynamodb-due-index.js';
import { TABLE, transient } from './dynamodb-table.js';

/**
 * Removed tenants' ids, one item each in the events' table (`#removed#<tenant>`), expiring when
 * the id is free, and listed in the tenant index under REMOVALS_KEY by their removal's time.
 */
export class DynamoDbTenantRemovals {
  /** The removals are one partition of the tenant index, read as the loader reads a tenant's. */
  private readonly index: DynamoDbDueIndex;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.index = new DynamoDbDueIndex(client, tableName);
  }

  async record(removal: TenantRemoval): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            [TABLE.partitionKey]: tenantRemovalItemId(removal.tenant),
            tenant: removal.tenant,
            removedAt: removal.removedAt,
            reusableFrom: removal.reusableFrom,
            [TABLE.tenantShardKey]: REMOVALS_KEY,
            [TABLE.dueAtKey]: removal.removedAt,
            [TABLE.ttlAttribute]: Math.ceil(removal.reusableFrom / 1000),
          },
        }),
      );
    } catch (error) {
      throw transient('PutItem', error);
    }
  }

  /**
   * The removals recorded for these ids, by id (an expired one too: the caller compares its
   * time). A few ids are read by key, consistently (a tenant added just after its removal is
   * refused); for more, the few removals recorded are listed and only theirs read, however many
   * ids are asked about (an import of thousands), the index a moment behind the table at most.
   */
  async of(tenants: readonly string[]): Promise<Map<string, TenantRemoval>> {
    const items = await batchGet(this.client, this.tableName, await this.itemIdsOf(tenants));
    const removals = new Map<string, TenantRemoval>();
    for (const item of items.values()) {
      const tenant = String(item.tenant);
      removals.set(tenant, { tenant, removedAt: Number(item.removedAt), reusableFrom: Number(item.reusableFrom) });
    }
    return removals;
  }

  private async itemIdsOf(tenants: readonly string[]): Promise<readonly string[]> {
    if (tenants.length <= DYNAMODB_BATCH_GET_KEYS) return tenants.map(tenantRemovalItemId);
    const asked = new Set(tenants);
    const recorded: string[] = [];
    for await (const page of this.index.query(REMOVALS_KEY, 0, Number.MAX_SAFE_INTEGER))
      for (const { id } of page) if (asked.has(tenantOfRemovalItemId(id))) recorded.push(id);
    return recorded;
  }

  /** Forgets a removal: the id registered again. */
  async clear(tenant: string): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: tenantRemovalItemId(tenant) } }));
    } catch (error) {
      throw transient('DeleteItem', error);
    }
  }
}
