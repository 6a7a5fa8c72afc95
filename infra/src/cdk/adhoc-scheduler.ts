import { DEFAULTS, parseTenantsDocument, TABLE_LAYOUT, type SchedulerConfig, type TenantsDocument } from '@adhoc-scheduler/shared';
import { Aws, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { delayQueueMaxReceiveCount, MAX_RECEIVE_COUNT } from '../queues.js';
import { BulkChanges } from './bulk-changes.js';
import { createInputTopics, schedulerTopicPrefix } from './input-topics.js';
import type { NodeFunction } from './node-function.js';
import type { SchedulerFunctionName } from './paths.js';
import { deadLetterQueue, QueueWithDeadLetters } from './queue-with-dead-letters.js';
import { batchingWindow, createSchedulerFunctions, FUNCTION_LIMITS } from './scheduler-functions.js';
import { deployedSchedulerConfig, type SchedulerSettings } from './scheduler-config.js';
import { SchedulerMonitoring, type SchedulerMonitoringProps } from './scheduler-monitoring.js';
import { TenantRegistryResource } from './tenant-registry.js';

export interface AdhocSchedulerProps {
  /**
   * AWS account ids that may publish schedule requests to the shared input topic (the public
   * tenant's). Undefined: any AWS account, as the original public service.
   */
  readonly publisherAccounts?: readonly string[];
  /**
   * The registered tenants, each with its own input topic, and the public tenant's settings
   * (shared/schema/tenants.schema.json). Checked at synth. Default: no registered tenants.
   * Written into the table at each deployment that changes it (TenantRegistryResource), where
   * the functions read it through their cache.
   */
  readonly tenants?: TenantsDocument;
  /**
   * Prefix of the scheduler's own topics' names: `<prefix>-input` (shared), `<prefix>-tenant-<id>`
   * and, in SchedulerStack, `<prefix>-alarms`. The emitter may never publish to a topic so named
   * in the stack's account. Topic names are unique per account and region. Default: the stack's name.
   */
  readonly topicPrefix?: string;
  /** Tuning of the scheduler (windows, shards, attempts...); the config module's defaults otherwise. */
  readonly settings?: SchedulerSettings;
  /**
   * Most emitter invocations the delay queue may run at once (2 to 1,000). Undefined: no cap,
   * which also lets Lambda scale an idle event source down to 2 pollers (fewer SQS requests at rest).
   */
  readonly emitterMaxConcurrency?: number;
  /**
   * Most ingest invocations the public tenant's queue may run at once (2 to 1,000), so that a flood
   * on the shared topic cannot take the concurrency the registered tenants and the emitter need.
   * Default: 10. At batches of 100 requests taking a fifth of a second each, that is the 5,000 new
   * events a second the public tenant's default quota admits (more concurrency would only refuse
   * faster), and it leaves 990 of an account's default 1,000 to everything else.
   */
  readonly publicIngestMaxConcurrency?: number;
  /** Concurrency reserved for the emitter, so other functions of the account cannot starve it. Undefined: none. */
  readonly emitterReservedConcurrency?: number;
  /**
   * Fixed name of the emitter's role: clients grant it sns:Publish on their output and failure
   * topics, and it is the only role that publishes to them.
   */
  readonly emitterRoleName?: string;
  /** Retention of every function's logs. Default: one month. */
  readonly logRetention?: logs.RetentionDays;
  /** What `cdk destroy` does with the table of stored events. Default: retain it. */
  readonly tableRemovalPolicy?: RemovalPolicy;
  readonly monitoring?: Omit<
    SchedulerMonitoringProps,
    'functions' | 'deadLetterQueues' | 'ingestQueues' | 'delayQueue' | 'table' | 'indexNames'
  >;
}

/**
 * The whole scheduler: input topics (the shared one and one per tenant), ingest buffer queues
 * (the public tenant's and the registered tenants'), table, loader rule, loading and delay queues
 * with their dead-letter queues, the five functions with exactly the permissions their code uses,
 * alarms and a dashboard. Embed it in any stack.
 */
export class AdhocScheduler extends Construct {
  /** The shared input topic: what arrives there belongs to the public tenant. */
  readonly inputTopic: sns.Topic;
  /** Each registered tenant's input topic, by tenant id. */
  readonly tenantTopics: Readonly<Record<string, sns.Topic>>;
  readonly table: dynamodb.Table;
  /** Where the shared topic delivers: the public tenant's requests, consumed apart and capped. */
  readonly publicIngestQueue: QueueWithDeadLetters;
  /** Where every registered tenant's topic delivers. */
  readonly ingestQueue: QueueWithDeadLetters;
  /** What SNS could not deliver from any input topic to its ingest queue. */
  readonly inputDeadLetterQueue: sqs.Queue;
  readonly loadingQueue: QueueWithDeadLetters;
  readonly delayQueue: QueueWithDeadLetters;
  /** The changes queue, where jobs that change events in bulk wait page by page. */
  readonly bulkChanges: BulkChanges;
  readonly loaderSchedule: events.Rule;
  /** Loader ticks EventBridge could not hand to the loader. */
  readonly loaderDeadLetterQueue: sqs.Queue;
  readonly functions: Readonly<Record<SchedulerFunctionName, NodeFunction>>;
  /** The tenant registry, written into the table before the functions are updated. */
  readonly registry: TenantRegistryResource;
  readonly monitoring: SchedulerMonitoring;
  /** The config every function runs with (resource names as CloudFormation references). */
  readonly config: SchedulerConfig;

  constructor(scope: Construct, id: string, props: AdhocSchedulerProps = {}) {
    super(scope, id);

    const { region, account } = Stack.of(this);
    const topicPrefix = schedulerTopicPrefix(this, props.topicPrefix);
    // The scheduler never publishes to its own topics for a client: the topics named with the prefix
    // in the stack's account (the input topics, the alarm topic), and an alarm topic named otherwise.
    const ownTopicArns = props.monitoring?.alarmTopic ? [props.monitoring.alarmTopic.topicArn] : [];
    const known = (value: string) => (Token.isUnresolved(value) ? undefined : value);
    // Dead-letter topics are checked against what synth knows: the region and the account when the
    // stack names them (an unknown account: the prefix-named topics of any account), literal ARNs.
    const tenants = parseTenantsDocument(props.tenants ?? {}, {
      region: known(region),
      schedulerTopics: { topicPrefix, accountId: known(account), ownTopicArns: ownTopicArns.filter((arn) => known(arn) !== undefined) },
    });

    const tableRemovalPolicy = props.tableRemovalPolicy ?? RemovalPolicy.RETAIN;
    this.table = eventsTable(this, tableRemovalPolicy);

    if (props.settings?.dynamodbBatchWrites === 'transactions') {
      // Transactions bill every item twice on AWS, and the functions are granted PartiQL batches.
      throw new Error('dynamodbBatchWrites "transactions" is for the local runtime (DynamoDB Local); the stack writes with "statements"');
    }
    this.loadingQueue = new QueueWithDeadLetters(this, 'LoadingQueue', {
      maxReceiveCount: MAX_RECEIVE_COUNT.aws,
      consumerTimeout: FUNCTION_LIMITS.loading.timeout,
    });
    this.delayQueue = new QueueWithDeadLetters(this, 'DelayQueue', {
      maxReceiveCount: delayQueueMaxReceiveCount(props.settings?.emitMaxAgeSeconds ?? DEFAULTS.emitMaxAgeSeconds),
      consumerTimeout: FUNCTION_LIMITS.emitter.timeout,
      consumerBatchingWindow: batchingWindow('emitter'),
    });
    this.bulkChanges = new BulkChanges(this, 'BulkChanges', { consumerTimeout: FUNCTION_LIMITS.changes.timeout });
    const ingestQueueProps = {
      maxReceiveCount: MAX_RECEIVE_COUNT.aws,
      consumerTimeout: FUNCTION_LIMITS.ingest.timeout,
      consumerBatchingWindow: batchingWindow('ingest'),
    };
    this.publicIngestQueue = new QueueWithDeadLetters(this, 'PublicIngestQueue', ingestQueueProps);
    this.ingestQueue = new QueueWithDeadLetters(this, 'IngestQueue', ingestQueueProps);
    this.inputDeadLetterQueue = deadLetterQueue(this, 'InputDeadLetters');
    Validations.of(this.inputDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This is a dead-letter queue: that of the input topics' SNS subscriptions, whose redrive policies name it (the rule looks only at queues' and functions' dead-letter settings); it needs none of its own.",
    });
    const inputTopics = createInputTopics(this, {
      topicPrefix,
      tenants,
      publisherAccounts: props.publisherAccounts,
      publicIngestQueue: this.publicIngestQueue.queue,
      ingestQueue: this.ingestQueue.queue,
      deadLetterQueue: this.inputDeadLetterQueue,
    });
    this.inputTopic = inputTopics.shared;
    this.tenantTopics = inputTopics.byTenant;

    // Resource names are tokens here; loadConfig only checks that they are set.
    this.config = deployedSchedulerConfig(
      {
        tableName: this.table.tableName,
        delayQueueUrl: this.delayQueue.queue.queueUrl,
        loadingQueueUrl: this.loadingQueue.queue.queueUrl,
        changesQueueUrl: this.bulkChanges.queue.queue.queueUrl,
        topicPrefix,
        accountId: Aws.ACCOUNT_ID,
        ownTopicArns,
      },
      props.settings,
    );
    const functions = createSchedulerFunctions(this, this, { ...props, alarmTopic: props.monitoring?.alarmTopic }, topicPrefix);
    // Each function updated once the registry it reads is in the table.
    this.registry = new TenantRegistryResource(this, 'TenantRegistry', {
      table: this.table,
      removalPolicy: tableRemovalPolicy,
      tenants,
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    for (const fn of Object.values(functions.functions)) fn.function.node.addDependency(this.registry.resource);
    this.loaderDeadLetterQueue = functions.loaderDeadLetterQueue;
    this.loaderSchedule = functions.loaderSchedule;
    this.functions = functions.functions;
    this.monitoring = this.monitor(props);
  }

  /** The alarms and the dashboard, over every dead-letter queue and what each holds. */
  private monitor(props: AdhocSchedulerProps): SchedulerMonitoring {
    return new SchedulerMonitoring(this, 'Monitoring', {
      ...props.monitoring,
      functions: this.functions,
      deadLetterQueues: {
        Ingest: { queue: this.ingestQueue.deadLetterQueue, holds: "registered tenants' requests that failed every ingest attempt" },
        PublicIngest: { queue: this.publicIngestQueue.deadLetterQueue, holds: "public tenant's requests that failed every ingest attempt" },
        InputDelivery: {
          queue: this.inputDeadLetterQueue,
          holds: 'requests SNS could not deliver from an input topic to its ingest queue',
        },
        Loading: { queue: this.loadingQueue.deadLetterQueue, holds: 'loading messages that failed every attempt' },
        Delay: { queue: this.delayQueue.deadLetterQueue, holds: 'delay-queue messages that crashed the emitter on every delivery' },
        Changes: { queue: this.bulkChanges.queue.deadLetterQueue, holds: 'pages of bulk changes that failed every attempt' },
        LoaderTicks: { queue: this.loaderDeadLetterQueue, holds: 'loader ticks EventBridge could not hand to the loader' },
      },
      ingestQueues: { public: this.publicIngestQueue.queue, tenants: this.ingestQueue.queue },
      delayQueue: this.delayQueue.queue,
      table: this.table,
      indexNames: TABLE_LAYOUT.indexes.map((index) => index.name),
    });
  }
}

/** The table of events, laid out as TABLE_LAYOUT says: the same layout the local service creates. */
function eventsTable(scope: Construct, removalPolicy: RemovalPolicy): dynamodb.Table {
  const attribute = ({ name, type }: { readonly name: string; readonly type: 'S' | 'N' }) => ({
    name,
    type: type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
  });
  const table = new dynamodb.Table(scope, 'Events', {
    partitionKey: attribute(TABLE_LAYOUT.partitionKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: TABLE_LAYOUT.ttlAttribute,
    removalPolicy,
  });
  // The loader reads only ids and due times from its index; the loading function reads the items.
  for (const index of TABLE_LAYOUT.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
  }
  return table;
}
