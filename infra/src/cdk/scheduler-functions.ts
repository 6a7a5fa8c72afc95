import { REGISTRY_ITEM_KEYS } from './tenant-registry.js';
import {
  ID_PREFIX,
  DUE_DIRECTORY_ID_PREFIX,
  LAST_ERROR_ID_PREFIX,
  LOADER_CURSOR_ID,
  PAYLOAD_ITEM_ID_PREFIX,
  openEventsCounterId,
  TABLE,
  type SchedulerConfig,
} from '@adhoc-scheduler/shared';
import { Aws, Duration, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY, EVENT_SOURCES, type EventSourceName } from '../queues.js';
import { FUNCTION_MEMORY_MB } from '../function-memory.js';
import type { BulkChanges } from './bulk-changes.js';
import { NodeFunction, type NodeFunctionProps } from './node-function.js';
import { schedulerFunctionEntry, type SchedulerFunctionName } from './paths.js';
import { deadLetterQueue, type QueueWithDeadLetters } from './queue-with-dead-letters.js';
import { lambdaEnvironment } from './scheduler-config.js';

/**
 * The scheduler's five functions, each with its event source and exactly the permissions its
 * code uses, on the resources AdhocScheduler makes (adhoc-scheduler.ts).
 */

/** Size and time limits of each function; the loader's timeout follows its tick budget. */
export const FUNCTION_LIMITS = {
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

export const batchingWindow = (source: EventSourceName): Duration | undefined =>
  EVENT_SOURCES[source].batchingWindowSeconds > 0 ? Duration.seconds(EVENT_SOURCES[source].batchingWindowSeconds) : undefined;

/** The scheduler's resources the functions use. */
export interface SchedulerResources {
  readonly table: dynamodb.Table;
  readonly ingestQueue: QueueWithDeadLetters;
  readonly publicIngestQueue: QueueWithDeadLetters;
  readonly loadingQueue: QueueWithDeadLetters;
  readonly delayQueue: QueueWithDeadLetters;
  readonly bulkChanges: BulkChanges;
  /** The config every function runs with (resource names as CloudFormation references). */
  readonly config: SchedulerConfig;
}

/** What the functions take of AdhocSchedulerProps (see there). */
export interface SchedulerFunctionsProps {
  readonly publicIngestMaxConcurrency?: number;
  readonly emitterMaxConcurrency?: number;
  readonly emitterReservedConcurrency?: number;
  readonly emitterRoleName?: string;
  readonly logRetention?: logs.RetentionDays;
  /** An embedding app's alarm topic, which the emitter may never publish to. */
  readonly alarmTopic?: sns.ITopic;
}

type MakeFunction = (
  name: SchedulerFunctionName,
  fnProps: Omit<NodeFunctionProps, 'entry' | 'environment' | 'logRetention'>,
) => NodeFunction;

/** The five functions in `scope`, and the loader's schedule with the dead-letter queue of its ticks. */
export function createSchedulerFunctions(
  scope: Construct,
  resources: SchedulerResources,
  props: SchedulerFunctionsProps,
  topicPrefix: string,
): {
  readonly functions: Readonly<Record<SchedulerFunctionName, NodeFunction>>;
  readonly loaderSchedule: events.Rule;
  readonly loaderDeadLetterQueue: sqs.Queue;
} {
  const environment = lambdaEnvironment(resources.config);
  const schedulerFunction: MakeFunction = (name, fnProps) =>
    new NodeFunction(scope, `${name[0]?.toUpperCase()}${name.slice(1)}`, {
      entry: schedulerFunctionEntry(name),
      environment,
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      ...fnProps,
    });
  const ingest = ingestFunction(schedulerFunction, resources, props);
  const { loader, loaderSchedule, loaderDeadLetterQueue } = loaderFunction(scope, schedulerFunction, resources);
  const loading = loadingFunction(schedulerFunction, resources);
  const emitter = emitterFunction(schedulerFunction, resources, props, topicPrefix);
  const changes = changesFunction(schedulerFunction, resources);
  // A record a function fails leaves its last error, the item `e#<messageId>`, for the dead-letter tools; no other item.
  for (const fn of [ingest, loading, emitter, changes]) {
    allow(fn, ['dynamodb:BatchWriteItem'], [resources.table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${LAST_ERROR_ID_PREFIX}*`] },
    });
  }
  // The tenant registry's items, `#registry…`, read by key through each function's cache (CachedTenantDirectory).
  for (const fn of [ingest, loader, loading, emitter, changes]) {
    allow(fn, ['dynamodb:GetItem', 'dynamodb:BatchGetItem'], [resources.table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [REGISTRY_ITEM_KEYS] },
    });
  }
  // The due directory's entries, `#due#…`, and no other item: the loader's backfill notes a table's stored events.
  allow(loader, ['dynamodb:BatchWriteItem'], [resources.table.tableArn], {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${DUE_DIRECTORY_ID_PREFIX}*`] },
  });

  return { functions: { ingest, loader, loading, emitter, changes }, loaderSchedule, loaderDeadLetterQueue };
}

function ingestFunction(schedulerFunction: MakeFunction, resources: SchedulerResources, props: SchedulerFunctionsProps): NodeFunction {
  const ingest = schedulerFunction('ingest', {
    description:
      'Validates schedule, cancel and reschedule requests by tenant; records events within quotas, sends near ones to the delay queue',
    ...FUNCTION_LIMITS.ingest,
  });
  consumeQueues(
    ingest,
    'ingest',
    { queue: resources.ingestQueue.queue },
    // The same function on its own event source: a flood of public requests waits in its own
    // queue, and takes at most this many of the function's (and the account's) invocations.
    {
      queue: resources.publicIngestQueue.queue,
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
    [resources.table.tableArn],
  );
  // Near events and notices about rejected requests: the emitter publishes the notices.
  allow(ingest, ['sqs:SendMessage'], [resources.delayQueue.queue.queueArn]);
  resources.bulkChanges.grantStart(ingest);
  return ingest;
}

function loaderFunction(
  scope: Construct,
  schedulerFunction: MakeFunction,
  resources: SchedulerResources,
): { loader: NodeFunction; loaderSchedule: events.Rule; loaderDeadLetterQueue: sqs.Queue } {
  const loader = schedulerFunction('loader', {
    description: 'Every minute: hands stored events coming due to the loading function',
    timeout: Duration.seconds(resources.config.loaderTickBudgetSeconds + LOADER_TIMEOUT_MARGIN_SECONDS),
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
  const loaderDeadLetterQueue = deadLetterQueue(scope, 'LoaderDeadLetters');
  Validations.of(loaderDeadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      "This is a dead-letter queue: that of the loader's EventBridge target, whose dead-letter config names it (the rule looks only at queues' and functions' dead-letter settings); it needs none of its own.",
  });
  const interval = loaderInterval(resources.config.loaderIntervalSeconds);
  const loaderSchedule = new events.Rule(scope, 'LoaderSchedule', {
    schedule: events.Schedule.rate(interval),
    targets: [
      new targets.LambdaFunction(loader.function, {
        // A tick EventBridge cannot hand over (throttled, refused) is tried again while it is
        // younger than one interval: after that the next tick has started and covers it. What
        // is still not handed over is set aside and alarmed, never dropped in silence.
        maxEventAge: interval,
        deadLetterQueue: loaderDeadLetterQueue,
      }),
    ],
  });
  // The tenant index: tenants' stored events, and held ones.
  allow(loader, ['dynamodb:Query'], [`${resources.table.tableArn}/index/${TABLE.tenantIndex}`]);
  // The loader's cursor is an item of the same table, and the only item the loader writes.
  allow(loader, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [resources.table.tableArn], {
    'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [LOADER_CURSOR_ID] },
  });
  // Tenants' pauses, on their quota counters' items: the held events of those no longer paused are
  // sent on; their pause marks are cleared (and, by the backfill, set).
  allow(loader, ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'], [resources.table.tableArn], {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${openEventsCounterId('')}*`] },
  });
  // The due directory's backfill reads a table from before it, a page a tick, once.
  allow(loader, ['dynamodb:Scan'], [resources.table.tableArn]);
  allow(loader, ['sqs:SendMessage'], [resources.loadingQueue.queue.queueArn]);
  return { loader, loaderSchedule, loaderDeadLetterQueue };
}

function loadingFunction(schedulerFunction: MakeFunction, resources: SchedulerResources): NodeFunction {
  const loading = schedulerFunction('loading', {
    description: 'Moves chunks of stored events into the delay queue',
    ...FUNCTION_LIMITS.loading,
  });
  consumeQueues(loading, 'loading', { queue: resources.loadingQueue.queue });
  // Reads a chunk's records and payloads (BatchGetItem), takes them with batched conditional UPDATEs (PartiQL).
  // A chunk's recurring series are taken there too (takeSeries): their occurrences created as
  // ingest creates events (batched conditional INSERTs, their places in the quota and a requeue by
  // UpdateItem, label entries by BatchWriteItem), the series advanced, or ended and its payload
  // item and label entries dropped, and an occurrence past its window cancelled (UpdateItems).
  allow(
    loading,
    ['dynamodb:BatchGetItem', 'dynamodb:PartiQLUpdate', 'dynamodb:PartiQLInsert', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
    [resources.table.tableArn],
  );
  allow(loading, ['sqs:SendMessage'], [resources.delayQueue.queue.queueArn]);
  return loading;
}

function emitterFunction(
  schedulerFunction: MakeFunction,
  resources: SchedulerResources,
  props: SchedulerFunctionsProps,
  topicPrefix: string,
): NodeFunction {
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
  consumeQueues(emitter, 'emitter', { queue: resources.delayQueue.queue, maxConcurrency: emitterMaxConcurrency });
  // Reads a batch's records (BatchGetItem) before the due time; records its ends afterwards
  // with batched conditional UPDATEs (PartiQL). Notices' sent marks are read with BatchGetItem
  // and written by batched conditional INSERTs; open-events counters and carries are
  // UpdateItems; a hold is an UpdateItem with a check of its tenant's pause
  // (ConditionCheckItem) in one transaction; a carry into the table writes a payload item (BatchWriteItem).
  allow(
    emitter,
    [
      'dynamodb:BatchGetItem',
      'dynamodb:PartiQLUpdate',
      'dynamodb:PartiQLInsert',
      'dynamodb:UpdateItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:BatchWriteItem',
    ],
    [resources.table.tableArn],
  );
  // Delays the retry of a failed publish (ChangeMessageVisibility); hands ends it could not record over (SendMessage).
  allow(emitter, ['sqs:ChangeMessageVisibility', 'sqs:SendMessage'], [resources.delayQueue.queue.queueArn]);
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
        ...(props.alarmTopic ? [props.alarmTopic.topicArn] : []),
      ],
    }),
  );
  Validations.of(emitter.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sns:*:*:*]',
    reason:
      "Targets, failure topics and dead-letter topics are clients' topics in their own accounts, named in each request: each client's topic policy decides whether this role may publish. The Allow excludes the scheduler's account (there a topic's own policy must grant this role), and an explicit Deny keeps the scheduler's own topics out of reach.",
  });
  return emitter;
}

function changesFunction(schedulerFunction: MakeFunction, resources: SchedulerResources): NodeFunction {
  const changes = schedulerFunction('changes', {
    description: "Works the pages of jobs over many of a tenant's events: a cancel by label, a resume",
    ...FUNCTION_LIMITS.changes,
  });
  consumeQueues(changes, 'changes', { queue: resources.bulkChanges.queue.queue });
  resources.bulkChanges.grantWork(changes, {
    table: resources.table,
    delayQueue: resources.delayQueue.queue,
    loadingQueue: resources.loadingQueue.queue,
  });
  // A series cancelled by label drops its payload item (a delete in a BatchWriteItem); no other item.
  allow(changes, ['dynamodb:BatchWriteItem'], [resources.table.tableArn], {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${PAYLOAD_ITEM_ID_PREFIX}${ID_PREFIX.series}*`] },
  });
  return changes;
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
