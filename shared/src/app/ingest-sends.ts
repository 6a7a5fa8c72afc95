import type { SQSRecord } from 'aws-lambda';
import { delaySecondsFor } from '../domain/delay.js';
import type { ScheduledEvent } from '../domain/event.js';
import { TransientError } from '../domain/reasons.js';
import type { IngestDeps } from './ingest.js';
import { withQuickRetries } from './quick-retry.js';

/** An event to send to the delay queue once the batch's store writes are done. */
export interface Send {
  readonly record: SQSRecord;
  readonly event: ScheduledEvent;
  readonly queuedBy: string | undefined;
}

/**
 * Sends the batch's near-path events to the delay queue, those refused again at once, twice more
 * (see withQuickRetries), each with its delay from when it is sent: their records would otherwise
 * wait out the visibility timeout, late for events due within it. A send whose answer was lost
 * sends a second copy with the same token, which the emitter drops as already emitted. Returns
 * why each event still unsent could not be sent, by id.
 */
export async function sendToDelayQueue(
  deps: Pick<IngestDeps, 'clock' | 'delayQueue' | 'config' | 'logger'>,
  sends: readonly Send[],
): Promise<ReadonlyMap<string, string>> {
  let unsent = sends;
  let reasons = new Map<string, string>();
  const sendUnsent = async (): Promise<void> => {
    const sendTime = deps.clock.now();
    const failures = await deps.delayQueue.send(
      unsent.map(({ event, queuedBy }) => ({
        event,
        queuedBy,
        delaySeconds: delaySecondsFor(event.dueAt, sendTime, deps.config.emitterLeadMs),
      })),
    );
    reasons = new Map(failures.map((failure) => [failure.eventId, failure.reason]));
    unsent = unsent.filter(({ event }) => reasons.has(event.id));
    if (unsent.length > 0) throw new TransientError(`${unsent.length} events could not be sent to the delay queue`);
  };
  await withQuickRetries(deps.clock, sendUnsent, (error) =>
    deps.logger.warn({ err: error }, 'near-path events not sent; sending them again'),
  ).catch((error: unknown) => {
    // The last try's refusals fail their records, below.
    if (!(error instanceof TransientError)) throw error;
  });
  return reasons;
}
