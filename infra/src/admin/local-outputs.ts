import { readFile, stat } from 'node:fs/promises';
import { DeleteTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { inputTopicName, type SchedulerTopics } from '@adhoc-scheduler/shared';
import { ensureInputTopic } from '../local/resources.js';
import { LOCAL_CREDENTIALS, type LocalOutputs } from '../local/runtime.js';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { AdminError } from './errors.js';
import { inputTopicArnOf, schedulerTopicsOf, topicPrefixOf } from './topic-arns.js';

/** What the admin commands use of the outputs file scripts/start writes. */
export type LocalServiceOutputs = Pick<
  LocalOutputs,
  'region' | 'endpoint' | 'dynamodbEndpoint' | 'tableName' | 'ingestQueueUrl' | 'inputTopicArn'
> &
  // Absent from the files of older versions: the tenant index's shard count (they used the
  // default), the changes queue (bulk changes did not exist) and whether near-path events are
  // indexed (they were not by default).
  Partial<Pick<LocalOutputs, 'shardCount' | 'changesQueueUrl' | 'indexQueuedEvents'>>;

const USED_OUTPUTS: readonly (keyof LocalServiceOutputs)[] = [
  'region',
  'endpoint',
  'dynamodbEndpoint',
  'tableName',
  'ingestQueueUrl',
  'inputTopicArn',
];

/**
 * The outputs files read, by path, with the version they were read at: the file lists every
 * tenant's input topic (megabytes with 100,000 tenants), and a command reads it more than once.
 */
const outputsRead = new Map<string, { readonly version: string; readonly outputs: LocalServiceOutputs }>();

export async function readLocalOutputs(path: string): Promise<LocalServiceOutputs> {
  let text: string;
  let version: string;
  try {
    // A rewrite (the service's start, tenant add) changes the inode, the size or the time.
    const stats = await stat(path);
    version = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    const read = outputsRead.get(path);
    if (read?.version === version) return read.outputs;
    text = await readFile(path, 'utf8');
  } catch {
    throw new AdminError(
      `${path} not found: the local service is not running. Start it with scripts/start (or name its outputs with --outputs FILE).`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new AdminError(`${path} is not JSON: ${describeError(error)}`);
  }
  const missing = USED_OUTPUTS.filter((key) => typeof (parsed as Partial<Record<string, unknown>> | null)?.[key] !== 'string');
  if (missing.length > 0) throw new AdminError(`${path} is not an outputs file of scripts/start (it has no ${missing.join(', ')})`);
  const outputs = parsed as LocalServiceOutputs;
  outputsRead.set(path, { version, outputs });
  return outputs;
}

/**
 * The outputs of the local service, once it answers: a service killed with kill -9 leaves its
 * outputs file behind. Asks for the ingest queue's ARN, which onboarding needs; fails with an
 * AdminError saying to start the service when the file is missing or nothing answers there.
 */
export async function readRunningLocalOutputs(
  outputsPath: string,
): Promise<{ readonly outputs: LocalServiceOutputs; readonly ingestQueueArn: string }> {
  const outputs = await readLocalOutputs(outputsPath);
  const sqs = new SQSClient({ region: outputs.region, endpoint: outputs.endpoint, credentials: LOCAL_CREDENTIALS });
  let ingestQueueArn: string | undefined;
  try {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: outputs.ingestQueueUrl, AttributeNames: ['QueueArn'] }),
    );
    ingestQueueArn = Attributes?.QueueArn;
  } catch (error) {
    throw new AdminError(
      `the local service of ${outputsPath} is not running (${outputs.endpoint}: ${describeError(error)}). Start it with scripts/start, then run this again.`,
    );
  } finally {
    sqs.destroy();
  }
  if (!ingestQueueArn) throw new AdminError(`the local service's ingest queue ${outputs.ingestQueueUrl} has no ARN`);
  return { outputs, ingestQueueArn };
}

/** The running local service, as onboarding needs it: its SNS endpoint and its ingest queue. */
export class LocalService {
  private constructor(
    private readonly outputs: LocalServiceOutputs,
    private readonly sns: SNSClient,
    private readonly ingestQueueArn: string,
  ) {}

  /** Fails with an AdminError saying to start the service when its outputs are missing or nothing answers there. */
  static async connect(outputsPath: string): Promise<LocalService> {
    const { outputs, ingestQueueArn } = await readRunningLocalOutputs(outputsPath);
    return new LocalService(
      outputs,
      new SNSClient({ region: outputs.region, endpoint: outputs.endpoint, credentials: LOCAL_CREDENTIALS }),
      ingestQueueArn,
    );
  }

  /** The region of the service's topics. */
  get region(): string {
    return this.outputs.region;
  }

  /** Its own topics, which no tenant's dead-letter topic may be. */
  get schedulerTopics(): SchedulerTopics {
    return schedulerTopicsOf(this.outputs.inputTopicArn);
  }

  /** Its SNS and SQS endpoint. */
  get endpoint(): string {
    return this.outputs.endpoint;
  }

  /** Creates the tenant's input topic subscribed to the ingest queue (idempotent); its ARN. */
  async ensureTenantTopic(tenantId: string): Promise<string> {
    const name = inputTopicName(topicPrefixOf(this.outputs.inputTopicArn), tenantId);
    try {
      return await ensureInputTopic(this.sns, name, this.ingestQueueArn);
    } catch (error) {
      throw new AdminError(`could not create the input topic ${name} at ${this.outputs.endpoint}: ${describeError(error)}`);
    }
  }

  /** Deletes the tenant's input topic, and with it its subscription (idempotent, as SNS's DeleteTopic); its ARN. */
  async deleteTenantTopic(tenantId: string): Promise<string> {
    const arn = inputTopicArnOf(this.outputs.inputTopicArn, tenantId);
    try {
      await this.sns.send(new DeleteTopicCommand({ TopicArn: arn }));
    } catch (error) {
      throw new AdminError(`could not delete the input topic ${arn} at ${this.outputs.endpoint}: ${describeError(error)}`);
    }
    return arn;
  }

  close(): void {
    this.sns.destroy();
  }
}
