import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { EmissionEnding } from '../domain/emission.js';
import type { FailureNotice, NoticeDestination } from '../domain/failure.js';
import { encodeDelayQueueMessage, encodeLoadingChunk, encodeNoticePack, type LoadingChunk } from '../domain/messages.js';
import { SQS_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES } from '../domain/limits.js';
import { TransientError } from '../domain/reasons.js';
import type { DelayedSend, DelayedSendFailure, DelayQueue, LoadingQueue, NoticeSend, NoticeSendFailure } from '../app/ports/queues.js';

/** Batches in flight at once from one call: SQS takes them in parallel. */
const BATCH_CONCURRENCY = 8;

interface FailedEntry {
  readonly entryId: string;
  readonly reason: string;
}

/**
 * Items in order, grouped at most `count` to a group and at most `bytes` of `sizeOf` in a group;
 * an item larger than that goes alone.
 */
function boundedGroups<T>(items: readonly T[], count: number, bytes: number, sizeOf: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let used = 0;
  for (const item of items) {
    const size = sizeOf(item);
    const last = groups.at(-1);
    if (last === undefined || last.length === count || used + size > bytes) {
      groups.push([item]);
      used = size;
    } else {
      last.push(item);
      used += size;
    }
  }
  return groups;
}

/**
 * Entries grouped into SendMessageBatch requests: at most 10 each, and at most SQS's 1 MiB of
 * bodies in all. SQS refuses a larger request whole, every time it is tried again: a few events
 * near SNS's size limit (two, of text escaped to thrice its size) would fail every other event
 * of their batch with them.
 */
function batchesOf(entries: readonly SendMessageBatchRequestEntry[]): SendMessageBatchRequestEntry[][] {
  return boundedGroups(entries, SQS_BATCH_ENTRIES, SQS_MAX_MESSAGE_BYTES, (entry) => Buffer.byteLength(entry.MessageBody ?? ''));
}

/**
 * Sends entries in batches (see batchesOf), several batches at a time. Returns the entries SQS
 * did not take, with its reason (a failed request fails all its entries); never throws for them.
 */
async function sendBatches(client: SQSClient, queueUrl: string, entries: readonly SendMessageBatchRequestEntry[]): Promise<FailedEntry[]> {
  const batches = batchesOf(entries);
  const failed: FailedEntry[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) {
      const batch = batches[next++] as SendMessageBatchRequestEntry[];
      try {
        const result = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch }));
        for (const entry of result.Failed ?? []) failed.push({ entryId: entry.Id ?? '', reason: `${entry.Code}: ${entry.Message}` });
      } catch (error) {
        const reason = `${(error as Error)?.name}: ${(error as Error)?.message}`;
        for (const entry of batch) failed.push({ entryId: entry.Id ?? '', reason });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, batches.length) }, worker));
  return failed;
}

/**
 * Notices one message carries at most. A pack is retried whole when one of its notices fails,
 * so a notice that keeps failing costs its pack's others a read each per retry; ten cut a
 * flood's messages tenfold.
 */
const NOTICES_PER_PACK = 10;

interface NoticePack {
  readonly tenant: string;
  readonly noticeIds: readonly string[];
  /** The pack's body: its one notice's own, or encodeNoticePack's of its several. */
  readonly body: string;
}

/** One tenant's notices, in order, packed by ten into bodies of at most SQS's 1 MiB (a larger notice goes alone). */
function noticePacks(items: readonly NoticeSend[]): NoticePack[] {
  const byTenant = new Map<string, NoticeSend[]>();
  for (const item of items) {
    const notices = byTenant.get(item.tenant);
    if (notices === undefined) byTenant.set(item.tenant, [item]);
    else notices.push(item);
  }
  // ASCII bodies: a body's length is its size; in a pack each adds a comma, the pack its brackets.
  const room = SQS_MAX_MESSAGE_BYTES - encodeNoticePack([]).length + 1;
  return [...byTenant].flatMap(([tenant, notices]) => {
    const bodies = notices.map(({ noticeId, destination, notice }) => ({
      noticeId,
      body: encodeDelayQueueMessage({ kind: 'notice', noticeId, tenant, ...destination, notice }),
    }));
    return boundedGroups(bodies, NOTICES_PER_PACK, room, ({ body }) => body.length + 1).map((pack) => ({
      tenant,
      noticeIds: pack.map(({ noticeId }) => noticeId),
      body: pack.length === 1 ? (pack[0]?.body as string) : encodeNoticePack(pack.map(({ body }) => body)),
    }));
  });
}

/** Batch entry ids must be unique in a batch and at most 80 characters of [A-Za-z0-9_-]. */
function entryId(index: number): string {
  return `e${index}`;
}

export class SqsDelayQueue implements DelayQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(items: readonly DelayedSend[]): Promise<readonly DelayedSendFailure[]> {
    const entries = items.map((item, index) => ({
      Id: entryId(index),
      MessageBody: encodeDelayQueueMessage({ kind: 'event', event: item.event, queuedBy: item.queuedBy }),
      DelaySeconds: item.delaySeconds,
      // A fair queue on AWS: one tenant's backlog does not hold back the others' messages.
      MessageGroupId: item.event.tenant,
    }));
    const failed = await sendBatches(this.client, this.queueUrl, entries);
    return failed.map(({ entryId: id, reason }) => ({ eventId: items[Number(id.slice(1))]?.event.id ?? id, reason }));
  }

  async sendNotice(noticeId: string, tenant: string, destination: NoticeDestination, notice: FailureNotice): Promise<void> {
    const [refused] = await this.sendNotices([{ noticeId, tenant, destination, notice }]);
    if (refused !== undefined) throw new TransientError(`SQS refused a failure notice: ${refused.reason}`);
  }

  /** Sends each tenant's notices packed, several to a message (see noticePacks); a pack SQS does not take fails all its notices. */
  async sendNotices(items: readonly NoticeSend[]): Promise<readonly NoticeSendFailure[]> {
    const packs = noticePacks(items);
    const entries = packs.map(({ tenant, body }, index) => ({ Id: entryId(index), MessageBody: body, MessageGroupId: tenant }));
    const failed = await sendBatches(this.client, this.queueUrl, entries);
    return failed.flatMap(({ entryId: id, reason }) =>
      (packs[Number(id.slice(1))]?.noticeIds ?? [id]).map((noticeId) => ({ noticeId, reason })),
    );
  }

  async sendEnds(ends: readonly EmissionEnding[]): Promise<void> {
    // Ends are small (about 200 bytes): one message carries a whole batch's.
    const body = encodeDelayQueueMessage({ kind: 'ends', ends });
    try {
      await this.client.send(
        new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: body, MessageGroupId: ends[0]?.event.tenant ?? '' }),
      );
    } catch (error) {
      throw new TransientError(`SQS refused emission ends: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }

  async retryLater(receiptHandle: string, delaySeconds: number): Promise<void> {
    try {
      await this.client.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: delaySeconds }),
      );
    } catch (error) {
      throw new TransientError(`SQS refused to delay a retry: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }
}

export class SqsLoadingQueue implements LoadingQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(chunks: readonly LoadingChunk[]): Promise<void> {
    const entries = chunks.map((chunk, index) => ({ Id: entryId(index), MessageBody: encodeLoadingChunk(chunk) }));
    const failed = await sendBatches(this.client, this.queueUrl, entries);
    if (failed.length > 0) {
      throw new TransientError(`${failed.length} of ${chunks.length} loading chunks could not be sent (${failed[0]?.reason})`);
    }
  }
}
