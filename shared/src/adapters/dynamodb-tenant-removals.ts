import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tenantRemovalItemId } from '../domain/table-keys.js';
import type { TenantRemoval } from '../domain/tenant-removal.js';
import { batchGet } from './dynamodb-batches.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Removed tenants' ids, one item each in the events' table (`#removed#<tenant>`), expiring when the id is free. */
export class DynamoDbTenantRemovals {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

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
            [TABLE.ttlAttribute]: Math.ceil(removal.reusableFrom / 1000),
          },
        }),
      );
    } catch (error) {
      throw transient('PutItem', error);
    }
  }

  /** The removals recorded for these ids, by id (an expired one too: the caller compares its time). */
  async of(tenants: readonly string[]): Promise<Map<string, TenantRemoval>> {
    const items = await batchGet(this.client, this.tableName, tenants.map(tenantRemovalItemId));
    const removals = new Map<string, TenantRemoval>();
    for (const item of items.values()) {
      const tenant = String(item.tenant);
      removals.set(tenant, { tenant, removedAt: Number(item.removedAt), reusableFrom: Number(item.reusableFrom) });
    }
    return removals;
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
