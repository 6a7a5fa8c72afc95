import { readFile } from 'node:fs/promises';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { SNSClient, type SNSClientConfig } from '@aws-sdk/client-sns';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DEFAULTS,
  DynamoDbEventListing,
  DynamoDbSeriesListing,
  DynamoDbSeriesStore,
  PageTokenError,
  PUBLIC_TENANT_ID,
  type EventListing,
  type SeriesListing,
  type SeriesStore,
} from '@adhoc-scheduler/shared';
import { LOCAL_CREDENTIALS } from '../local/runtime.js';
import type { LocationValues } from './arguments.js';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { AdminError, isServiceAnswer, AdminUsageError } from './errors.js';
import { inputTopicArnOf } from './topic-arns.js';
import { readRunningLocalOutputs } from './local-outputs.js';
import { DEAD_LETTER_SOURCES, queueOutputKeys, SCHEDULER_OUTPUTS, type DeadLetterSource } from '../cdk/stack-outputs.js';

/** The scheduler a command reads: the local service (its outputs file), or a deployed stack. */
export type Location =
  | { readonly kind: 'local'; readonly outputs: string }
  | {
      readonly kind: 'deployed';
      readonly stackOutputs: string | undefined;
      readonly table: string | undefined;
      readonly region: string | undefined;
      readonly profile: string | undefined;
    };

export function locationOf(values: LocationValues, command: string): Location {
  const stackOutputs = values['stack-outputs'];
  const { table, region, profile, outputs } = values;
  if (stackOutputs === undefined && table === undefined) {
    const stray = region !== undefined ? '--region' : profile !== undefined ? '--profile' : undefined;
    if (stray) throw new AdminUsageError(`${stray} is for a deployed stack: name it with --stack-outputs FILE or --table NAME`, command);
    return { kind: 'local', outputs: outputs ?? LOCAL_SERVICE_FILES.outputs };
  }
  if (outputs !== undefined)
    throw new AdminUsageError('--outputs names the local service, --stack-outputs and --table a deployed stack: give one', command);
  if (stackOutputs !== undefined && table !== undefined) throw new AdminUsageError('give --stack-outputs or --table, not both', command);
  return { kind: 'deployed', stackOutputs, table, region, profile };
}

export interface StackOutputs {
  readonly tableName: string;
  readonly region: string | undefined;
  /** The stack's SCHEDULER_SHARD_COUNT (absent from stacks deployed before the tenant index). */
  readonly shardCount: number | undefined;
  /** The stack's SCHEDULER_INDEX_QUEUED_EVENTS (absent from stacks deployed before it was on by default). */
  readonly indexQueuedEvents: boolean | undefined;
  /** The shared input topic (the public tenant's). */
  readonly inputTopicArn: string | undefined;
  /** Where tenants' input topics deliver, and where SNS sets aside what they could not (absent before tenants were made at runtime). */
  readonly ingestQueueArn: string | undefined;
  readonly inputDeadLetterQueueArn: string | undefined;
  /** The stack's alarm topic, one of its own that no tenant may name. */
  readonly alarmTopicArn: string | undefined;
  /** Where a job that changes events in bulk starts. */
  readonly changesQueueUrl: string | undefined;
  /** Each queue's URL and its dead-letter queue's, where the stack outputs them (see queueOutputKeys). */
  readonly queues: Readonly<Partial<Record<DeadLetterSource, { readonly queueUrl: string; readonly deadLetterQueueUrl: string }>>>;
}

/** The scheduler stack's outputs in `cdk deploy --outputs-file` JSON ({stack: {output: value}}). */
export async function readStackOutputs(path: string): Promise<StackOutputs> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new AdminError(`cannot read the stack outputs ${path} (${describeError(error)}): cdk deploy --outputs-file writes them`);
  }
  const stacks = Object.entries((parsed ?? {}) as Record<string, Partial<Record<string, unknown>> | null>).flatMap(([stack, outputs]) => {
    const text = (key: string) => {
      const value = outputs?.[key];
      return typeof value === 'string' ? value : undefined;
    };
    const tableName = text(SCHEDULER_OUTPUTS.tableName);
    const queues = DEAD_LETTER_SOURCES.flatMap((source) => {
      const keys = queueOutputKeys(source);
      const [queueUrl, deadLetterQueueUrl] = [text(keys.queueUrl), text(keys.deadLetterQueueUrl)];
      return queueUrl === undefined || deadLetterQueueUrl === undefined ? [] : [[source, { queueUrl, deadLetterQueueUrl }] as const];
    });
    return tableName === undefined
      ? []
      : [
          {
            stack,
            tableName,
            region: text(SCHEDULER_OUTPUTS.region),
            inputTopicArn: text(SCHEDULER_OUTPUTS.inputTopicArn),
            ingestQueueArn: text(SCHEDULER_OUTPUTS.ingestQueueArn),
            inputDeadLetterQueueArn: text(SCHEDULER_OUTPUTS.inputDeadLetterQueueArn),
            alarmTopicArn: text(SCHEDULER_OUTPUTS.alarmTopicArn),
            shardCount: text(SCHEDULER_OUTPUTS.shardCount) === undefined ? undefined : Number(text(SCHEDULER_OUTPUTS.shardCount)),
            indexQueuedEvents:
              text(SCHEDULER_OUTPUTS.indexQueuedEvents) === undefined ? undefined : text(SCHEDULER_OUTPUTS.indexQueuedEvents) === 'true',
            changesQueueUrl: text(SCHEDULER_OUTPUTS.changesQueueUrl),
            queues: Object.fromEntries(queues),
          },
        ];
  });
  const [stack, ...others] = stacks;
  if (stack === undefined)
    throw new AdminError(`${path} has no stack with a ${SCHEDULER_OUTPUTS.tableName} output: is it the scheduler stack's outputs?`);
  if (others.length > 0)
    throw new AdminError(
      `${path} holds several scheduler stacks (${stacks.map((found) => found.stack).join(', ')}): name the table with --table NAME --region R`,
    );
  return stack;
}

/** The event table of a location: its name, how to reach it, and how to name it in messages. */
interface TableAccess {
  readonly tableName: string;
  /** The scheduler's shard count, where its outputs say it. */
  readonly shardCount: number | undefined;
  /** Whether the scheduler indexes near-path events, where its outputs say it. */
  readonly indexQueuedEvents: boolean | undefined;
  readonly client: DynamoDBClientConfig;
  readonly description: string;
  /** What to try when it cannot be read: for the local service, only when nothing answered. */
  readonly hint: (error: unknown) => string;
}

async function tableAccess(location: Location): Promise<TableAccess> {
  if (location.kind === 'local') {
    // Said as onboarding says it when a killed service left its outputs file behind.
    const { outputs } = await readRunningLocalOutputs(location.outputs);
    return {
      tableName: outputs.tableName,
      shardCount: outputs.shardCount,
      indexQueuedEvents: outputs.indexQueuedEvents,
      client: { region: outputs.region, endpoint: outputs.dynamodbEndpoint, credentials: LOCAL_CREDENTIALS },
      description: `table ${outputs.tableName} of the local service (${outputs.dynamodbEndpoint})`,
      hint: (error) => (isServiceAnswer(error) ? '' : ' Is the local service running? Start it with scripts/start.'),
    };
  }
  const stack = location.stackOutputs === undefined ? undefined : await readStackOutputs(location.stackOutputs);
  const tableName = location.table ?? stack?.tableName ?? '';
  // Unset region and profile leave both to the SDK's default chain (AWS_REGION, AWS_PROFILE, ~/.aws).
  const region = location.region ?? stack?.region;
  return {
    tableName,
    shardCount: stack?.shardCount,
    indexQueuedEvents: stack?.indexQueuedEvents,
    client: { ...(region ? { region } : {}), ...(location.profile ? { profile: location.profile } : {}) },
    description: `table ${tableName}${region ? ` in ${region}` : ''}`,
    hint: () => ' Check the region (--region), the credentials (--profile) and that they may read the table.',
  };
}

/** What a listing leaves out at a location: open near-path events, when its scheduler does not index them. */
export interface ListingScope {
  /** False when its outputs say SCHEDULER_INDEX_QUEUED_EVENTS is off, or do not say (versions before it was on by default). */
  readonly listsQueuedEvents: boolean;
}

/**
 * Runs `use` with the location's event records; read failures become an AdminError naming the
 * table. A listing reads each shard of the tenant index: as many as `shardCount` says, else the
 * location's outputs, else the default.
 */
export async function withEventListing<T>(
  location: Location,
  use: (records: EventListing, scope: ListingScope) => Promise<T>,
  shardCount?: number,
): Promise<T> {
  return withTable(location, (client, tableName, access) =>
    use(new DynamoDbEventListing(client, tableName, { shardCount: shardCount ?? access.shardCount ?? DEFAULTS.shardCount }), {
      listsQueuedEvents: access.indexQueuedEvents === true,
    }),
  );
}

/**
 * Runs `use` with the location's series: their records, and their listing (reading each shard of
 * the tenant index, as withEventListing says); read failures become an AdminError naming the table.
 */
export async function withSeriesListing<T>(
  location: Location,
  use: (listing: SeriesListing, records: Pick<SeriesStore, 'read'>) => Promise<T>,
  shardCount?: number,
): Promise<T> {
  return withTable(location, (client, tableName, access) =>
    use(
      new DynamoDbSeriesListing(client, tableName, { shardCount: shardCount ?? access.shardCount ?? DEFAULTS.shardCount }),
      new DynamoDbSeriesStore(client, tableName),
    ),
  );
}

/** Runs `use` with a client of the location's table; failures become an AdminError naming the table. */
export async function withTable<T>(
  location: Location,
  use: (client: DynamoDBDocumentClient, tableName: string, access: Pick<TableAccess, 'shardCount' | 'indexQueuedEvents'>) => Promise<T>,
): Promise<T> {
  const access = await tableAccess(location);
  const client = new DynamoDBClient(access.client);
  try {
    return await use(DynamoDBDocumentClient.from(client), access.tableName, access);
  } catch (error) {
    // A page token no listing printed is the caller's mistake, not the table's: its caller says so.
    if (error instanceof AdminError || error instanceof AdminUsageError || error instanceof PageTokenError) throw error;
    throw new AdminError(`cannot read the ${access.description}: ${describeError(error)}.${access.hint(error)}`);
  } finally {
    client.destroy();
  }
}

/**
 * Runs `use` with a client of the location's changes queue, where a job that changes events in
 * bulk starts: named by the local service's outputs, or by a deployed stack's (not by --table).
 */
export async function withChangesQueue<T>(
  location: Location,
  command: string,
  use: (sqs: SQSClient, queueUrl: string) => Promise<T>,
): Promise<T> {
  let queueUrl: string | undefined;
  let client: ConstructorParameters<typeof SQSClient>[0];
  if (location.kind === 'local') {
    const { outputs } = await readRunningLocalOutputs(location.outputs);
    queueUrl = outputs.changesQueueUrl;
    if (queueUrl === undefined)
      throw new AdminError(`${location.outputs} names no changes queue: start the local service again with this version`);
    client = { region: outputs.region, endpoint: outputs.endpoint, credentials: LOCAL_CREDENTIALS };
  } else {
    if (location.stackOutputs === undefined)
      throw new AdminUsageError(`${command} starts a job on the stack's changes queue: name the stack with --stack-outputs FILE`, command);
    const stack = await readStackOutputs(location.stackOutputs);
    queueUrl = stack.changesQueueUrl;
    if (queueUrl === undefined)
      throw new AdminError(`${location.stackOutputs} has no ${SCHEDULER_OUTPUTS.changesQueueUrl} output: deploy this version of the stack`);
    const region = location.region ?? stack.region;
    client = { ...(region ? { region } : {}), ...(location.profile ? { profile: location.profile } : {}) };
  }
  const sqs = new SQSClient(client);
  try {
    return await use(sqs, queueUrl);
  } finally {
    sqs.destroy();
  }
}

/** How to reach the location's SNS and SQS (the local service's endpoint, or the stack's region), and its shared input topic. */
export async function messagingAccess(
  location: Location,
): Promise<{ readonly client: SNSClientConfig & SQSClientConfig; readonly publicTopicArn: string | undefined }> {
  if (location.kind === 'local') {
    const { outputs } = await readRunningLocalOutputs(location.outputs);
    return {
      client: { region: outputs.region, endpoint: outputs.endpoint, credentials: LOCAL_CREDENTIALS },
      publicTopicArn: outputs.inputTopicArn,
    };
  }
  return {
    // The topics and queues are in the table's region.
    client: (await tableAccess(location)).client,
    publicTopicArn: location.stackOutputs === undefined ? undefined : (await readStackOutputs(location.stackOutputs)).inputTopicArn,
  };
}

/**
 * Runs `use` with an SNS client and the input topic of `tenant` at the location (the shared one
 * for the public tenant), as a client publishes there; failures become an AdminError naming it.
 */
export async function withInputTopic<T>(
  location: Location,
  tenant: string,
  use: (sns: SNSClient, topicArn: string) => Promise<T>,
): Promise<T> {
  const { client, publicTopicArn } = await messagingAccess(location);
  if (publicTopicArn === undefined)
    throw new AdminError('the input topics are unknown: name the stack with --stack-outputs FILE (its InputTopicArn output)');
  const topicArn = tenant === PUBLIC_TENANT_ID ? publicTopicArn : inputTopicArnOf(publicTopicArn, tenant);
  const sns = new SNSClient(client);
  try {
    return await use(sns, topicArn);
  } catch (error) {
    if (error instanceof AdminError || error instanceof AdminUsageError) throw error;
    throw new AdminError(`cannot publish to ${topicArn}: ${describeError(error)}`);
  } finally {
    sns.destroy();
  }
}
