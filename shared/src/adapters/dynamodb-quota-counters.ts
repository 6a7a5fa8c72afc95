import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { Quotas } from '../domain/tenants.js';
import { isConditionFailure, openEventsCounterId, TABLE, transient } from './dynamodb-table.js';

const OPEN_EVENTS = 'openEvents';
/** New events admitted in one second are counted in an attribute named after it: `r<epoch second>`. */
const SECOND_ATTRIBUTE = /^r(\d+)$/;
const secondAttribute = (now: number): string => `r${Math.floor(now / 1000)}`;
const secondOf = (attribute: string): number => Number(SECOND_ATTRIBUTE.exec(attribute)?.[1] ?? Number.NaN);
/**
 * A second's count is dropped only this long after it: a batch taken at the start of a second
 * may still be admitted in it by a slower ingest function, and must find its count there.
 */
const SECONDS_KEPT = 10;

/**
 * A tenant's quota counters, both in one item (`#tenant#<id>`): its open events, and its new
 * events in the current second. Taking places is one conditional write per batch, which
 * DynamoDB applies one at a time, so concurrent ingest functions never take more than a quota,
 * and both quotas are taken together or not at all. Each write also drops the per-second
 * counts of seconds long gone by that this process has seen, so the item stays small.
 *
 * Counts err high, never low: a place is freed only when the write that ended its event is
 * known to have applied, so an answer lost on the way can leave a count too high (the tenant is
 * refused a little early) until `scripts/admin quota reconcile` recounts it.
 */
export class DynamoDbQuotaCounters {
  /** Per-second attributes seen on each tenant's item, to remove once their second is over. */
  private readonly seenSeconds = new Map<string, Set<string>>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Takes `count` places in both quotas, or none; says which quota had no room. */
  async reserve(tenant: string, quotas: Quotas, now: number, count: number): Promise<keyof Quotas | undefined> {
    if (count > quotas.maxOpenEvents) return 'maxOpenEvents';
    if (count > quotas.maxIngestPerSecond) return 'maxIngestPerSecond';
    const current = secondAttribute(now);
    const stale = [...(this.seenSeconds.get(tenant) ?? [])].filter((name) => secondOf(name) < secondOf(current) - SECONDS_KEPT);
    const names: Record<string, string> = { '#open': OPEN_EVENTS, '#second': current };
    stale.forEach((name, index) => (names[`#stale${index}`] = name));
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: `ADD #open :count, #second :count${stale.length > 0 ? ` REMOVE ${stale.map((_, index) => `#stale${index}`).join(', ')}` : ''}`,
          ConditionExpression: '(attribute_not_exists(#open) OR #open <= :openRoom) AND (attribute_not_exists(#second) OR #second <= :secondRoom)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':count': count, ':openRoom': quotas.maxOpenEvents - count, ':secondRoom': quotas.maxIngestPerSecond - count },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.remember(tenant, Attributes, stale);
      return undefined;
    } catch (error) {
      if (!isConditionFailure(error)) throw transient('UpdateItem', error);
      // The item as it was, in DynamoDB's own notation: the document client leaves errors as they come.
      const old = (error as ConditionalCheckFailedException).Item;
      this.remember(tenant, old, []);
      return Number(old?.[OPEN_EVENTS]?.N ?? 0) + count > quotas.maxOpenEvents ? 'maxOpenEvents' : 'maxIngestPerSecond';
    }
  }

  /** Gives back places taken by `reserve` at `now` for events that turned out to exist already. */
  async unreserve(tenant: string, now: number, count: number): Promise<void> {
    await this.add(tenant, { [OPEN_EVENTS]: -count, [secondAttribute(now)]: -count });
  }

  /** Frees the places of events that ended (emitted, failed or cancelled). */
  async releaseOpenEvents(tenant: string, count: number): Promise<void> {
    await this.add(tenant, { [OPEN_EVENTS]: -count });
  }

  /** Corrects the open-events count by `delta` (a recount's finding). */
  async correctOpenEvents(tenant: string, delta: number): Promise<void> {
    await this.add(tenant, { [OPEN_EVENTS]: delta });
  }

  /** The open-events count as the counter holds it (0 before the tenant's first event). */
  async openEvents(tenant: string): Promise<number> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) }, ConsistentRead: true }),
      );
      return Number(Item?.[OPEN_EVENTS] ?? 0);
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  private remember(tenant: string, item: Readonly<Record<string, unknown>> | undefined, removed: readonly string[]): void {
    const seen = this.seenSeconds.get(tenant) ?? new Set<string>();
    for (const name of removed) seen.delete(name);
    for (const name of Object.keys(item ?? {})) if (SECOND_ATTRIBUTE.test(name)) seen.add(name);
    this.seenSeconds.set(tenant, seen);
  }

  private async add(tenant: string, deltas: Readonly<Record<string, number>>): Promise<void> {
    const entries = Object.entries(deltas);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
          UpdateExpression: `ADD ${entries.map((_, index) => `#c${index} :c${index}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#c${index}`, name])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, delta], index) => [`:c${index}`, delta])),
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }
}
