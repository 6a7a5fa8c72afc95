import type { FailureNotice } from '../domain/failure.js';
import { EventRejectedError } from '../domain/reasons.js';
import type { Logger, SchedulerMetrics, TopicPublisher } from './ports.js';

/** Hands a notice on towards the client's failure topic. */
export type NoticeSender = (failureTopic: string, notice: FailureNotice) => Promise<void>;

/** Reports a failure: always to the logs, and to the client's failure topic when there is one. */
export async function reportFailure(
  deps: { readonly logger: Logger; readonly metrics: SchedulerMetrics },
  send: NoticeSender,
  notice: FailureNotice,
  failureTopic: string | undefined,
): Promise<void> {
  deps.logger.warn({ reason: notice.reason, eventId: notice.eventId, failureTopic, notice }, notice.message);
  deps.metrics.count('EventsFailed', 1, notice.reason);
  if (failureTopic !== undefined) await send(failureTopic, notice);
}

/**
 * Publishes a notice to the failure topic. A topic that cannot take it (missing, denied) is
 * logged rather than retried forever; a transient error propagates so the record is retried.
 */
export function publishNotice(deps: { readonly publisher: TopicPublisher; readonly logger: Logger }): NoticeSender {
  return async (failureTopic, notice) => {
    try {
      await deps.publisher.publish(failureTopic, JSON.stringify(notice), { 'scheduler-reason': notice.reason });
    } catch (error) {
      if (!(error instanceof EventRejectedError)) throw error;
      deps.logger.warn({ reason: error.reason, failureTopic, eventId: notice.eventId }, 'failure topic cannot take the notice');
    }
  };
}
