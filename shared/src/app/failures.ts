import type { FailureNotice } from '../domain/failure.js';
import { EventRejectedError } from '../domain/reasons.js';
import type { Logger, SchedulerMetrics, TopicPublisher } from './ports.js';

/**
 * Reports a failure: always to the logs, and to the client's failure topic when there is one.
 * A failure topic that cannot take the notice is logged, not retried forever; a transient
 * error propagates so the record is retried.
 */
export async function reportFailure(
  deps: { readonly publisher: TopicPublisher; readonly logger: Logger; readonly metrics: SchedulerMetrics },
  notice: FailureNotice,
  failureTopic: string | undefined,
): Promise<void> {
  deps.logger.warn({ reason: notice.reason, eventId: notice.eventId, failureTopic, notice }, notice.message);
  deps.metrics.count('EventsFailed', 1, notice.reason);
  if (failureTopic === undefined) return;
  try {
    await deps.publisher.publish(failureTopic, JSON.stringify(notice), { 'scheduler-reason': notice.reason });
  } catch (error) {
    if (!(error instanceof EventRejectedError)) throw error;
    deps.logger.warn({ reason: error.reason, failureTopic, eventId: notice.eventId }, 'failure topic cannot take the notice');
  }
}
