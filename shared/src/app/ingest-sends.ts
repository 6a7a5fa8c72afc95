import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { delaySecondsFor } from '../domain/delay.js';
import type { ScheduledEvent } from '../domain/event.js';
import type { SchedulerConfig } from '../config.js';
import type { Clock } from './ports/process.js';
import { TransientError } from '../domain/reasons.js';
import { type BatchLog, type FailedRecord, failRecords } from './batch.js';
import type { DelayQueue, NoticeSend } from './ports/queues.js';

/** An event to send to the delay queue once the batch's store writes are done. */
export interface Send {
  readonly record: SQSRecord;
  readonly event: ScheduledEvent;
  readonly queuedBy: string | undefined;
}

/**
 * Sends the batch's near-path events to the delay queue, each with its delay from now. Returns why
 * each event that could not be sent was refused, by id: its record fails, and its redelivery
 * sends it again under a new token (not at once under the same one: a send whose answer was lost
 * left a copy, which a second copy with its token would join in the emitter, both published).
 */
export async function sendToDelayQueue(
  deps: {
    readonly clock: Pick<Clock, 'now'>;
    readonly delayQueue: Pick<DelayQueue, 'send'>;
    readonly config: Pick<SchedulerConfig, 'emitterLeadMs'>;
  },
  sends: readonly Send[],
): Promise<ReadonlyMap<string, string>> {
  const sendTime = deps.clock.now();
  const failures = await deps.delayQueue.send(
    sends.map(({ event, queuedBy }) => ({
      event,
      queuedBy,
      delaySeconds: delaySecondsFor(event.dueAt, sendTime, deps.config.emitterLeadMs),
    })),
  );
  return new Map(failures.map((failure) => [failure.eventId, failure.reason]));
}

/** A refusal's notice to hand to the emitter, with the record it refused. */
export interface PendingNotice extends NoticeSend {
  readonly record: SQSRecord;
}

/**
 * Hands the batch's failure notices to the emitter together (each tenant's packed several to a
 * message). The record of a notice SQS did not take fails, as processBatch fails one (logged,
 * its error kept, retried): its redelivery sends the notice again, under the same notice id,
 * which the emitter publishes once.
 */
export async function sendNotices(
  deps: BatchLog & { readonly delayQueue: Pick<DelayQueue, 'sendNotices'> },
  notices: readonly PendingNotice[],
  failedAlready: ReadonlySet<string>,
): Promise<SQSBatchResponse['batchItemFailures']> {
  // A record failed meanwhile is delivered again, and refused again: its notice goes then.
  const pending = notices.filter(({ record }) => !failedAlready.has(record.messageId));
  if (pending.length === 0) return [];
  const failures = await deps.delayQueue.sendNotices(pending.map(({ record: _, ...send }) => send));
  const reasons = new Map(failures.map(({ noticeId: id, reason }) => [id, reason]));
  const failed = pending.flatMap(({ record, noticeId: id }): FailedRecord[] => {
    const reason = reasons.get(id);
    return reason === undefined
      ? []
      : [{ record, reason: new TransientError(`the failure notice ${id} could not be sent to the delay queue (${reason})`) }];
  });
  return failRecords(failed, deps);
}
