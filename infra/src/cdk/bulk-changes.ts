import { TABLE } from '@adhoc-scheduler/shared';
import type { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MAX_RECEIVE_COUNT } from '../queues.js';
import type { NodeFunction } from './node-function.js';
import { QueueWithDeadLetters } from './queue-with-dead-letters.js';

export interface BulkChangesProps {
  /** Timeout of the changes function, which consumes the queue. */
  readonly consumerTimeout: Duration;
}

/**
 * The `changes` queue, where the jobs that change events in bulk (a cancel by label) wait page by
 * page, with its dead-letter queue (alarmed by SchedulerMonitoring), and the permissions of who
 * starts a job and of the changes function that works its pages.
 */
export class BulkChanges extends Construct {
  readonly queue: QueueWithDeadLetters;

  constructor(scope: Construct, id: string, props: BulkChangesProps) {
    super(scope, id);
    this.queue = new QueueWithDeadLetters(this, 'ChangesQueue', {
      maxReceiveCount: MAX_RECEIVE_COUNT.aws,
      consumerTimeout: props.consumerTimeout,
    });
  }

  /** Ingest starts a tenant's job: it creates the job's item (an UpdateItem it may make already) and sends the first page. */
  grantStart(fn: NodeFunction): void {
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queue.queueArn] }));
  }

  /**
   * The changes function. A bulk cancel reads a page of a tenant's label entries (Query on the
   * tenant index), the job and the page's records (BatchGetItem); cancels each event with its
   * place in the quota (a transaction of two UpdateItems) and moves the job (UpdateItem); sends
   * the next page, and hands the result notice to the emitter through the delay queue (it
   * publishes to no client's topic). A resume reads its tenant's held events' ids (Query on the
   * tenant index, their held partitions) and hands them to loading.
   */
  grantWork(
    fn: NodeFunction,
    resources: { readonly table: dynamodb.ITable; readonly delayQueue: sqs.IQueue; readonly loadingQueue: sqs.IQueue },
  ): void {
    const allow = (actions: string[], arns: string[]) =>
      fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: arns }));
    allow(['dynamodb:Query'], [`${resources.table.tableArn}/index/${TABLE.tenantIndex}`]);
    allow(['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], [resources.table.tableArn]);
    allow(['sqs:SendMessage'], [this.queue.queue.queueArn, resources.delayQueue.queueArn, resources.loadingQueue.queueArn]);
  }
}
