import type { EmissionEnding } from '../../domain/emission.js';
import type { ScheduledEvent } from '../../domain/event.js';
import type { FailureNotice, NoticeDestination } from '../../domain/failure.js';
import type { ChangeJob, LoadingChunk } from '../../domain/messages.js';

/** The queues and topics the services send to: the delay queue, loading's, the changes function's, and SNS topics. */

export interface DelayedSend {
  readonly event: ScheduledEvent;
  readonly delaySeconds: number;
  /** The copy's token, as recorded on the event (see EventRecord.queuedBy). */
  readonly queuedBy: string | undefined;
}

export interface DelayedSendFailure {
  readonly eventId: string;
  readonly reason: string;
}

/** A failure notice handed to the emitter (see DelayQueue.sendNotice). */
export interface NoticeSend {
  readonly noticeId: string;
  readonly tenant: string;
  readonly destination: NoticeDestination;
  readonly notice: FailureNotice;
}

export interface NoticeSendFailure {
  readonly noticeId: string;
  readonly reason: string;
}

export interface DelayQueue {
  /** Sends in batches of 10; returns the events that could not be sent, and why. */
  send(items: readonly DelayedSend[]): Promise<readonly DelayedSendFailure[]>;
  /** Hands a failure notice to the emitter, which publishes it once (TransientError when SQS refuses). */
  sendNotice(noticeId: string, tenant: string, destination: NoticeDestination, notice: FailureNotice): Promise<void>;
  /** Hands failure notices over as sendNotice does, one tenant's packed several to a message; returns those that could not be sent, and why. */
  sendNotices(items: readonly NoticeSend[]): Promise<readonly NoticeSendFailure[]>;
  /** Hands ends the emitter could not record over to a later delivery, which records them (TransientError when SQS refuses). */
  sendEnds(ends: readonly EmissionEnding[]): Promise<void>;
  /** Makes a message received from the delay queue come back after `delaySeconds` (its retry), instead of the visibility timeout. */
  retryLater(receiptHandle: string, delaySeconds: number): Promise<void>;
}

export interface LoadingQueue {
  send(chunks: readonly LoadingChunk[]): Promise<void>;
}

/** The changes function's queue: jobs over many events, a page at a time (TransientError when SQS refuses). */
export interface ChangesQueue {
  /** Sends a bulk cancel's page from `from`. */
  sendPage(jobId: string, from: string): Promise<void>;
  /** Sends one page of a resume, visible after `delaySeconds`. */
  send(job: ChangeJob, delaySeconds: number): Promise<void>;
}

export interface TopicPublisher {
  /**
   * Publishes a message with string attributes. Throws EventRejectedError when the topic
   * cannot take it (missing, access denied) or no request can carry it, and TransientError when
   * a retry may succeed.
   */
  publish(topicArn: string, message: string, attributes?: Readonly<Record<string, string>>): Promise<void>;
}
