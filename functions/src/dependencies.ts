import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  createLogger,
  DynamoDbBulkCancelJobs,
  DynamoDbDueDirectory,
  DynamoDbDueDirectoryBackfill,
  DynamoDbDueIndex,
  DynamoDbEventStore,
  DynamoDbLabelledEvents,
  DynamoDbLastErrors,
  DynamoDbLoaderCursors,
  DynamoDbNoticeMarks,
  DynamoDbRefusalLog,
  DynamoDbSeriesStore,
  DynamoDbTenantPauses,
  EmfMetrics,
  EndWriter,
  noMetrics,
  PausedTenants,
  NoticePace,
  PublishWindow,
  SnsTopicPublisher,
  SqsChangesQueue,
  SqsDelayQueue,
  SqsLoadingQueue,
  SQS_MAX_WAIT_SECONDS,
  systemClock,
  CachedTenantDirectory,
  DynamoDbTenantRegistry,
  type Clock,
  type EndJournal,
  type Logger,
  type SchedulerConfig,
  type SchedulerMetrics,
  type TenantDirectory,
} from '@adhoc-scheduler/shared';

/**
 * How every function gets its dependencies: the SDK clients, built once per process at the
 * entry point, and the adapters over them. The same wiring on Lambda and locally.
 */

/** Everything a handler needs, from config and clients: the same wiring on Lambda and locally. */
export function createDependencies(
  functionName: string,
  config: SchedulerConfig,
  clients: AwsClients,
  overrides: {
    readonly logger?: Logger;
    readonly metrics?: SchedulerMetrics;
    readonly clock?: Clock;
    readonly tenants?: TenantDirectory;
    /** Where the emitter keeps ends until recorded (the local service on disk). */
    readonly endJournal?: EndJournal;
  } = {},
) {
  const clock = overrides.clock ?? systemClock;
  const store = new DynamoDbEventStore(clients.dynamodb, config.tableName, {
    batchWrites: config.dynamodbBatchWrites,
    clock,
    changeWriteTimeoutMs: config.changeWriteTimeoutMs,
    indexQueuedEvents: config.indexQueuedEvents,
    shardCount: config.shardCount,
    retentionSeconds: config.retentionSeconds,
  });
  const delayQueue = new SqsDelayQueue(clients.sqs, config.delayQueueUrl);
  const logger = overrides.logger ?? createLogger(config.logLevel, { fn: functionName });
  const metrics = overrides.metrics ?? (config.metricsEnabled ? new EmfMetrics(functionName) : noMetrics);
  const pauses = new DynamoDbTenantPauses(clients.dynamodb, config.tableName);
  const dueDirectory = new DynamoDbDueDirectory(clients.dynamodb, config.tableName, config.retentionSeconds);
  return {
    config,
    // The registry is data in the table, read through a cache (see CachedTenantDirectory).
    tenants:
      overrides.tenants ??
      new CachedTenantDirectory(new DynamoDbTenantRegistry(clients.dynamodb, config.tableName, clock), {
        topicPrefix: config.topicPrefix,
        maxAgeMs: config.registryMaxAgeMs,
        clock,
        logger,
      }),
    store,
    series: new DynamoDbSeriesStore(clients.dynamodb, config.tableName, { retentionSeconds: config.retentionSeconds }),
    dueIndex: new DynamoDbDueIndex(clients.dynamodb, config.tableName),
    dueDirectory,
    backfill: new DynamoDbDueDirectoryBackfill(clients.dynamodb, config.tableName, dueDirectory, clock),
    cursors: new DynamoDbLoaderCursors(clients.dynamodb, config.tableName),
    notices: new DynamoDbNoticeMarks(clients.dynamodb, config.tableName, config.dynamodbBatchWrites),
    delayQueue,
    loadingQueue: new SqsLoadingQueue(clients.sqs, config.loadingQueueUrl),
    labelled: new DynamoDbLabelledEvents(clients.dynamodb, config.tableName, config.shardCount),
    jobs: new DynamoDbBulkCancelJobs(clients.dynamodb, config.tableName),
    changesQueue: new SqsChangesQueue(clients.sqs, config.changesQueueUrl),
    refusals: new DynamoDbRefusalLog(clients.dynamodb, config.tableName),
    pauses,
    pausedTenants: new PausedTenants(pauses, clock),
    publisher: new SnsTopicPublisher(clients.sns),
    endWriter: new EndWriter(
      { store, delayQueue, logger, metrics, ...(overrides.endJournal ? { journal: overrides.endJournal } : {}) },
      { lingerMs: config.emitterEndsLingerMs },
    ),
    publishWindow: new PublishWindow(config.emitterMaxUnrecordedEnds),
    noticePace: new NoticePace(),
    // Each record a function fails leaves its error by message id, for the dead-letter tools.
    failureLog: { lastErrors: new DynamoDbLastErrors(clients.dynamodb, config.tableName), fn: functionName, clock },
    clock,
    logger,
    metrics,
  };
}

export type Dependencies = ReturnType<typeof createDependencies>;

/** The SDK clients every function uses; built once per process, at the entry point. */
export interface AwsClients {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBDocumentClient;
}

/** Static keys for the local emulators; on AWS the default provider chain supplies the role's. */
export interface ClientCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * On Lambda one invocation runs at a time, and the SDK's default of 50 sockets per client is
 * plenty. The local runtime runs every invocation in one process, so it passes its own access
 * (the emulators' keys, and sockets for all its concurrent invocations).
 */
export interface LocalClientOptions {
  readonly credentials: ClientCredentials;
  readonly maxSockets: number;
}

/**
 * How long one request may go without an answer before the SDK gives up on it and retries: a
 * hung call must not hold a batch past its visibility timeout. An SQS long poll waits its own
 * time first.
 */
const REQUEST_TIMEOUT_MS = { sns: 5_000, sqs: (SQS_MAX_WAIT_SECONDS + 5) * 1000, dynamodb: 5_000 } as const;
const CONNECTION_TIMEOUT_MS = 2_000;

export function createAwsClients(config: SchedulerConfig, local?: LocalClientOptions): AwsClients {
  const base = { region: config.region, ...(local ? { credentials: local.credentials } : {}) };
  const requestHandler = (requestTimeout: number) => ({
    requestTimeout,
    // Without it the SDK only warns when the timeout passes, and the call goes on waiting.
    throwOnRequestTimeout: true,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    ...(local ? { httpAgent: { maxSockets: local.maxSockets } } : {}),
  });
  return {
    sns: withoutCallLogging(
      new SNSClient({ ...base, endpoint: config.messagingEndpoint, requestHandler: requestHandler(REQUEST_TIMEOUT_MS.sns) }),
    ),
    sqs: withoutCallLogging(
      new SQSClient({ ...base, endpoint: config.messagingEndpoint, requestHandler: requestHandler(REQUEST_TIMEOUT_MS.sqs) }),
    ),
    dynamodb: DynamoDBDocumentClient.from(
      withoutCallLogging(
        new DynamoDBClient({ ...base, endpoint: config.dynamodbEndpoint, requestHandler: requestHandler(REQUEST_TIMEOUT_MS.dynamodb) }),
      ),
      { marshallOptions: { removeUndefinedValues: true } },
    ),
  };
}

/** The name under which every SDK client logs each call it makes (@aws-sdk/core's loggerMiddleware). */
const SDK_CALL_LOGGING_MIDDLEWARE = 'loggerMiddleware';

/**
 * Takes the SDK's call logging off a client. The clients are given no logger, yet the SDK's
 * default one has an `info` that does nothing, so its logging step still copied every request
 * and answer through their schemas' sensitive-data filters, only to drop the copies: about 5 %
 * of the local service's CPU under a flood (a profile of `loadtest neighbour`), and billed
 * Lambda time on AWS. The functions log what they do with pino.
 */
function withoutCallLogging<T extends { readonly middlewareStack: { remove(name: string): boolean } }>(client: T): T {
  client.middlewareStack.remove(SDK_CALL_LOGGING_MIDDLEWARE);
  return client;
}
