import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isOpen, type EventRecord, type EventState } from '../domain/lifecycle.js';
import type { EventRecords } from '../app/ports.js';
import { getRecord, TABLE, tenantStateKey, toRecord, transient } from './dynamodb-table.js';

/** BatchGetItem reads at most 100 keys per request. */
const BATCH_GET_LIMIT = 100;

/** Operators' reads: one event, and a tenant's events by state through the `byTenantState` index. */
export class DynamoDbEventRecords implements EventRecords {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  get(id: string): Promise<EventRecord | undefined> {
    return getRecord(this.client, this.tableName, id);
  }

  async list(
    tenant: string,
    state: EventState,
    page: { readonly limit: number; readonly after?: string | undefined },
  ): Promise<{ readonly records: readonly EventRecord[]; readonly next: string | undefined }> {
    const limit = Math.min(page.limit, BATCH_GET_LIMIT);
    let startKey = page.after === undefined ? undefined : (JSON.parse(Buffer.from(page.after, 'base64url').toString()) as Record<string, unknown>);
    const records: EventRecord[] = [];
    // Scheduled and queued share one index partition (`<tenant>#open`); the item says which.
    do {
      let result;
      try {
        result = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: TABLE.tenantStateIndex,
            KeyConditionExpression: '#key = :key',
            ExpressionAttributeNames: { '#key': TABLE.tenantStateKey },
            ExpressionAttributeValues: { ':key': tenantStateKey(tenant, state) },
            Limit: limit - records.length,
            ExclusiveStartKey: startKey,
          }),
        );
      } catch (error) {
        throw transient('Query', error);
      }
      const found = await this.read((result.Items ?? []).map((item) => String(item[TABLE.partitionKey])));
      records.push(...(isOpen(state) ? found.filter((record) => record.state === state) : found));
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined && records.length < limit);
    return { records, next: startKey === undefined ? undefined : Buffer.from(JSON.stringify(startKey)).toString('base64url') };
  }

  /** The records of these ids, in the same order (an id whose record is gone is left out). */
  private async read(ids: readonly string[]): Promise<EventRecord[]> {
    if (ids.length === 0) return [];
    const byId = new Map<string, EventRecord>();
    let keys: Record<string, unknown>[] = ids.map((id) => ({ [TABLE.partitionKey]: id }));
    while (keys.length > 0) {
      let result;
      try {
        result = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
      } catch (error) {
        throw transient('BatchGetItem', error);
      }
      for (const item of result.Responses?.[this.tableName] ?? []) byId.set(String(item[TABLE.partitionKey]), toRecord(item));
      keys = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
    return ids.flatMap((id) => byId.get(id) ?? []);
  }
}
