import type { SQSRecord } from 'aws-lambda';
import { delaySecondsFor } from '../domain/delay.js';
import type { ScheduledEvent } from '../domain/event.js';
import type { SchedulerConfig } from '../config.js';
import type { Clock } from './ports/process.js';
import type { DelayQueue } from './ports/queues.js';

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
