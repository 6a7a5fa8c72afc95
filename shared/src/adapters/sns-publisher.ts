import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { EventRejectedError, REASON, TransientError } from '../domain/reasons.js';
import type { TopicPublisher } from '../app/ports.js';

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

export class SnsTopicPublisher implements TopicPublisher {
  constructor(private readonly client: SNSClient) {}

  async publish(topicArn: string, message: string, attributes: Readonly<Record<string, string>> = {}): Promise<void> {
    try {
      await this.client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Message: message,
          MessageAttributes: Object.fromEntries(
            Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
          ),
        }),
      );
    } catch (error) {
      const name = (error as { name?: string })?.name ?? '';
      const reason = PERMANENT[name as keyof typeof PERMANENT];
      const detail = (error as Error)?.message ?? String(error);
      if (reason) throw new EventRejectedError(reason, `SNS refused the publish to ${topicArn}: ${detail}`, { topicArn, error: name }, { cause: error });
      throw new TransientError(`SNS publish to ${topicArn} failed: ${detail}`, { cause: error });
    }
  }
}
