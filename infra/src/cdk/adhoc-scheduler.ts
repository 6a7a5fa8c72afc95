import {
  DEFAULTS,
  LAST_ERROR_ID_PREFIX,
  LOADER_CURSOR_ID,
  openEventsCounterId,
  parseTenantsDocument,
  TABLE,
  TABLE_LAYOUT,
  type SchedulerConfig,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { Aws, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  assertClaimLeaseFits,
  DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY,
  delayQueueMaxReceiveCount,
  EVENT_SOURCES,
  MAX_RECEIVE_COUNT,
  type EventSourceName,
} from '../queues.js';
import { FUNCTION_MEMORY_MB } from '../function-memory.js';
import { BulkChanges } from './bulk-changes.js';
import { createInputTopics, schedulerTopicPrefix } from './input-topics.js';
import { NodeFunction, type NodeFunctionProps } from './node-function.js';
import { schedulerFunctionEntry, type SchedulerFunctionName } from './paths.js';
import { deadLetterQueue, QueueWithDeadLetters } from './queue-with-dead-letters.js';
import { deployedSchedulerConfig, lambdaEnvironment, type SchedulerSettings } from './scheduler-config.js';
import { SchedulerMonitoring, type SchedulerMonitoringProps } from './scheduler-monitoring.js';

export interface AdhocSchedulerProps {
  /**
   * AWS account ids that may publish schedule requests to the shared input topic (the public
   * tenant's). Undefined: any AWS account, as the original public service.
   */
  readonly publisherAccounts?: readonly string[];
  /**
   * The registered tenants, each with its own input topic, and the public tenant's settings
   * (shared/schema/tenants.schema.json). Checked at synth. Default: no registered tenants.
   * Every function gets the registry in its environment, which Lambda limits to 4 KB: some
   * 20 to 45 tenants, fewer with quotas set; synth fails beyond.
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

/** Size and time limits of each function; the loader's timeout follows its tick budget. */
const FUNCTION_LIMITS = {
  // A batch of up to 100: validation, one counter write per tenant, batched inserts, SendMessageBatch.
  ingest: { timeout: Duration.seconds(30), memorySize: FUNCTION_MEMORY_MB.ingest },
  // Ten chunks of up to 100 ids: BatchGetItem, batched conditional UPDATEs, SendMessageBatch.
  loading: { timeout: Duration.seconds(30), memorySize: FUNCTION_MEMORY_MB.loading },
  // The wait (at most the lead plus the second of an SQS delay), the publishes with SDK
  // retries, and the ends with their retries or their hand-over.
  emitter: { timeout: Duration.seconds(30), memorySize: FUNCTION_MEMORY_MB.emitter },
  // A page of up to 100 events, each cancel a transaction tried up to three times.
  changes: { timeout: Duration.seconds(60), memorySize: FUNCTION_MEMORY_MB.changes },
} as const;

/** Margin after the loader's tick budget for the final cursor write and the log line. */
const LOADER_TIMEOUT_MARGIN_SECONDS = 15;

const batchingWindow = (source: EventSourceName): Duration | undefined =>
  EVENT_SOURCES[source].batchingWindowSeconds > 0 ? Duration.seconds(EVENT_SOURCES[source].batchingWindowSeconds) : undefined;

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

    const attribute = ({ name, type }: { readonly name: string; readonly type: 'S' | 'N' }) => ({
      name,
      type: type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
    });
    this.table = new dynamodb.Table(this, 'Events', {
      partitionKey: attribute(TABLE_LAYOUT.partitionKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_LAYOUT.ttlAttribute,
      removalPolicy: props.tableRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    // The loader reads only ids and due times from its index; the loading function reads the items.
    for (const index of TABLE_LAYOUT.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        sortKey: attribute(index.sortKey),
        projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      });
    }

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
        tenants,
        accountId: Aws.ACCOUNT_ID,
        ownTopicArns,
      },
      props.settings,
    );
    const { config } = this;
    assertClaimLeaseFits(config.emitClaimLeaseSeconds, this.delayQueue.visibilityTimeout.toSeconds());
    const environment = lambdaEnvironment(config);
    const schedulerFunction = (name: SchedulerFunctionName, fnProps: Omit<NodeFunctionProps, 'entry' | 'environment' | 'logRetention'>) =>
      new NodeFunction(this, `${name[0]?.toUpperCase()}${name.slice(1)}`, {
        entry: schedulerFunctionEntry(name),
        environment,
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        ...fnProps,
      });

    const ingest = schedulerFunction('ingest', {
      description:
        'Validates schedule, cancel and reschedule requests by tenant; records events within quotas, sends near ones to the delay queue',
      ...FUNCTION_LIMITS.ingest,
    });
    consumeQueues(
      ingest,
      'ingest',
      { queue: this.ingestQueue.queue },
      // The same function on its own event source: a flood of public requests waits in its own
      // queue, and takes at most this many of the function's (and the account's) invocations.
      {
        queue: this.publicIngestQueue.queue,
        id: 'PublicQueue',
        maxConcurrency: props.publicIngestMaxConcurrency ?? DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY,
      },
    );
    // New events: batched conditional INSERTs (PartiQL), far-path payloads kept apart and label
    // entries by BatchWriteItem; quota counters, reschedules and resends are UpdateItems, and a cancel
    // changes its event and its tenant's counter in one transaction of two UpdateItems; a
    // duplicate or a refused change is read (BatchGetItem) to say why; refusals are kept in the
    // refusal log (an UpdateItem of its tenant's counter, a BatchWriteItem of its ring, `r#<tenant>...`).
    allow(
      ingest,
      ['dynamodb:PartiQLInsert', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
      [this.table.tableArn],
    );
    // Near events and notices about rejected requests: the emitter publishes the notices.
    allow(ingest, ['sqs:SendMessage'], [this.delayQueue.queue.queueArn]);
    this.bulkChanges.grantStart(ingest);

    const loader = schedulerFunction('loader', {
      description: 'Every minute: hands stored events coming due to the loading function',
      timeout: Duration.seconds(config.loaderTickBudgetSeconds + LOADER_TIMEOUT_MARGIN_SECONDS),
      memorySize: FUNCTION_MEMORY_MB.loader,
    });
    // A failed tick is not retried: the next one starts from the same cursor.
    loader.function.configureAsyncInvoke({ retryAttempts: 0 });
    const failedTickReason =
      'A failed tick is not retried on purpose: the next tick resumes from the cursor stored in the table, so its event holds nothing to replay; the failure is in the logs and raises the Errors alarm.';
    Validations.of(loader.function).acknowledge(
      { id: 'Serverless-LambdaDLQ', reason: failedTickReason },
      { id: 'Serverless-LambdaAsyncFailureDestination', reason: failedTickReason },
    );
    this.loaderDeadLetterQueue = deadLetterQueue(this, 'LoaderDeadLetters');
    Validations.of(this.loaderDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This is a dead-letter queue: that of the loader's EventBridge target, whose dead-letter config names it (the rule looks only at queues' and functions' dead-letter settings); it needs none of its own.",
    });
    const interval = loaderInterval(config.loaderIntervalSeconds);
    this.loaderSchedule = new events.Rule(this, 'LoaderSchedule', {
      schedule: events.Schedule.rate(interval),
      targets: [
        new targets.LambdaFunction(loader.function, {
          // A tick EventBridge cannot hand over (throttled, refused) is tried again while it is
          // younger than one interval: after that the next tick has started and covers it. What
          // is still not handed over is set aside and alarmed, never dropped in silence.
          maxEventAge: interval,
          deadLetterQueue: this.loaderDeadLetterQueue,
        }),
      ],
    });
    // The tenant index, and the time-bucket index that holds events stored before it.
    allow(
      loader,
      ['dynamodb:Query'],
      [`${this.table.tableArn}/index/${TABLE.tenantIndex}`, `${this.table.tableArn}/index/${TABLE.dueIndex}`],
    );
    // The loader's cursor is an item of the same table, and the only item the loader writes.
    allow(loader, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [this.table.tableArn], {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [LOADER_CURSOR_ID] },
    });
    // Tenants' pauses, on their quota counters' items: the held events of those no longer paused are sent on.
    allow(loader, ['dynamodb:BatchGetItem'], [this.table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${openEventsCounterId('')}*`] },
    });
    allow(loader, ['sqs:SendMessage'], [this.loadingQueue.queue.queueArn]);

    const loading = schedulerFunction('loading', {
      description: 'Moves chunks of stored events into the delay queue',
      ...FUNCTION_LIMITS.loading,
    });
    consumeQueues(loading, 'loading', { queue: this.loadingQueue.queue });
    // Reads a chunk's records and payloads (BatchGetItem), takes them with batched conditional UPDATEs (PartiQL).
    allow(loading, ['dynamodb:BatchGetItem', 'dynamodb:PartiQLUpdate'], [this.table.tableArn]);
    allow(loading, ['sqs:SendMessage'], [this.delayQueue.queue.queueArn]);

    const { emitterMaxConcurrency, emitterReservedConcurrency } = props;
    if (
      emitterMaxConcurrency !== undefined &&
      emitterReservedConcurrency !== undefined &&
      emitterMaxConcurrency > emitterReservedConcurrency
    ) {
      // Lambda would throttle the batches above the reservation, and they would come back late.
      throw new Error(
        `emitterMaxConcurrency (${emitterMaxConcurrency}) must not exceed emitterReservedConcurrency (${emitterReservedConcurrency})`,
      );
    }
    const emitter = schedulerFunction('emitter', {
      description: 'Publishes each delayed event to its target topic at its due time, and failure notices to failure topics',
      roleName: props.emitterRoleName,
      reservedConcurrentExecutions: emitterReservedConcurrency,
      ...FUNCTION_LIMITS.emitter,
    });
    consumeQueues(emitter, 'emitter', { queue: this.delayQueue.queue, maxConcurrency: emitterMaxConcurrency });
    // Reads a batch's records (BatchGetItem) before the due time; records its ends afterwards
    // with batched conditional UPDATEs (PartiQL). Open-events counters, notice claims and carries are
    // UpdateItems; a hold is an UpdateItem with a check of its tenant's pause (ConditionCheckItem)
    // in one transaction; a carry into the table writes a payload item (BatchWriteItem).
    allow(
      emitter,
      ['dynamodb:BatchGetItem', 'dynamodb:PartiQLUpdate', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchWriteItem'],
      [this.table.tableArn],
    );
    // Delays the retry of a failed publish (ChangeMessageVisibility); hands ends it could not record over (SendMessage).
    allow(emitter, ['sqs:ChangeMessageVisibility', 'sqs:SendMessage'], [this.delayQueue.queue.queueArn]);
    // Clients' topics, in accounts other than the scheduler's: their topic policies decide. A
    // topic in the scheduler's own account is reachable only if its own policy grants this role,
    // exactly as a client's topic elsewhere must; an identity policy alone would reach every topic
    // of the account, the scheduler's input topics included.
    allow(emitter, ['sns:Publish'], [ANY_CLIENT_TOPIC], { StringNotEquals: { 'aws:ResourceAccount': Aws.ACCOUNT_ID } });
    // Never the scheduler's own topics, whatever a topic policy says: a request naming one as its
    // target would have the scheduler feed itself or its operators' alarms.
    emitter.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: ['sns:Publish'],
        resources: [
          `arn:${Aws.PARTITION}:sns:*:${Aws.ACCOUNT_ID}:${topicPrefix}-*`,
          // An embedding app's alarm topic may be named otherwise.
          ...(props.monitoring?.alarmTopic ? [props.monitoring.alarmTopic.topicArn] : []),
        ],
      }),
    );
    Validations.of(emitter.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sns:*:*:*]',
      reason:
        "Targets, failure topics and dead-letter topics are clients' topics in their own accounts, named in each request: each client's topic policy decides whether this role may publish. The Allow excludes the scheduler's account (there a topic's own policy must grant this role), and an explicit Deny keeps the scheduler's own topics out of reach.",
    });

    const changes = schedulerFunction('changes', {
      description: "Works the pages of jobs over many of a tenant's events: a cancel by label, a resume",
      ...FUNCTION_LIMITS.changes,
    });
    consumeQueues(changes, 'changes', { queue: this.bulkChanges.queue.queue });
    this.bulkChanges.grantWork(changes, { table: this.table, delayQueue: this.delayQueue.queue, loadingQueue: this.loadingQueue.queue });

    // A record a function fails leaves its last error, the item `e#<messageId>`, for the dead-letter tools; no other item.
    for (const fn of [ingest, loading, emitter, changes]) {
      allow(fn, ['dynamodb:BatchWriteItem'], [this.table.tableArn], {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${LAST_ERROR_ID_PREFIX}*`] },
      });
    }

    this.functions = { ingest, loader, loading, emitter, changes };
    this.monitoring = new SchedulerMonitoring(this, 'Monitoring', {
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

/**
 * Clients' target, failure and dead-letter topics: any topic named in a request or the
 * registry (ingest and the registry check bound their accounts and region). The client's topic
 * policy is what decides whether the publish is allowed. Only the emitter publishes there, and
 * only outside the scheduler's account unless a topic's own policy grants it.
 */
const ANY_CLIENT_TOPIC = `arn:${Aws.PARTITION}:sns:*:*:*`;

function allow(fn: NodeFunction, actions: string[], resources: string[], conditions?: iam.Conditions): void {
  fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources, conditions }));
}

/** One SQS event source of a function. */
interface EventSourceQueue {
  readonly queue: sqs.IQueue;
  /** Construct id of the event source mapping. Default: `Queue`. */
  readonly id?: string;
  /** Most invocations this source runs at once (2 to 1,000). Default: no cap. */
  readonly maxConcurrency?: number;
}

/**
 * SQS event sources with partial batch responses, and only the three permissions Lambda's
 * poller needs on each queue (the managed SqsEventSource also grants ChangeMessageVisibility and GetQueueUrl).
 */
function consumeQueues(fn: NodeFunction, source: EventSourceName, ...sources: EventSourceQueue[]): void {
  Validations.of(fn.function).acknowledge({
    id: 'Serverless-LambdaDLQ',
    reason:
      "Lambda's dead-letter queue serves asynchronous invocations only; this function is invoked synchronously by its SQS event sources, whose queues set aside what keeps failing in their own alarmed dead-letter queues.",
  });
  for (const { queue, id, maxConcurrency } of sources) {
    allow(fn, ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], [queue.queueArn]);
    const mapping = fn.function.addEventSourceMapping(id ?? 'Queue', {
      eventSourceArn: queue.queueArn,
      batchSize: EVENT_SOURCES[source].batchSize,
      maxBatchingWindow: batchingWindow(source),
      maxConcurrency,
      reportBatchItemFailures: true,
    });
    Validations.of(mapping).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        "On-failure destinations apply to stream and Kafka sources; for an SQS source, records that keep failing go to the queue's own alarmed dead-letter queue through its redrive policy.",
    });
  }
}

/** EventBridge schedules run at most once a minute, in whole minutes. */
function loaderInterval(seconds: number): Duration {
  if (seconds % 60 !== 0) throw new Error(`loaderIntervalSeconds must be a whole number of minutes on AWS, got ${seconds}`);
  return Duration.minutes(seconds / 60);
}
