import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** How many of the published events the ingest function had accepted at a moment (epoch ms). */
export interface AcceptanceSample {
  readonly at: number;
  readonly accepted: number;
}

/** Messages an ingest queue still holds, waiting, in flight or delayed: requests not yet accepted (a failed one comes back). */
export async function queueBacklog(sqs: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes: attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Object.values(attributes).reduce((sum, value) => sum + Number(value), 0);
}

/** The first sample by which `count` events had been accepted; undefined if none reached it. */
export function timeOfCount(samples: readonly AcceptanceSample[], count: number): number | undefined {
  return samples.find((sample) => sample.accepted >= count)?.at;
}
