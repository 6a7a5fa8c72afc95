import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import DataLoader from 'dataloader';
import pLimit from 'p-limit';
import type { BatchWriteMode } from '../config.js';
import { DYNAMODB_BATCH_STATEMENTS } from '../domain/limits.js';
import { TransientError } from '../domain/reasons.js';
import type { NoticeClaim, NoticeClaims } from '../app/ports/emitter-records.js';
import { type ConditionalWriter, conditionalWriter, type WriteOutcome } from './dynamodb-conditional-writes.js';
import { isConditionFailure, TABLE, transient } from './dynamodb-table.js';

type ClaimOutcome = 'claimed' | 'ended' | 'busy';

interface ClaimRequest {
  readonly noticeId: string;
  readonly claim: NoticeClaim;
  readonly expiresAt: number;
}

interface SentMark {
  readonly noticeId: string;
  readonly sentAt: number;
}

/**
 * Notices one write takes at most. DynamoDB Local commits one transaction at a time: a flood's
 * large ones would hold the emitter's end writes, and with them its publish window, back.
 */
const NOTICES_PER_WRITE = DYNAMODB_BATCH_STATEMENTS;

/**
 * Gathers the calls made in one turn of the event loop into batches of NOTICES_PER_WRITE, as the
 * SNS publisher gathers publishes, and writes one batch at a time: a flood's notices wait their
 * turn behind each other, not in front of the emitter's other writes.
 */
function batchedByTurn<K, V>(write: (keys: readonly K[]) => Promise<(V | Error)[]>): DataLoader<K, V> {
  const oneAtATime = pLimit(1);
  return new DataLoader((keys) => oneAtATime(() => write(keys)), {
    cache: false,
    maxBatchSize: NOTICES_PER_WRITE,
    batchScheduleFn: (dispatch) => setImmediate(dispatch),
  });
}

/**
 * Claims on failure notices, one item each in the table, keyed by the notice's id: a claim holds
 * off other deliveries until its lease ends, and a notice marked sent is never published again.
 *
 * A flood of refused requests is a notice each, so the claims and sent marks made in one turn of
 * the event loop go out together, as conditional writes of many items (config.ts's BatchWriteMode):
 * a first claim is an insert, refused when the notice's item exists; only then, for a notice
 * delivered again, is it claimed on its own, against the claim or the mark it holds.
 */
export class DynamoDbNoticeClaims implements NoticeClaims {
  private readonly writer: ConditionalWriter;
  private readonly claims = batchedByTurn<ClaimRequest, ClaimOutcome>((requests) => this.claimTogether(requests));
  private readonly marks = batchedByTurn<SentMark, void>((marks) => this.markTogether(marks));

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    batchWrites: BatchWriteMode = 'statements',
  ) {
    this.writer = conditionalWriter(batchWrites, client, tableName);
  }

  claim(noticeId: string, claim: NoticeClaim, expiresAt: number): Promise<ClaimOutcome> {
    return this.claims.load({ noticeId, claim, expiresAt });
  }

  markSent(noticeId: string, sentAt: number): Promise<void> {
    return this.marks.load({ noticeId, sentAt });
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

  private async claimTogether(requests: readonly ClaimRequest[]): Promise<(ClaimOutcome | Error)[]> {
    // A notice named twice in one turn (a duplicate delivery) is inserted once; the other claims it on its own.
    const named = new Set<string>();
    const inserted = requests.flatMap(({ noticeId }, index) => {
      if (named.has(noticeId)) return [];
      named.add(noticeId);
      return [index];
    });
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.writer.write(
        inserted.map((index) => {
          const { noticeId, claim, expiresAt } = requests[index] as ClaimRequest;
          return {
            kind: 'insert',
            item: {
              [TABLE.partitionKey]: noticeId,
              emitClaim: claim.owner,
              emitClaimUntil: claim.leaseUntil,
              [TABLE.ttlAttribute]: expiresAt,
            },
          };
        }),
      );
    } catch (error) {
      return requests.map(() => transient('conditional write', error));
    }
    const applied = new Set(inserted.filter((_, position) => outcomes[position] === 'applied'));
    // Refused (the item exists) or unknown (its answer lost: if it was applied, the claim is ours, as `emitClaim = :owner` finds).
    return Promise.all(
      requests.map((request, index) => (applied.has(index) ? 'claimed' : this.claimAlone(request).catch((error: Error) => error))),
    );
  }

  private async claimAlone({ noticeId, claim, expiresAt }: ClaimRequest): Promise<ClaimOutcome> {
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

  private async markTogether(marks: readonly SentMark[]): Promise<(undefined | Error)[]> {
    let outcomes: WriteOutcome[];
    try {
      // Each notice's item exists (its claim made it); refused means it was marked sent already, which is as good.
      outcomes = await this.writer.write(
        marks.map(({ noticeId, sentAt }) => ({
          kind: 'update',
          id: noticeId,
          set: { sentAt },
          condition: { op: 'missing', attribute: 'sentAt' },
        })),
      );
    } catch (error) {
      return marks.map(() => transient('conditional write', error));
    }
    return outcomes.map((outcome, index) =>
      outcome === 'unknown' ? new TransientError(`notice ${marks[index]?.noticeId} could not be marked sent`) : undefined,
    );
  }
}
