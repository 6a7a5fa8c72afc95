import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isEventState, isOpen, type EventRecord, type EventState } from '../domain/lifecycle.js';
import { TransientError, type ReasonCode } from '../domain/reasons.js';

/** Table layout, shared with the CDK app and the local runtime. */
export const TABLE = {
  partitionKey: 'id',
  dueIndex: 'byDueBucket',
  bucketShardKey: 'bucketShard',
  dueAtKey: 'dueAt',
  /** Operators list a tenant's events by state through this index (see tenantStateKey), by due time. */
  tenantStateIndex: 'byTenantState',
  tenantStateKey: 'tenantState',
  ttlAttribute: 'expiresAt',
} as const;

export const LOADER_CURSOR_ID = '#loader-cursor';

/** The item counting a tenant's open events. */
export function openEventsCounterId(tenant: string): string {
  return `#tenant#${tenant}`;
}

/** The item counting a tenant's new events in one second. */
export function ingestRateCounterId(tenant: string, epochSecond: number): string {
  return `#rate#${tenant}#${epochSecond}`;
}

/**
 * Key of the operators' index: `<tenant>#open` while scheduled or queued (so loading an event
 * does not rewrite the index), then `<tenant>#<end state>`.
 */
export function tenantStateKey(tenant: string, state: EventState): string {
  return `${tenant}#${isOpen(state) ? 'open' : state}`;
}

export function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** Any other DynamoDB error is retried by the caller's queue. */
export function transient(operation: string, error: unknown): TransientError {
  return new TransientError(`DynamoDB ${operation} failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

export async function getRecord(client: DynamoDBDocumentClient, tableName: string, id: string): Promise<EventRecord | undefined> {
  try {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: id }, ConsistentRead: true }));
    return Item && isEventState(Item.state) ? toRecord(Item) : undefined;
  } catch (error) {
    throw transient('GetItem', error);
  }
}

const optionalNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function toRecord(item: Record<string, unknown>): EventRecord {
  return {
    id: String(item.id),
    tenant: String(item.tenant),
    user: String(item.user),
    target: String(item.target),
    payload: String(item.payload),
    failureTopic: optionalString(item.failureTopic),
    dueAt: Number(item.dueAt),
    version: Number(item.version ?? 1),
    state: isEventState(item.state) ? item.state : 'scheduled',
    clientId: optionalString(item.clientId),
    inputMessageId: optionalString(item.inputMessageId),
    createdAt: Number(item.createdAt),
    queuedAt: optionalNumber(item.queuedAt),
    rescheduledAt: optionalNumber(item.rescheduledAt),
    emittedAt: optionalNumber(item.emittedAt),
    failedAt: optionalNumber(item.failedAt),
    cancelledAt: optionalNumber(item.cancelledAt),
    cancelledBy: optionalString(item.cancelledBy),
    reason: optionalString(item.reason) as ReasonCode | undefined,
    emitClaimUntil: optionalNumber(item.emitClaimUntil),
    expiresAt: Number(item.expiresAt),
  };
}
