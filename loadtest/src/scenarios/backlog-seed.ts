import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  eventIdFor,
  expiresAtFor,
  labelEntries,
  newEventItems,
  PUBLIC_TENANT_ID,
  requestHashOf,
  shardOf,
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
  /** Whose events they are, in turn (the public tenant's by default). */
  readonly tenants?: readonly string[];
  /** The labels of the event of each sequence number (none by default). */
  readonly labelsOf?: (seq: number) => readonly string[];
}

/**
 * Writes open events straight into the table, exactly as the ingest function stores a far-path
 * event (same item shape, tenant-index key, label entries and expiry), far faster than
 * publishing them. `written` counts events (their label entries with them).
 */
export async function seedBacklog(
  dynamodb: DynamoDBDocumentClient,
  tableName: string,
  config: Pick<SchedulerConfig, 'shardCount' | 'retentionSeconds'>,
  seed: BacklogSeed,
): Promise<{ readonly written: number; readonly seconds: number }> {
  const started = Date.now();
  const tenants = seed.tenants ?? [PUBLIC_TENANT_ID];
  let next = 0;
  let written = 0;
  const items = (seq: number): Record<string, unknown>[] => {
    const clientId = `${seed.runId}-backlog-${seq}`;
    const tenant = tenants[seq % tenants.length] ?? PUBLIC_TENANT_ID;
    const labels = seed.labelsOf?.(seq) ?? [];
    const event: ScheduledEvent = {
      id: eventIdFor(tenant, seed.user, clientId, ''),
      tenant,
      user: seed.user,
      target: seed.target,
      payload: paddedPayload(seq, seed.payloadBytes),
      dueAt: seed.fromMs + Math.floor((seq * seed.spanMs) / seed.count),
      version: 1,
      ...(labels.length > 0 ? { labels } : {}),
    };
    const shard = shardOf(event.id, config);
    const expiresAt = expiresAtFor(event.dueAt, config.retentionSeconds);
    // Stored as ingest stores a far-path event (not counted against the tenant's quota).
    const { record, payloadItem } = newEventItems(
      {
        event,
        clientId,
        inputMessageId: clientId,
        requestHash: requestHashOf(event),
        placement: { state: 'scheduled', shard },
        queuedBy: undefined,
        createdBy: seed.runId,
        now: Date.now(),
        expiresAt,
      },
      // Stored, not placed in the delay queue: the setting does not change what is written.
      { indexQueuedEvents: false },
    );
    if (payloadItem !== undefined)
      throw new Error(`a backlog payload of ${seed.payloadBytes} bytes does not fit in the record; seed smaller ones`);
    return [record, ...labelEntries({ ...event, expiresAt }, shard)];
  };
  const worker = async (): Promise<void> => {
    while (next < seed.count && Date.now() < seed.deadline) {
      const from = next;
      // Whole events per request: an event and its label entries fit in one (at most 11 items).
      const batch: Record<string, unknown>[] = [];
      while (next < seed.count) {
        const event = items(next);
        if (batch.length + event.length > BATCH_SIZE) break;
        batch.push(...event);
        next += 1;
      }
      const events = next - from;
      let requests = batch.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; requests.length > 0; attempt += 1) {
        if (attempt > 0) await sleep(Math.min(2_000, 50 * 2 ** attempt));
        if (Date.now() >= seed.deadline) throw new Error('the run ran out of time while writing the backlog');
        const { UnprocessedItems } = await dynamodb.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
        const left = UnprocessedItems?.[tableName] ?? [];
        requests = left.map((request) => ({ PutRequest: { Item: request.PutRequest?.Item ?? {} } }));
      }
      written += events;
      seed.onProgress(written);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { written, seconds: (Date.now() - started) / 1000 };
}
