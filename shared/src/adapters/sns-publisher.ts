import { PublishBatchCommand, PublishCommand, type MessageAttributeValue, type SNSClient } from '@aws-sdk/client-sns';
import { SNS_MAX_MESSAGE_BYTES, SNS_PUBLISH_BATCH_ENTRIES } from '../domain/limits.js';
import { snsMessageBytes } from '../domain/event.js';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import type { TopicPublisher } from '../app/ports/queues.js';

/** SNS errors that no retry can fix: the topic is gone or does not let us publish. */
const PERMANENT = {
  NotFoundException: REASON.TARGET_NOT_FOUND,
  NotFound: REASON.TARGET_NOT_FOUND,
  AuthorizationErrorException: REASON.TARGET_ACCESS_DENIED,
  AuthorizationError: REASON.TARGET_ACCESS_DENIED,
  AccessDeniedException: REASON.TARGET_ACCESS_DENIED,
  KMSAccessDeniedException: REASON.TARGET_ACCESS_DENIED,
  KMSDisabledException: REASON.TARGET_ACCESS_DENIED,
  InvalidParameterException: REASON.PUBLISH_FAILED,
  InvalidParameterValueException: REASON.PUBLISH_FAILED,
} as const;

interface PendingPublish {
  readonly message: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

function classify(topicArn: string, code: string, detail: string, cause?: unknown): Error {
  const reason = PERMANENT[code as keyof typeof PERMANENT];
  if (reason)
    return new EventRejectedError(reason, `SNS refused the publish to ${topicArn}: ${detail}`, { topicArn, error: code }, { cause });
  return new TransientError(`SNS publish to ${topicArn} failed: ${code ? `${code}: ` : ''}${detail}`, { cause });
}

/** A failed publish as the domain knows it: one the SDK could not encode is the message's own fault, for good. */
function failureOf(topicArn: string, error: unknown): Error {
  if (error instanceof URIError) {
    // The SDK encodes each string of the request as a URI component: a lone UTF-16 surrogate cannot be, now or later.
    return new EventRejectedError(
      REASON.PAYLOAD_NOT_PUBLISHABLE,
      `the message to ${topicArn} cannot be encoded into an SNS request (its payload or an attribute is not well-formed Unicode): ${error.message}`,
      { topicArn, error: error.name },
      { cause: error },
    );
  }
  return classify(topicArn, (error as Error)?.name ?? '', (error as Error)?.message ?? String(error), error);
}

/**
 * Whether a request failed before it was sent, as when the SDK cannot encode one of its
 * entries: the SDK's retry step adds `$metadata` to the error of every request it sent, whether
 * SNS answered or the network failed.
 */
function failedBeforeSending(error: unknown): boolean {
  return typeof error !== 'object' || error === null || !('$metadata' in error);
}

function messageAttributes(attributes: Readonly<Record<string, string>>): Record<string, MessageAttributeValue> {
  return Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]));
}

/** Takes the first PublishBatch request's worth off the front of `pending`: at most 10 entries and 256 KiB. */
function takeBatch(pending: PendingPublish[]): PendingPublish[] {
  let count = 0;
  let bytes = 0;
  for (const publish of pending) {
    const size = snsMessageBytes(publish.message, publish.attributes);
    if (count === SNS_PUBLISH_BATCH_ENTRIES || (count > 0 && bytes + size > SNS_MAX_MESSAGE_BYTES)) break;
    count += 1;
    bytes += size;
  }
  return pending.splice(0, count);
}

/** SNS requests one publisher keeps in flight; publishes beyond wait, and go out in fuller batches. */
const REQUESTS_IN_FLIGHT = 128;

/**
 * Publishes to SNS. Publishes to the same topic that wait together (requested in the same turn
 * of the event loop, or while every request slot is taken) go out as PublishBatch requests of
 * up to 10: no publish waits for another when there is room, and a spike needs a tenth of the
 * calls. At most REQUESTS_IN_FLIGHT requests run at once, taken from the topics in turn, so a
 * spike is not thousands of connections at once. A batch that fails before it is sent (one
 * entry the SDK cannot encode fails the whole request) is published entry by entry, in its
 * slot: the others go out at once, and only the entry at fault fails.
 */
export class SnsTopicPublisher implements TopicPublisher {
  private readonly pendingByTopic = new Map<string, PendingPublish[]>();
  private inFlight = 0;
  private drainScheduled = false;

  constructor(private readonly client: SNSClient) {}

  publish(topicArn: string, message: string, attributes: Readonly<Record<string, string>> = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      const pending = this.pendingByTopic.get(topicArn) ?? [];
      pending.push({ message, attributes, resolve, reject });
      this.pendingByTopic.set(topicArn, pending);
      if (!this.drainScheduled) {
        this.drainScheduled = true;
        setImmediate(() => {
          this.drainScheduled = false;
          this.drain();
        });
      }
    });
  }

  /** Sends what waits while there is a free slot: a batch from each topic in turn. */
  private drain(): void {
    while (this.inFlight < REQUESTS_IN_FLIGHT && this.pendingByTopic.size > 0) {
      const [topicArn, pending] = this.pendingByTopic.entries().next().value as [string, PendingPublish[]];
      const batch = takeBatch(pending);
      // The topic goes to the back of the line with what is left.
      this.pendingByTopic.delete(topicArn);
      if (pending.length > 0) this.pendingByTopic.set(topicArn, pending);
      const [only] = batch;
      this.inFlight += 1;
      void (batch.length === 1 && only ? this.publishOne(topicArn, only) : this.publishBatch(topicArn, batch)).finally(() => {
        this.inFlight -= 1;
        this.drain();
      });
    }
  }

  private async publishOne(topicArn: string, publish: PendingPublish): Promise<void> {
    try {
      await this.client.send(
        new PublishCommand({ TopicArn: topicArn, Message: publish.message, MessageAttributes: messageAttributes(publish.attributes) }),
      );
      publish.resolve();
    } catch (error) {
      publish.reject(failureOf(topicArn, error));
    }
  }

  private async publishBatch(topicArn: string, batch: readonly PendingPublish[]): Promise<void> {
    try {
      const result = await this.client.send(
        new PublishBatchCommand({
          TopicArn: topicArn,
          PublishBatchRequestEntries: batch.map((publish, index) => ({
            Id: `p${index}`,
            Message: publish.message,
            MessageAttributes: messageAttributes(publish.attributes),
          })),
        }),
      );
      const failed = new Map((result.Failed ?? []).map((entry) => [entry.Id, entry]));
      batch.forEach((publish, index) => {
        const failure = failed.get(`p${index}`);
        if (failure) publish.reject(classify(topicArn, failure.Code ?? '', failure.Message ?? 'entry failed'));
        else publish.resolve();
      });
    } catch (error) {
      if (failedBeforeSending(error)) {
        await Promise.all(batch.map((publish) => this.publishOne(topicArn, publish)));
        return;
      }
      const failure = failureOf(topicArn, error);
      for (const publish of batch) publish.reject(failure);
    }
  }
}
