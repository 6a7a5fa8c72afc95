import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { NoticeClaim, NoticeClaims } from '../app/ports/emitter-records.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

/**
 * Claims on failure notices, one item each in the table, keyed by the notice's id: a claim holds
 * off other deliveries until its lease ends, and a notice marked sent is never published again.
 */
export class DynamoDbNoticeClaims implements NoticeClaims {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(noticeId: string, claim: NoticeClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'SET emitClaim = :owner, emitClaimUntil = :until, #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression:
            'attribute_not_exists(sentAt) AND (attribute_not_exists(emitClaimUntil) OR emitClaimUntil < :now OR emitClaim = :owner)',
          ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':owner': claim.owner, ':until': claim.leaseUntil, ':now': claim.now, ':ttl': expiresAt },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'claimed';
    } catch (error) {
      if (isConditionFailure(error)) return (error as ConditionalCheckFailedException).Item?.sentAt ? 'ended' : 'busy';
      throw transient('UpdateItem', error);
    }
  }

  async release(noticeId: string, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
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

  async markSent(noticeId: string, sentAt: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [TABLE.partitionKey]: noticeId },
          UpdateExpression: 'SET sentAt = :at',
          ExpressionAttributeValues: { ':at': sentAt },
        }),
      );
    } catch (error) {
      throw transient('UpdateItem', error);
    }
  }
}
