import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  bucketShardKeyFor,
  eventIdFor,
  expiresAtFor,
  newEventItems,
  PUBLIC_TENANT_ID,
  requestHashOf,
  type ScheduledEvent,
  type SchedulerConfig,
} from '@adhoc-scheduler/shared';
import { paddedPayload } from '../plan.js';

/** DynamoDB takes at most 25 items per BatchWriteItem. */
const BATCH_SIZE = 25;
const CONCURRENCY = 8;

export interface BacklogSeed {
  readonly runId: string;
  readonly user: string;
  readonly count: number;
  /** The open events are due evenly over [fromMs, fromMs + spanMs). */
  readonly fromMs: number;
  readonly spanMs: number;
  readonly target: string;
  readonly payloadBytes: number;
  readonly onProgress: (written: number) => void;
  readonly deadline: number;
}

/**
 * Writes open events straight into the table, exactly as the ingest function stores a far-path
 * event (same item shape, bucket-shard key and expiry), far faster than publishing them.
 */
export async function seedBacklog(
  dynamodb: DynamoDBDocumentClient,
  tableName: string,
  config: Pick<SchedulerConfig, 'bucketSeconds' | 'shardCount' | 'retentionSeconds'>,
  seed: BacklogSeed,
): Promise<{ readonly written: number; readonly seconds: number }> {
  const started = Date.now();
  let next = 0;
  let written = 0;
  const item = (seq: number): Record<string, unknown> => {
    const clientId = `${seed.runId}-backlog-${seq}`;
    const event: ScheduledEvent = {
      id: eventIdFor(PUBLIC_TENANT_ID, seed.user, clientId, ''),
      tenant: PUBLIC_TENANT_ID,
      user: seed.user,
      target: seed.target,
      payload: paddedPayload(seq, seed.payloadBytes),
      dueAt: seed.fromMs + Math.floor((seq * seed.spanMs) / seed.count),
      version: 1,
    };
    // Stored as ingest stores a far-path event (not counted against the public tenant's quota).
    const { record, payloadItem } = newEventItems({
      event,
      clientId,
      inputMessageId: clientId,
      requestHash: requestHashOf(event),
      placement: { state: 'scheduled', bucketShard: bucketShardKeyFor(event.id, event.dueAt, config) },
      queuedBy: undefined,
      createdBy: seed.runId,
      now: Date.now(),
      expiresAt: expiresAtFor(event.dueAt, config.retentionSeconds),
    });
    if (payloadItem !== undefined)
      throw new Error(`a backlog payload of ${seed.payloadBytes} bytes does not fit in the record; seed smaller ones`);
    return record;
  };
  const worker = async (): Promise<void> => {
    while (next < seed.count && Date.now() < seed.deadline) {
      const from = next;
      next = Math.min(seed.count, next + BATCH_SIZE);
      let requests = Array.from({ length: next - from }, (_, i) => ({ PutRequest: { Item: item(from + i) } }));
      for (let attempt = 0; requests.length > 0; attempt += 1) {
        if (attempt > 0) await sleep(Math.min(2_000, 50 * 2 ** attempt));
        if (Date.now() >= seed.deadline) throw new Error('the run ran out of time while writing the backlog');
        const { UnprocessedItems } = await dynamodb.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
        const left = UnprocessedItems?.[tableName] ?? [];
        written += requests.length - left.length;
        requests = left.map((request) => ({ PutRequest: { Item: request.PutRequest?.Item ?? {} } }));
      }
      seed.onProgress(written);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { written, seconds: (Date.now() - started) / 1000 };
}
