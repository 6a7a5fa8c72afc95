import { AuthorizationErrorException, type PublishBatchCommandInput, type PublishCommandInput, type SNSClient } from '@aws-sdk/client-sns';
import { isSchedulerTopic, type SchedulerTopics } from '@adhoc-scheduler/shared';

const PUBLISHES: ReadonlySet<string> = new Set(['PublishCommand', 'PublishBatchCommand']);

/**
 * What IAM enforces on AWS, where the emitter's role is denied `sns:Publish` on the scheduler's
 * own topics: the emulator enforces no policy, so the local service's SNS client refuses such a
 * publish itself, with the error SNS answers an explicit deny with. An event that names one of
 * them (stored before ingest refused them) then fails as TARGET_ACCESS_DENIED, as on AWS.
 */
export function refusePublishesToSchedulerTopics(sns: SNSClient, own: SchedulerTopics, emitterRoleArn: string): void {
  sns.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Partial<PublishCommandInput & PublishBatchCommandInput>;
      const topicArn = input.TopicArn ?? input.TargetArn;
      if (PUBLISHES.has(context.commandName ?? '') && topicArn !== undefined && isSchedulerTopic(topicArn, own)) {
        throw new AuthorizationErrorException({
          message: `User: ${emitterRoleArn} is not authorized to perform: SNS:Publish on resource: ${topicArn} with an explicit deny in an identity-based policy`,
          $metadata: { httpStatusCode: 403 },
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'refusePublishesToSchedulerTopics' },
  );
}
