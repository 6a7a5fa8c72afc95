import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand, GetCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ScheduledEvent } from '../domain/event.js';
import { TransientError } from '../domain/reasons.js';
import type { DueEventRef, EmissionClaim, EventStore } from '../app/ports.js';

/** Table layout, shared with the CDK app and the local runtime. */
export const TABLE = {
  partitionKey: 'id',
  dueIndex: 'byDueBucket',
  bucketShardKey: 'bucketShard',
  dueAtKey: 'dueAt',
  ttlAttribute: 'expiresAt',
} as const;

export const LOADER_CURSOR_ID = '#loader-cursor';

function isConditionFailure(error: unknown): boolean {
  return error instanceof ConditionalCheckFailedException || (error as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** Any other DynamoDB error is retried by the caller's queue. */
function transient(operation: string, error: unknown): TransientError {
  return new TransientError(`DynamoDB ${operation} failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

export class DynamoDbEventStore implements EventStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async storePending(event: ScheduledEvent, bucketShard: string, expiresAt: number): Promise<'stored' | 'duplicate'> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...event, [TABLE.bucketShardKey]: bucketShard, [TABLE.ttlAttribute]: expiresAt },
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey },
        }),
      );
      return 'stored';
    } catch (error) {
      if (isConditionFailure(error)) return 'duplicate';
      throw transient('PutItem', error);
    }
  }

  async *queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]> {
    if (untilMs <= fromMs) return;
    const pages = paginateQuery(
      { client: this.client, pageSize: 1000 },
      {
        TableName: this.tableName,
        IndexName: TABLE.dueIndex,
        KeyConditionExpression: '#bucket = :bucket AND #due BETWEEN :from AND :last',
        ExpressionAttributeNames: { '#bucket': TABLE.bucketShardKey, '#due': TABLE.dueAtKey },
        ExpressionAttributeValues: { ':bucket': bucketShard, ':from': fromMs, ':last': untilMs - 1 },
      },
    );
    try {
      for await (const page of pages) {
        yield (page.Items ?? []).map((item) => ({ id: String(item[TABLE.partitionKey]), dueAt: Number(item[TABLE.dueAtKey]) }));
      }
    } catch (error) {
      throw transient('Query', error);
    }
  }

  async takeForLoading(id: string, owner: string, now: number): Promise<ScheduledEvent | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET loadedBy = :owner, loadedAt = :now',
          ConditionExpression: 'attribute_exists(#id) AND (attribute_not_exists(loadedBy) OR loadedBy = :owner)',
          ExpressionAttributeNames: { '#id': TABLE.partitionKey },
          ExpressionAttributeValues: { ':owner': owner, ':now': now },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? toEvent(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw transient('UpdateItem', error);
    }
  }

  async claimEmission(id: string, claim: EmissionClaim): Promise<'claimed' | 'emitted' | 'busy'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET emitClaim = :owner, emitClaimUntil = :until, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression:
            'attribute_not_exists(emittedAt) AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now OR emitClaim = :owner)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':owner': claim.owner, ':until': claim.leaseUntil, ':now': claim.now, ':ttl': claim.expiresAt },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'claimed';
    } catch (error) {
      if (isConditionFailure(error)) return (error as ConditionalCheckFailedException).Item?.emittedAt ? 'emitted' : 'busy';
      throw transient('UpdateItem', error);
    }
  }

  async releaseEmission(id: string, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'REMOVE emitClaim, emitClaimUntil',
          ConditionExpression: 'emitClaim = :owner',
          ExpressionAttributeValues: { ':owner': owner },
        }),
      );
    } catch (error) {
      // Someone else's claim now, or gone: nothing of ours to release.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }

  async markEmitted(id: string, emittedAt: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: id },
          UpdateExpression: 'SET emittedAt = :at',
          ExpressionAttributeValues: { ':at': emittedAt },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }

  async readLoaderCursor(): Promise<number | undefined> {
    try {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID }, ConsistentRead: true }),
      );
      return typeof Item?.cursorMs === 'number' ? Item.cursorMs : undefined;
    } catch (error) {
      throw transient('GetItem', error);
    }
  }

  async advanceLoaderCursor(toMs: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression: 'SET cursorMs = :to',
          ConditionExpression: 'attribute_not_exists(cursorMs) OR cursorMs < :to',
          ExpressionAttributeValues: { ':to': toMs },
        }),
      );
    } catch (error) {
      // A concurrent tick already moved it further: nothing to do.
      if (isConditionFailure(error)) return;
      throw transient('UpdateItem', error);
    }
  }
}

function toEvent(item: Record<string, unknown>): ScheduledEvent {
  return {
    id: String(item.id),
    user: String(item.user),
    target: String(item.target),
    payload: String(item.payload),
    failureTopic: typeof item.failureTopic === 'string' ? item.failureTopic : undefined,
    dueAt: Number(item.dueAt),
  };
}
