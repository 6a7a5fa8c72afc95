import { Aws, CfnOutput, Stack, Token, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { AdhocScheduler, type AdhocSchedulerProps } from './adhoc-scheduler.js';
import { schedulerTopicPrefix } from './input-topics.js';
import type { QueueWithDeadLetters } from './queue-with-dead-letters.js';
import { queueOutputKeys, SCHEDULER_OUTPUTS, tenantInputTopicOutputKey, type DeadLetterSource } from './stack-outputs.js';

export { SCHEDULER_OUTPUTS, tenantInputTopicOutputKey };

export const DEFAULT_SCHEDULER_STACK_NAME = 'AdhocScheduler';

export interface SchedulerStackProps extends StackProps {
  readonly scheduler?: Omit<AdhocSchedulerProps, 'emitterRoleName' | 'monitoring'> & {
    readonly monitoring?: Omit<NonNullable<AdhocSchedulerProps['monitoring']>, 'alarmTopic' | 'dashboardName'>;
  };
}

/** IAM role names: at most 64 characters. The longest region name today has 14. */
const MAX_ROLE_NAME = 64;
const LONGEST_REGION = 14;

/**
 * The scheduler deployed on its own. Clients' topic policies name the emitter's role, the only
 * one that publishes to their topics, so it has a stable name: `<stack name>-emitter-<region>`
 * (role names are global to the account; the region keeps two regional deployments apart).
 */
export class SchedulerStack extends Stack {
  readonly scheduler: AdhocScheduler;
  readonly alarmTopic: sns.Topic;
  /** The queues whose URLs and dead-letter queues' URLs the stack outputs (see queueOutputKeys), by `--queue` name. */
  readonly redrivableQueues: ReadonlyMap<DeadLetterSource, QueueWithDeadLetters>;

  constructor(scope: Construct, id: string, props: SchedulerStackProps = {}) {
    super(scope, id, { description: 'Ad hoc scheduler: SNS in, SNS out at the scheduled time, to the millisecond', ...props });

    const emitterRoleName = `${this.stackName}-emitter-${this.region}`;
    if (!Token.isUnresolved(this.stackName) && this.stackName.length + '-emitter-'.length + LONGEST_REGION > MAX_ROLE_NAME) {
      throw new Error(`stack name "${this.stackName}" is too long for the role name ${this.stackName}-emitter-<region>`);
    }
    this.alarmTopic = alarmTopic(this, props.scheduler?.topicPrefix);
    this.scheduler = new AdhocScheduler(this, 'Scheduler', {
      ...props.scheduler,
      emitterRoleName,
      monitoring: { ...props.scheduler?.monitoring, alarmTopic: this.alarmTopic, dashboardName: `${this.stackName}-${this.region}` },
    });

    const output = (key: string, value: string, description: string) => new CfnOutput(this, key, { value, description });
    output(
      SCHEDULER_OUTPUTS.inputTopicArn,
      this.scheduler.inputTopic.topicArn,
      'Publish schedule requests here (the shared topic of the public tenant)',
    );
    const tenantOfKey = new Map<string, string>();
    for (const [tenantId, topic] of Object.entries(this.scheduler.tenantTopics)) {
      const key = tenantInputTopicOutputKey(tenantId);
      const other = tenantOfKey.get(key);
      if (other !== undefined) throw new Error(`tenants "${other}" and "${tenantId}" would share the stack output ${key}: rename one`);
      tenantOfKey.set(key, tenantId);
      output(
        key,
        topic.topicArn,
        `Tenant "${tenantId}": publish schedule, cancel and reschedule requests here, from the tenant's accounts`,
      );
    }
    output(
      SCHEDULER_OUTPUTS.emitterRoleArn,
      this.scheduler.functions.emitter.role.roleArn,
      'Grant this role sns:Publish on your output and failure topics: it is the only one that publishes to them',
    );
    output(SCHEDULER_OUTPUTS.region, Aws.REGION, 'Region of the input topic');
    output(
      SCHEDULER_OUTPUTS.nearPathWindowSeconds,
      String(this.scheduler.config.nearPathWindowSeconds),
      'Events due later than this are stored and moved by the loader; sooner ones go straight to the delay queue',
    );
    output(
      SCHEDULER_OUTPUTS.shardCount,
      String(this.scheduler.config.shardCount),
      'Shards of the tenant index: scripts/admin events reads each of them',
    );
    output(
      SCHEDULER_OUTPUTS.indexQueuedEvents,
      String(this.scheduler.config.indexQueuedEvents),
      'Whether events placed straight in the delay queue are in the tenant index: scripts/admin events says when they are not',
    );
    output(SCHEDULER_OUTPUTS.tableName, this.scheduler.table.tableName, 'Table of stored events (retained on stack deletion by default)');
    output(
      SCHEDULER_OUTPUTS.ingestQueueArn,
      this.scheduler.ingestQueue.queue.queueArn,
      "The registered tenants' ingest queue: scripts/admin tenant add subscribes each tenant's input topic to it",
    );
    output(
      SCHEDULER_OUTPUTS.inputDeadLetterQueueArn,
      this.scheduler.inputDeadLetterQueue.queueArn,
      'Where SNS sets aside what an input topic could not deliver (named by each input subscription)',
    );
    const { ingestQueue, publicIngestQueue, loadingQueue, delayQueue, bulkChanges } = this.scheduler;
    this.redrivableQueues = new Map<DeadLetterSource, QueueWithDeadLetters>([
      ['ingest', ingestQueue],
      ['public-ingest', publicIngestQueue],
      ['loading', loadingQueue],
      ['delay', delayQueue],
      ['changes', bulkChanges.queue],
    ]);
    for (const [source, { queue, deadLetterQueue }] of this.redrivableQueues) {
      const keys = queueOutputKeys(source);
      output(keys.queueUrl, queue.queueUrl, `The ${source} queue: where scripts/admin dead-letters redrive sends its dead letters back`);
      output(keys.deadLetterQueueUrl, deadLetterQueue.queueUrl, `Dead-letter queue of the ${source} queue (scripts/admin dead-letters)`);
    }
    output(SCHEDULER_OUTPUTS.alarmTopicArn, this.alarmTopic.topicArn, 'Subscribe to this topic to receive alarms');
    output(
      SCHEDULER_OUTPUTS.dashboardUrl,
      `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.scheduler.monitoring.dashboard.dashboardName}`,
      'CloudWatch dashboard: lateness, throughput, failures',
    );
  }
}

/** The topic the stack's alarms publish to: only CloudWatch alarms of its own account may. */
function alarmTopic(stack: Stack, topicPrefix: string | undefined): sns.Topic {
  // Named like the scheduler's other topics, which the emitter may never publish to.
  const topic = new sns.Topic(stack, 'AlarmTopic', {
    topicName: `${schedulerTopicPrefix(stack, topicPrefix)}-alarms`,
    displayName: `${stack.stackName} alarms`,
    enforceSSL: true,
  });
  // A topic policy replaces the account's default one, which let this account's alarms publish.
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
      },
    }),
  );
  return topic;
}
