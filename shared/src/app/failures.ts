import { noticeAttributes, type FailureNotice, type NoticeDestination } from '../domain/failure.js';
import { EventRejectedError } from '../domain/reasons.js';
import type { Logger, SchedulerMetrics } from './ports/process.js';
import type { TopicPublisher } from './ports/queues.js';

/** Hands a notice on towards its destination. */
export type NoticeSender = (destination: NoticeDestination, notice: FailureNotice) => Promise<void>;

/** Reports a failure: always to the logs, and to a topic when there is one to tell. */
export async function reportFailure(
  deps: { readonly logger: Logger; readonly metrics: SchedulerMetrics },
  send: NoticeSender,
  notice: FailureNotice,
  destination: NoticeDestination,
): Promise<void> {
  const { failureTopic, deadLetterTopic } = destination;
  deps.logger.warn({ reason: notice.reason, eventId: notice.eventId, failureTopic, deadLetterTopic, notice }, notice.message);
  deps.metrics.count('EventsFailed', 1, notice.reason);
  if (failureTopic !== undefined || deadLetterTopic !== undefined) await send(destination, notice);
}

/**
 * Publishes a notice to the failure topic, or to the dead-letter topic when there is none or,
 * unless `once`, it cannot take the notice (missing, denied). A topic that cannot take it is
 * logged rather than retried forever; a transient error propagates so the record is retried.
 * `once`: one publish at most, for the notice of a refused request, which anyone may send with
 * a failure topic that takes nothing (a refusal must cost a publisher's flood no more).
 */
export function publishNotice(
  deps: { readonly publisher: TopicPublisher; readonly logger: Logger },
  { once }: { readonly once: boolean } = { once: false },
): NoticeSender {
  const publishTo = async (topic: string, notice: FailureNotice): Promise<boolean> => {
    try {
      await deps.publisher.publish(topic, JSON.stringify(notice), noticeAttributes(notice));
      return true;
    } catch (error) {
      if (!(error instanceof EventRejectedError)) throw error;
      deps.logger.warn({ reason: error.reason, topic, eventId: notice.eventId }, 'failure topic cannot take the notice');
      return false;
    }
  };
  return async ({ failureTopic, deadLetterTopic }, notice) => {
    if (failureTopic !== undefined && ((await publishTo(failureTopic, notice)) || once)) return;
    if (deadLetterTopic !== undefined && deadLetterTopic !== failureTopic) await publishTo(deadLetterTopic, notice);
  };
}
