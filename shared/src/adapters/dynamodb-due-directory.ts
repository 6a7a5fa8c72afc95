import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueDirectory, DueEntry } from '../app/ports/due-index.js';
import { expiresAtFor } from '../domain/event.js';
import {
  DUE_DIRECTORY_PERIOD_MS,
  dueDirectoryEntryId,
  dueDirectoryKey,
  dueDirectoryPeriodOf,
  dueDirectoryPeriodsBetween,
  tenantOfDueDirectoryEntry,
} from '../domain/table-keys.js';
import { batchPut } from './dynamodb-batches.js';
import { DynamoDbDueIndex } from './dynamodb-due-index.js';
import { TABLE } from './dynamodb-table.js';

/** Entries a process remembers having written before it forgets them all (and writes each once more). */
const REMEMBERED_ENTRIES = 100_000;

/**
 * The due directory in the table (see dueDirectoryKey in table-keys.ts): one small item per
 * tenant and period, written unconditionally (the same item again changes nothing), listed in the
 * tenant index. A process writes each entry once while it remembers it, so an ingest function's
 * batches of one tenant's events due in the same period write it once. An entry lasts as long as
 * an event due at the end of its period may: a loader catching up after an outage still finds it.
 */
export class DynamoDbDueDirectory implements DueDirectory {
  private readonly written = new Set<string>();
  /** A period's entries are one partition of the tenant index, read as the loader reads a tenant's. */
  private readonly index: DynamoDbDueIndex;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly retentionSeconds: number,
  ) {
    this.index = new DynamoDbDueIndex(client, tableName);
  }

  async note(entries: readonly DueEntry[]): Promise<void> {
    const items = new Map<string, Record<string, unknown>>();
    for (const { tenant, dueAt } of entries) {
      const period = dueDirectoryPeriodOf(dueAt);
      const id = dueDirectoryEntryId(period, tenant);
      if (this.written.has(id) || items.has(id)) continue;
      items.set(id, {
        [TABLE.partitionKey]: id,
        [TABLE.tenantShardKey]: dueDirectoryKey(period),
        [TABLE.dueAtKey]: period,
        tenant,
        [TABLE.ttlAttribute]: expiresAtFor(period + DUE_DIRECTORY_PERIOD_MS, this.retentionSeconds),
      });
    }
    if (items.size === 0) return;
    await batchPut(this.client, this.tableName, [...items.values()]);
    if (this.written.size + items.size > REMEMBERED_ENTRIES) this.written.clear();
    for (const id of items.keys()) this.written.add(id);
  }

  async tenantsBetween(fromMs: number, untilMs: number): Promise<ReadonlySet<string>> {
    const tenants = new Set<string>();
    const periods = await Promise.all(dueDirectoryPeriodsBetween(fromMs, untilMs).map((period) => this.tenantsOf(period)));
    for (const noted of periods) for (const tenant of noted) tenants.add(tenant);
    return tenants;
  }

  private async tenantsOf(period: number): Promise<string[]> {
    const tenants: string[] = [];
    for await (const page of this.index.query(dueDirectoryKey(period), period, period + DUE_DIRECTORY_PERIOD_MS))
      for (const { id } of page) tenants.push(tenantOfDueDirectoryEntry(id));
    return tenants;
  }
}
