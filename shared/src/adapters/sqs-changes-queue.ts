import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeBulkCancelPage } from '../domain/bulk-cancel.js';
import { encodeChangeJob, type ChangeJob } from '../domain/messages.js';
import { TransientError } from '../domain/reasons.js';
import type { ChangesQueue } from '../app/ports/queues.js';

/** The `changes` queue: each message a page of a job, for the changes function. */
export class SqsChangesQueue implements ChangesQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async sendPage(jobId: string, from: string): Promise<void> {
    try {
      await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeBulkCancelPage({ jobId, from }) }));
    } catch (error) {
      throw new TransientError(`SQS refused a page of job ${jobId}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }

  async send(job: ChangeJob, delaySeconds: number): Promise<void> {
    try {
      await this.client.send(
        new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: encodeChangeJob(job), DelaySeconds: delaySeconds }),
      );
    } catch (error) {
      throw new TransientError(`SQS refused a page of job ${job.jobId}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }
}
