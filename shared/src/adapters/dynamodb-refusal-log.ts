import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RefusalLog } from '../app/ports/errors-and-refusals.js';
import type { ReasonCode } from '../domain/reasons.js';
import { refusalCounterId, refusalSlotId } from '../domain/table-keys.js';
import { REFUSALS_KEPT, type RecentRefusals, type Refusal, type TenantRefusals } from '../domain/refusals.js';
import { batchDelete, batchGet, batchPut } from './dynamodb-batches.js';
import { TABLE, transient } from './dynamodb-table.js';

const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Each tenant's latest refusals in a ring of REFUSALS_KEPT.perTenant items of the events' table,
 * and a counter item whose sequence says which slots a batch writes: one UpdateItem per tenant
 * and batch reserves as many slots as it keeps, so concurrent batches never write the same one.
 * The table holds at most that many items per tenant that ever refused, each with a TTL.
 */
export class DynamoDbRefusalLog implements RefusalLog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly perTenant: number = REFUSALS_KEPT.perTenant,
  ) {}

  async keep(batch: readonly TenantRefusals[], expiresAt: number): Promise<void> {
    const items = await Promise.all(batch.map((refusals) => this.slotted(refusals, expiresAt)));
    await batchPut(this.client, this.tableName, items.flat());
  }

  /** Reserves the tenant's next slots (and counts what it does not keep); its refusals' items in them. */
  private async slotted({ tenant, kept, notKept }: TenantRefusals, expiresAt: number): Promise<Record<string, unknown>[]> {
    let sequence: number;
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: refusalCounterId(tenant) },
          UpdateExpression: 'ADD #kept :kept, #notKept :notKept SET #ttl = :ttl',
          ExpressionAttributeNames: { '#kept': 'kept', '#notKept': 'notKept', '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':kept': kept.length, ':notKept': notKept, ':ttl': expiresAt },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      sequence = Number(Attributes?.kept);
    } catch (error) {
      throw transient('UpdateItem', error);
    }
    const first = sequence - kept.length;
    return kept.map((refusal, index) => ({
      [TABLE.partitionKey]: refusalSlotId(tenant, (first + index) % this.perTenant),
      sequence: first + index,
      ...refusal,
      [TABLE.ttlAttribute]: expiresAt,
    }));
  }

  async recent(tenant: string): Promise<RecentRefusals> {
    const counterId = refusalCounterId(tenant);
    const slotIds = Array.from({ length: this.perTenant }, (_, slot) => refusalSlotId(tenant, slot));
    const items = await batchGet(this.client, this.tableName, [counterId, ...slotIds]);
    const refusals = slotIds
      .flatMap((id) => {
        const item = items.get(id);
        return item === undefined || item.tenant !== tenant ? [] : [{ sequence: Number(item.sequence), refusal: toRefusal(tenant, item) }];
      })
      .sort((a, b) => b.sequence - a.sequence)
      .map(({ refusal }) => refusal);
    const counter = items.get(counterId);
    const notKept = Number(counter?.notKept ?? 0);
    return { refusals, refused: Number(counter?.kept ?? 0) + notKept, notKept };
  }

  /** Deletes the tenant's refusals and their counter: a tenant removed leaves none to whoever is given its id. */
  async forget(tenant: string): Promise<void> {
    const slotIds = Array.from({ length: this.perTenant }, (_, slot) => refusalSlotId(tenant, slot));
    await batchDelete(this.client, this.tableName, [refusalCounterId(tenant), ...slotIds]);
  }
}

function toRefusal(tenant: string, item: Readonly<Record<string, unknown>>): Refusal {
  return {
    tenant,
    at: Number(item.at),
    reason: String(item.reason) as ReasonCode,
    message: String(item.message),
    inputMessageId: String(item.inputMessageId),
    action: String(item.action),
    eventId: optionalString(item.eventId),
    clientId: optionalString(item.clientId),
    user: optionalString(item.user),
  };
}
