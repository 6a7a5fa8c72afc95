import { ScanCommand, type DynamoDBDocumentClient, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BATCH_GET_KEYS } from '../domain/limits.js';
import { EVENT_STATE, type EventRecord, type EventState } from '../domain/lifecycle.js';
import type { EventRecords } from '../app/ports.js';
import { batchGet } from './dynamodb-batches.js';
import { isEventItem, toRecord } from './dynamodb-event-items.js';
import { TABLE, transient } from './dynamodb-table.js';

/** Items a listing's scan reads per request. */
const SCAN_PAGE_ITEMS = 1000;

/**
 * Operators' reads: one event, and a tenant's events in one state. Listing scans the table
 * with a filter rather than keeping an index of states, which every state change would write:
 * the event path stays at one write per step, and an operator's listing pays in reads.
 */
export class DynamoDbEventRecords implements EventRecords {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(id: string): Promise<EventRecord | undefined> {
    const item = (await batchGet(this.client, this.tableName, [id])).get(id);
    return item && isEventItem(item) ? toRecord(item) : undefined;
  }

  /** A tenant's open events (scheduled, queued or held), counted by a scan of the whole table: for reconciling its quota counter. */
  async countOpen(tenant: string): Promise<number> {
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      let result: ScanCommandOutput;
      try {
        result = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'tenant = :tenant AND #state IN (:scheduled, :queued, :held)',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':tenant': tenant,
              ':scheduled': EVENT_STATE.scheduled,
              ':queued': EVENT_STATE.queued,
              ':held': EVENT_STATE.held,
            },
            Select: 'COUNT',
            ExclusiveStartKey: startKey,
            ConsistentRead: true,
          }),
        );
      } catch (error) {
        throw transient('Scan', error);
      }
      count += result.Count ?? 0;
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined);
    return count;
  }

  async list(
    tenant: string,
    state: EventState,
    page: { readonly limit: number; readonly after?: string | undefined },
  ): Promise<{ readonly records: readonly EventRecord[]; readonly next: string | undefined }> {
    const limit = Math.min(page.limit, DYNAMODB_BATCH_GET_KEYS);
    let startKey =
      page.after === undefined ? undefined : (JSON.parse(Buffer.from(page.after, 'base64url').toString()) as Record<string, unknown>);
    const records: EventRecord[] = [];
    // One match past the page says whether there is a next page at all.
    while (records.length <= limit) {
      let result: ScanCommandOutput;
      try {
        result = await this.client.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: 'tenant = :tenant AND #state = :state',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':tenant': tenant, ':state': state },
            Limit: SCAN_PAGE_ITEMS,
            ExclusiveStartKey: startKey,
            ConsistentRead: true,
          }),
        );
      } catch (error) {
        throw transient('Scan', error);
      }
      records.push(...(result.Items ?? []).filter(isEventItem).map(toRecord));
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    if (records.length <= limit) return { records, next: undefined };
    const shown = records.slice(0, limit);
    const last = shown.at(-1) as EventRecord;
    return { records: shown, next: Buffer.from(JSON.stringify({ [TABLE.partitionKey]: last.id })).toString('base64url') };
  }
}
