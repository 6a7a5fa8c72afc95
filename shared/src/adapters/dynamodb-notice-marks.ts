import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import DataLoader from 'dataloader';
import pLimit from 'p-limit';
import type { BatchWriteMode } from '../config.js';
import { DYNAMODB_BATCH_STATEMENTS } from '../domain/limits.js';
import { TransientError } from '../domain/reasons.js';
import type { NoticeMarks } from '../app/ports/emitter-records.js';
import { batchGet } from './dynamodb-batches.js';
import { type ConditionalWriter, conditionalWriter, type WriteOutcome } from './dynamodb-conditional-writes.js';
import { TABLE, transient } from './dynamodb-table.js';

interface SentMark {
  readonly noticeId: string;
  readonly sentAt: number;
  readonly expiresAt: number;
}

/**
 * Marks one write takes at most. DynamoDB Local commits one transaction at a time: a flood's
 * large ones would hold the emitter's end writes, and with them its publish window, back.
 */
const MARKS_PER_WRITE = DYNAMODB_BATCH_STATEMENTS;

/**
 * Failure notices' sent marks, one item each in the table, keyed by the notice's id. A pack's
 * marks are read in one BatchGetItem; the marks asked for in one turn of the event loop (a pack's
 * publishes answer together) go out together as conditional inserts of many items (config.ts's
 * BatchWriteMode), one write at a time, so that a flood's marks wait behind each other, not in
 * front of the emitter's other writes.
 */
export class DynamoDbNoticeMarks implements NoticeMarks {
  private readonly writer: ConditionalWriter;
  private readonly oneWriteAtATime = pLimit(1);
  private readonly marks = new DataLoader<SentMark, 'marked' | 'marked-before'>(
    (marks) => this.oneWriteAtATime(() => this.markTogether(marks)),
    { cache: false, maxBatchSize: MARKS_PER_WRITE, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
  );

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    batchWrites: BatchWriteMode = 'statements',
  ) {
    this.writer = conditionalWriter(batchWrites, client, tableName);
  }

  async sent(noticeIds: readonly string[]): Promise<ReadonlySet<string>> {
    const items = await batchGet(this.client, this.tableName, noticeIds);
    // An item without sentAt is a claim an emitter before marks alone left: not sent.
    return new Set(noticeIds.filter((id) => items.get(id)?.sentAt !== undefined));
  }

  markSent(noticeId: string, sentAt: number, expiresAt: number): Promise<'marked' | 'marked-before'> {
    return this.marks.load({ noticeId, sentAt, expiresAt });
  }

  private async markTogether(marks: readonly SentMark[]): Promise<('marked' | 'marked-before' | Error)[]> {
    // A notice named twice in one turn (two copies at once) is inserted once; the other finds it marked.
    const named = new Set<string>();
    const inserted = marks.flatMap(({ noticeId }, index) => {
      if (named.has(noticeId)) return [];
      named.add(noticeId);
      return [index];
    });
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.writer.write(
        inserted.map((index) => {
          const { noticeId, sentAt, expiresAt } = marks[index] as SentMark;
          return { kind: 'insert', item: { [TABLE.partitionKey]: noticeId, sentAt, [TABLE.ttlAttribute]: expiresAt } };
        }),
      );
    } catch (error) {
      return marks.map(() => transient('conditional write', error));
    }
    const outcomeOf = new Map(inserted.map((index, position) => [index, outcomes[position]]));
    return marks.map(({ noticeId }, index) => {
      const outcome = outcomeOf.get(index);
      if (outcome === undefined || outcome === 'refused') return 'marked-before';
      if (outcome === 'applied') return 'marked';
      return new TransientError(`notice ${noticeId} could not be marked sent`);
    });
  }
}
