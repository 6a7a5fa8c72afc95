import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Quotas } from '../domain/tenants.js';
import { ingestRateCounterId, isConditionFailure, openEventsCounterId, TABLE, transient } from './dynamodb-table.js';

/** How long a per-second ingest counter is kept. */
const RATE_COUNTER_TTL_SECONDS = 3600;

/**
 * A tenant's quota counters: its open events, and its new events in each second. Each is one
 * item changed by conditional writes, which DynamoDB applies one at a time, so concurrent
 * ingest functions never take more than the quota. They are written once per batch, not per
 * event (one item takes about 1,000 writes a second). A crash between a counter write and the
 * event's own can leave a count too high, never too low: a tenant may be refused early, never
 * admitted past its quota.
 */
export class DynamoDbQuotaCounters {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Takes `count` places in both quotas, or none; says which quota had no room. */
  async reserve(tenant: string, quotas: Quotas, now: number, count: number): Promise<keyof Quotas | undefined> {
    if (count > quotas.maxOpenEvents) return 'maxOpenEvents';
    if (count > quotas.maxIngestPerSecond) return 'maxIngestPerSecond';
    if (!(await this.add(openEventsCounterId(tenant), 'openEvents', count, quotas.maxOpenEvents))) return 'maxOpenEvents';
    const second = Math.floor(now / 1000);
    if (!(await this.add(ingestRateCounterId(tenant, second), 'count', count, quotas.maxIngestPerSecond, second + RATE_COUNTER_TTL_SECONDS))) {
      await this.releaseOpenEvents(tenant, count);
      return 'maxIngestPerSecond';
    }
    return undefined;
  }

  /** Gives back places taken by `reserve` at `now` for events that turned out to exist already. */
  async unreserve(tenant: string, now: number, count: number): Promise<void> {
    await Promise.all([this.releaseOpenEvents(tenant, count), this.add(ingestRateCounterId(tenant, Math.floor(now / 1000)), 'count', -count)]);
  }

  /** Frees the places of events that ended (emitted, failed or cancelled). */
  async releaseOpenEvents(tenant: string, count: number): Promise<void> {
    await this.add(openEventsCounterId(tenant), 'openEvents', -count);
  }

  /** Adds to a counter, only if it stays within `max` (a counter not yet written is zero). */
  private async add(id: string, attribute: string, count: number, max?: number, expiresAt?: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: `ADD #counter :count${expiresAt === undefined ? '' : ' SET #ttl = :ttl'}`,
          ConditionExpression: max === undefined ? undefined : 'attribute_not_exists(#counter) OR #counter <= :room',
          ExpressionAttributeNames: { '#counter': attribute, ...(expiresAt === undefined ? {} : { '#ttl': TABLE.ttlAttribute }) },
          ExpressionAttributeValues: {
            ':count': count,
            ...(max === undefined ? {} : { ':room': max - count }),
            ...(expiresAt === undefined ? {} : { ':ttl': expiresAt }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw transient('UpdateItem', error);
    }
  }
}
