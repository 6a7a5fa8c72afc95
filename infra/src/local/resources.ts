import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, ListSubscriptionsByTopicCommand, SNSClient, SubscribeCommand, UnsubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  inputTopicName,
  LEGACY_BUCKET_INDEX,
  LEGACY_REGISTRY_INDEX,
  type Logger,
  DynamoDbLoaderCursors,
  migrateIndexEntries,
  PUBLIC_TENANT_ID,
  REGISTRY_LISTING_LAYOUT,
  registryListingTableName,
  SQS_MAX_MESSAGE_BYTES,
  TABLE_LAYOUT,
} from '@adhoc-scheduler/shared';
import { DEAD_LETTER_RETENTION_SECONDS, delayQueueMaxReceiveCount, MAX_RECEIVE_COUNT } from '../queues.js';

/** Names of everything the scheduler needs, derived from one prefix so several can share emulators. */
export function resourceNames(prefix: string) {
  return {
    table: `${prefix}-events`,
    inputTopic: inputTopicName(prefix, PUBLIC_TENANT_ID),
    publicIngestQueue: `${prefix}-public-ingest`,
    ingestQueue: `${prefix}-ingest`,
    loadingQueue: `${prefix}-loading`,
    delayQueue: `${prefix}-delay`,
    changesQueue: `${prefix}-changes`,
    deadLetterQueue: `${prefix}-dead-letters`,
  };
}

/** What the local queues' settings (see queues.ts) depend on. */
export interface QueueSettings {
  /** How long a failed or unfinished batch stays hidden before SQS hands it out again. */
  readonly visibilityTimeoutSeconds: number;
  /** How long a failed publish is retried: the delay queue keeps a message through its retries. */
  readonly emitMaxAgeSeconds: number;
}

export interface LocalResources {
  readonly tableName: string;
  readonly inputTopicArn: string;
  /** Each registered tenant's input topic, by tenant id. */
  readonly tenantTopicArns: Readonly<Record<string, string>>;
  /** Where the shared topic delivers: the public tenant's requests wait apart from the registered tenants'. */
  readonly publicIngestQueue: QueueRef;
  /** Where every registered tenant's topic delivers. */
  readonly ingestQueue: QueueRef;
  readonly loadingQueue: QueueRef;
  readonly delayQueue: QueueRef;
  /** Pages of the jobs that change events in bulk (a cancel by label, a tenant's resume). */
  readonly changesQueue: QueueRef;
  readonly deadLetterQueue: QueueRef;
}

export interface QueueRef {
  readonly url: string;
  readonly arn: string;
}

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string>): Promise<QueueRef> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`CreateQueue returned no URL for ${name}`);
  // A queue a persistent data directory already held gets this version's settings.
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`no ARN for queue ${name}`);
  return { url: QueueUrl, arn };
}

/** The attributes the table's keys and indexes name, each once. */
const KEY_ATTRIBUTES = [
  ...new Map(
    [TABLE_LAYOUT.partitionKey, ...TABLE_LAYOUT.indexes.flatMap((index) => [index.partitionKey, index.sortKey])].map(({ name, type }) => [
      name,
      { AttributeName: name, AttributeType: type },
    ]),
  ).values(),
];

function indexDefinition(index: (typeof TABLE_LAYOUT.indexes)[number]) {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
      { AttributeName: index.sortKey.name, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: index.projection },
  };
}

/** Time an index added to or deleted from an existing table may take (DynamoDB Local backfills it at once for a small table). */
const INDEX_BUILD_TIMEOUT_MS = 120_000;

/** Waits until the table's index `name` is active, or, with `gone`, until the table has it no more. */
async function awaitIndex(dynamodb: DynamoDBClient, tableName: string, name: string, until: 'ACTIVE' | 'gone'): Promise<void> {
  const deadline = Date.now() + INDEX_BUILD_TIMEOUT_MS;
  for (;;) {
    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    const status = Table?.GlobalSecondaryIndexes?.find(({ IndexName }) => IndexName === name)?.IndexStatus;
    if (until === 'ACTIVE' ? status === 'ACTIVE' : status === undefined) return;
    if (Date.now() > deadline) throw new Error(`index ${name} of table ${tableName} is still ${status ?? 'missing'}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Adds the indexes a table created by an earlier version lacks (a persistent data directory),
 * one at a time as DynamoDB requires, and waits until each is active: the loader reads them.
 */
async function addMissingIndexes(dynamodb: DynamoDBClient, tableName: string, present: ReadonlySet<string>): Promise<void> {
  for (const index of TABLE_LAYOUT.indexes) {
    if (present.has(index.name)) continue;
    await dynamodb.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: KEY_ATTRIBUTES,
        GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
      }),
    );
    await awaitIndex(dynamodb, tableName, index.name, 'ACTIVE');
  }
}

/**
 * Takes a table an earlier version created off its time-bucket index (LEGACY_BUCKET_INDEX): moves
 * the index's entries into the tenant index (migrateIndexEntries), then deletes it. Nothing of
 * this version runs yet, so every entry moves at once, held events' too.
 */
async function dropLegacyIndex(
  dynamodb: DynamoDBClient,
  tableName: string,
  present: ReadonlySet<string>,
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  if (!present.has(LEGACY_BUCKET_INDEX.name)) return;
  const counts = await migrateIndexEntries(DynamoDBDocumentClient.from(dynamodb), tableName);
  logger.info({ tableName, ...counts }, `table: entries of ${LEGACY_BUCKET_INDEX.name} moved to the tenant index; deleting it`);
  await deleteIndex(dynamodb, tableName, LEGACY_BUCKET_INDEX.name);
}

/**
 * Takes a table an earlier version created off the index it listed the registry in
 * (LEGACY_REGISTRY_INDEX): the listing table replaces it, and the service's start lists there
 * every entry written before (DynamoDbTenantRegistry.listEveryEntry).
 */
async function dropLegacyRegistryIndex(
  dynamodb: DynamoDBClient,
  tableName: string,
  present: ReadonlySet<string>,
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  if (!present.has(LEGACY_REGISTRY_INDEX)) return;
  logger.info({ tableName }, `table: the registry is listed in a table of its own; deleting ${LEGACY_REGISTRY_INDEX}`);
  await deleteIndex(dynamodb, tableName, LEGACY_REGISTRY_INDEX);
}

/** The indexes a table has, read once: the steps that add and drop them each look at indexes none of the others touches. */
async function indexNames(dynamodb: DynamoDBClient, tableName: string): Promise<ReadonlySet<string>> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  return new Set((Table?.GlobalSecondaryIndexes ?? []).flatMap(({ IndexName }) => (IndexName === undefined ? [] : [IndexName])));
}

async function deleteIndex(dynamodb: DynamoDBClient, tableName: string, name: string): Promise<void> {
  await dynamodb.send(new UpdateTableCommand({ TableName: tableName, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: name } }] }));
  await awaitIndex(dynamodb, tableName, name, 'gone');
}

/** The scheduler's table as CreateTable makes it: its key, indexes and billing (TABLE_LAYOUT). */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: KEY_ATTRIBUTES,
    KeySchema: [{ AttributeName: TABLE_LAYOUT.partitionKey.name, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: TABLE_LAYOUT.indexes.map(indexDefinition),
  };
}

async function createTable(dynamodb: DynamoDBClient, tableName: string, logger: Pick<Logger, 'info'>): Promise<void> {
  try {
    await dynamodb.send(new CreateTableCommand(tableDefinition(tableName)));
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE_LAYOUT.ttlAttribute, Enabled: true },
      }),
    );
    // Nothing but this version writes to a table it creates: its due directory needs no backfill.
    await new DynamoDbLoaderCursors(DynamoDBDocumentClient.from(dynamodb), tableName).markDueDirectoryComplete();
  } catch (error) {
    // A persistent data directory already holds it, perhaps as an earlier version created it.
    if (!(error instanceof ResourceInUseException)) throw error;
    const present = await indexNames(dynamodb, tableName);
    await addMissingIndexes(dynamodb, tableName, present);
    await dropLegacyIndex(dynamodb, tableName, present, logger);
    await dropLegacyRegistryIndex(dynamodb, tableName, present, logger);
  }
  await createRegistryListingTable(dynamodb, registryListingTableName(tableName));
}

/** The registry's listing beside the events table (REGISTRY_LISTING_LAYOUT), as the CDK app makes it. */
function registryListingTableDefinition(tableName: string): CreateTableCommandInput {
  const { partitionKey, sortKey } = REGISTRY_LISTING_LAYOUT;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [partitionKey, sortKey].map(({ name, type }) => ({ AttributeName: name, AttributeType: type })),
    KeySchema: [
      { AttributeName: partitionKey.name, KeyType: 'HASH' },
      { AttributeName: sortKey.name, KeyType: 'RANGE' },
    ],
  };
}

async function createRegistryListingTable(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamodb.send(new CreateTableCommand(registryListingTableDefinition(tableName)));
  } catch (error) {
    // A persistent data directory already holds it.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
}

/** Local access to the emulators: the region and the keys they accept. */
export interface EmulatorAccess {
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/**
 * Creates the table, queues and input topics (the shared one and each tenant's) the way the
 * CDK app does, idempotently, so a restart on a persistent data directory finds what it left.
 * All the queues share one dead-letter queue here (the stack gives each its own).
 */
export async function createLocalResources(
  endpoints: { readonly messaging: string; readonly dynamodb: string },
  access: EmulatorAccess,
  prefix: string,
  settings: QueueSettings & { readonly tenantIds: readonly string[]; readonly logger: Pick<Logger, 'info'> },
): Promise<LocalResources> {
  const clients = {
    sns: new SNSClient({ ...access, endpoint: endpoints.messaging }),
    sqs: new SQSClient({ ...access, endpoint: endpoints.messaging }),
    dynamodb: new DynamoDBClient({ ...access, endpoint: endpoints.dynamodb }),
  };
  try {
    return await createAll(clients, prefix, settings);
  } finally {
    for (const client of Object.values(clients)) client.destroy();
  }
}

/**
 * An input topic, subscribed to its ingest queue (`ingestQueueArn`) and to none of the others
 * (`otherIngestQueueArns`: a data directory of an earlier version may hold such a subscription).
 * Idempotent: onboarding a tenant while the service runs, and every start, call it.
 */
export async function ensureInputTopic(
  sns: SNSClient,
  topicName: string,
  ingestQueueArn: string,
  otherIngestQueueArns: readonly string[] = [],
): Promise<string> {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: topicName }));
  if (!TopicArn) throw new Error(`CreateTopic returned no ARN for ${topicName}`);
  const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
  if (!Subscriptions.some((subscription) => subscription.Endpoint === ingestQueueArn)) {
    // Enveloped (not raw) delivery: ingest reads the topic (the tenant) and MessageId from it.
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: ingestQueueArn }));
  }
  for (const { Endpoint, SubscriptionArn } of Subscriptions) {
    if (Endpoint !== undefined && otherIngestQueueArns.includes(Endpoint)) await sns.send(new UnsubscribeCommand({ SubscriptionArn }));
  }
  return TopicArn;
}

async function createAll(
  clients: { readonly sns: SNSClient; readonly sqs: SQSClient; readonly dynamodb: DynamoDBClient },
  prefix: string,
  settings: QueueSettings & { readonly tenantIds: readonly string[]; readonly logger: Pick<Logger, 'info'> },
): Promise<LocalResources> {
  const names = resourceNames(prefix);
  // Every queue takes the largest message the senders size their batches to, as on AWS.
  const size = { MaximumMessageSize: String(SQS_MAX_MESSAGE_BYTES) };
  const retention = { MessageRetentionPeriod: String(DEAD_LETTER_RETENTION_SECONDS) };
  const deadLetterQueue = await createQueue(clients.sqs, names.deadLetterQueue, { ...size, ...retention });
  const queueAttributes = (maxReceiveCount: number) => ({
    ...size,
    VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterQueue.arn, maxReceiveCount }),
  });
  const [publicIngestQueue, ingestQueue, loadingQueue, delayQueue, changesQueue] = await Promise.all([
    createQueue(clients.sqs, names.publicIngestQueue, queueAttributes(MAX_RECEIVE_COUNT.local)),
    createQueue(clients.sqs, names.ingestQueue, queueAttributes(MAX_RECEIVE_COUNT.local)),
    createQueue(clients.sqs, names.loadingQueue, queueAttributes(MAX_RECEIVE_COUNT.local)),
    createQueue(clients.sqs, names.delayQueue, { ...queueAttributes(delayQueueMaxReceiveCount(settings.emitMaxAgeSeconds)), ...retention }),
    createQueue(clients.sqs, names.changesQueue, queueAttributes(MAX_RECEIVE_COUNT.local)),
  ]);
  await createTable(clients.dynamodb, names.table, settings.logger);

  // The shared topic has its own queue, so that a flood there does not hold up the registered tenants.
  const inputTopicArn = await ensureInputTopic(clients.sns, names.inputTopic, publicIngestQueue.arn, [ingestQueue.arn]);
  const tenantTopicArns: Record<string, string> = {};
  for (const id of settings.tenantIds)
    tenantTopicArns[id] = await ensureInputTopic(clients.sns, inputTopicName(prefix, id), ingestQueue.arn);
  return {
    tableName: names.table,
    inputTopicArn,
    tenantTopicArns,
    publicIngestQueue,
    ingestQueue,
    loadingQueue,
    delayQueue,
    changesQueue,
    deadLetterQueue,
  };
}
