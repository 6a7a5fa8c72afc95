import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DueDirectory, DueDirectoryBackfill, DueEntry } from '../app/ports/due-index.js';
import type { Clock } from '../app/ports/process.js';
import { openEventsCounterId, storedOrHeldPartition, tenantOfCounterId } from '../domain/table-keys.js';
import { TABLE, transient } from './dynamodb-table.js';
import { DynamoDbTenantPauses, PAUSED_AT_ATTRIBUTES } from './dynamodb-tenant-pauses.js';

/** Items one page of the scan reads. */
const SCAN_PAGE_ITEMS = 1000;

/**
 * The backfill of the due directory and the pause marks in the table (see DueDirectoryBackfill):
 * a scan, a page a call, that notes every event listed among its tenant's stored ones and marks
 * each tenant with held events, or paused (its counters item), as a pause would.
 */
export class DynamoDbDueDirectoryBackfill implements DueDirectoryBackfill {
  private readonly pauses: DynamoDbTenantPauses;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly directory: Pick<DueDirectory, 'note'>,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    this.pauses = new DynamoDbTenantPauses(client, tableName);
  }

  async page(from: string | undefined): Promise<string | undefined> {
    let page: { readonly Items?: Record<string, unknown>[]; readonly LastEvaluatedKey?: Record<string, unknown> };
    try {
      page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          Limit: SCAN_PAGE_ITEMS,
          ...(from === undefined ? {} : { ExclusiveStartKey: { [TABLE.partitionKey]: from } }),
          ProjectionExpression: ['#id', 'tenant', '#key', '#due', ...PAUSED_AT_ATTRIBUTES].join(', '),
          ExpressionAttributeNames: { '#id': TABLE.partitionKey, '#key': TABLE.tenantShardKey, '#due': TABLE.dueAtKey },
        }),
      );
    } catch (error) {
      throw transient('Scan', error);
    }
    const stored: DueEntry[] = [];
    const marked = new Set<string>();
    for (const item of page.Items ?? []) {
      const id = String(item[TABLE.partitionKey]);
      const partition = storedOrHeldPartition(String(item[TABLE.tenantShardKey] ?? ''));
      const tenant = typeof item.tenant === 'string' ? item.tenant : partition?.tenant;
      const dueAt = item[TABLE.dueAtKey];
      if (partition?.family === 's' && tenant !== undefined && typeof dueAt === 'number') stored.push({ tenant, dueAt });
      if (partition?.family === 'h' && tenant !== undefined) marked.add(tenant);
      if (id.startsWith(openEventsCounterId('')) && PAUSED_AT_ATTRIBUTES.some((attribute) => item[attribute] !== undefined))
        marked.add(tenantOfCounterId(id));
    }
    const now = this.clock.now();
    await Promise.all([this.directory.note(stored), ...[...marked].map((tenant) => this.pauses.mark(tenant, now))]);
    const next = page.LastEvaluatedKey?.[TABLE.partitionKey];
    return next === undefined ? undefined : String(next);
  }
}
