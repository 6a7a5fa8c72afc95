import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Pause, TenantPauses } from '../app/ports.js';
import { batchGet } from './dynamodb-batches.js';
import { openEventsCounterId } from './dynamodb-quota-counters.js';
import { TABLE, transient } from './dynamodb-table.js';

/**
 * Tenants' pauses, on their quota counters' items (`#tenant#<id>`: `pausedAt`, `pauseNote`,
 * `pausedBy`): the emitter's hold checks the pause in the same transaction that holds an event,
 * so that no event is held once a resume has ended the pause.
 */
export class DynamoDbTenantPauses implements TenantPauses {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async pause(tenant: string, pause: Pause): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression:
            'SET pausedAt = if_not_exists(pausedAt, :at), pausedBy = :by' +
            (pause.note === undefined ? ' REMOVE pauseNote' : ', pauseNote = :note'),
          ExpressionAttributeValues: {
            ':at': pause.pausedAt,
            ':by': pause.pausedBy,
            ...(pause.note === undefined ? {} : { ':note': pause.note }),
          },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }

  async resume(tenant: string): Promise<Pause | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: 'REMOVE pausedAt, pauseNote, pausedBy',
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      return pauseIn(Attributes);
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }

  async paused(tenants: readonly string[]): Promise<ReadonlyMap<string, Pause>> {
    const items = await batchGet(this.client, this.tableName, [...new Set(tenants)].map(openEventsCounterId));
    const pauses = new Map<string, Pause>();
    for (const tenant of tenants) {
      const pause = pauseIn(items.get(openEventsCounterId(tenant)));
      if (pause !== undefined) pauses.set(tenant, pause);
    }
    return pauses;
  }
}

function pauseIn(item: Readonly<Record<string, unknown>> | undefined): Pause | undefined {
  if (typeof item?.pausedAt !== 'number') return undefined;
  return {
    pausedAt: item.pausedAt,
    note: typeof item.pauseNote === 'string' ? item.pauseNote : undefined,
    pausedBy: String(item.pausedBy ?? ''),
  };
}
