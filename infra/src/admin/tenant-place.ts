import {
  CreateTopicCommand,
  DeleteTopicCommand,
  ListSubscriptionsByTopicCommand,
  ListTagsForResourceCommand,
  SetTopicAttributesCommand,
  SNSClient,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import {
  DynamoDbTenantRegistry,
  inputTopicName,
  mayPublishTo,
  noRegistryChanges,
  registryChanges,
  systemClock,
  type RegistryScope,
  type TenantEntry,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { describeError } from '@adhoc-scheduler/shared/describe-error';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { SCHEDULER_OUTPUTS, STACK_TENANT_TOPIC_TAG } from '../cdk/stack-outputs.js';
import { addTenantInputTopics, removeTenantInputTopic } from '../local/outputs-file.js';
import { tenantTopicPolicy } from '../tenant-topic-policy.js';
import { AdminError, AdminUsageError } from './errors.js';
import { LocalService } from './local-outputs.js';
import { messagingAccess, readStackOutputs, withTable, type Location, type StackOutputs } from './location.js';
import { readRegistry, writeRegistry } from './registry.js';
import { inputTopicArnOf, schedulerTopicsOf, topicPrefixOf } from './topic-arns.js';
import { asTenant } from './tenant-view.js';

/**
 * Where tenants are registered and their input topics made: the local service (its tenants file,
 * applied to its table, and fauxqs) or a deployed stack (its table, and SNS in its account).
 * tenant add, update, remove, import and export run the same steps on either.
 */
export interface TenantPlace {
  /** Where the events and the rest of the tenants' state are. */
  readonly location: Location;
  /** The registry as messages name it: the tenants file's path, or the stack's table. */
  readonly registryName: string;
  readRegistry(): Promise<TenantsDocument>;
  /** Writes what turns `before` (as readRegistry gave it) into `after`. */
  writeRegistry(before: TenantsDocument, after: TenantsDocument): Promise<void>;
  /** What a registry's dead-letter topics are checked against: the region, and the scheduler's own topics. */
  scope(): Promise<RegistryScope>;
  /** Creates (or finds) the tenant's input topic, taking publishes from its accounts only, subscribed to the ingest queue; its ARN. */
  ensureTenantTopic(entry: TenantEntry): Promise<string>;
  /** Deletes the tenant's input topic and its subscription (idempotent); its ARN. */
  deleteTenantTopic(id: string): Promise<string>;
  /** Told once the registry names the tenants of these topics, or no longer names a tenant. */
  topicsRegistered(topicArns: Readonly<Record<string, string>>): Promise<void>;
  topicDeleted(id: string): Promise<void>;
  /** A warning when the tenant may not target the place's topics, where all are in one account (the local service's). */
  targetWarning(entry: TenantEntry): Promise<string | undefined>;
  close(): void;
}

/** The local service's tenants: its tenants file (applied to its table), its fauxqs topics, its outputs file. */
export class LocalTenants implements TenantPlace {
  readonly location: Location;
  private service: Promise<LocalService> | undefined;

  constructor(
    readonly tenantsPath: string,
    private readonly outputsPath: string,
  ) {
    this.location = { kind: 'local', outputs: outputsPath };
  }

  get registryName(): string {
    return this.tenantsPath;
  }

  async readRegistry(): Promise<TenantsDocument> {
    return readRegistry(this.tenantsPath);
  }

  async writeRegistry(before: TenantsDocument, after: TenantsDocument): Promise<void> {
    await writeRegistry(this.tenantsPath, this.location, before, after);
  }

  async scope(): Promise<RegistryScope> {
    const service = await this.connected();
    return { region: service.region, schedulerTopics: service.schedulerTopics };
  }

  async ensureTenantTopic(entry: TenantEntry): Promise<string> {
    return (await this.connected()).ensureTenantTopic(entry.id);
  }

  async deleteTenantTopic(id: string): Promise<string> {
    return (await this.connected()).deleteTenantTopic(id);
  }

  // The outputs list every tenant's input topic, as they would after a restart.
  async topicsRegistered(topicArns: Readonly<Record<string, string>>): Promise<void> {
    await addTenantInputTopics(this.outputsPath, (await this.connected()).endpoint, topicArns);
  }

  async topicDeleted(id: string): Promise<void> {
    await removeTenantInputTopic(this.outputsPath, (await this.connected()).endpoint, id);
  }

  async targetWarning(entry: TenantEntry): Promise<string | undefined> {
    const service = await this.connected();
    const account = service.schedulerTopics.accountId;
    if (mayPublishTo(asTenant(entry), `arn:aws:sns:${service.region}:${account}:any`)) return undefined;
    return (
      `Warning: tenant ${entry.id} may not target the local service's topics (account ${account}): every request naming one is refused ` +
      `(TARGET_NOT_ALLOWED, FAILURE_TOPIC_NOT_ALLOWED). Add --target-account ${account}.`
    );
  }

  close(): void {
    void this.service?.then((service) => service.close()).catch(() => undefined);
  }

  /** The running service, connected once: a service that is not running stops a command before it writes anything. */
  private connected(): Promise<LocalService> {
    this.service ??= LocalService.connect(this.outputsPath);
    return this.service;
  }
}

/** A deployed stack, as an operator's code names it: its outputs file, and optionally the region and credentials profile. */
export interface StackAccess {
  readonly stackOutputs: string;
  readonly region?: string | undefined;
  readonly profile?: string | undefined;
}

/** What a deployed stack's tenants need of its outputs (cdk deploy --outputs-file). */
interface StackTenantOutputs {
  readonly tableName: string;
  readonly region: string | undefined;
  readonly inputTopicArn: string;
  readonly ingestQueueArn: string;
  readonly inputDeadLetterQueueArn: string;
  readonly alarmTopicArn: string | undefined;
}

/**
 * A deployed stack's tenants: the registry in its table, each tenant's input topic made in the
 * stack's account at runtime (named as the stack's ingest queue admits: tenantTopicArnPattern),
 * so the stack's resources and outputs do not grow with its tenants.
 */
export class StackTenants implements TenantPlace {
  private constructor(
    readonly location: Location,
    private readonly outputs: StackTenantOutputs,
    private readonly sns: SNSClient,
  ) {}

  /**
   * The stack its outputs file names (`cdk deploy --outputs-file`), reached in its region (or
   * `region`) with the SDK's default credentials (or `profile`); an AdminError when the outputs
   * lack what tenants need (a stack deployed before this version).
   */
  static async open(stack: StackAccess): Promise<StackTenants> {
    const location: Location = {
      kind: 'deployed',
      stackOutputs: stack.stackOutputs,
      table: undefined,
      region: stack.region,
      profile: stack.profile,
    };
    const outputs = tenantOutputs(await readStackOutputs(stack.stackOutputs), stack.stackOutputs);
    return new StackTenants(location, outputs, new SNSClient((await messagingAccess(location)).client));
  }

  get registryName(): string {
    return `table ${this.outputs.tableName}`;
  }

  async readRegistry(): Promise<TenantsDocument> {
    return (await readTableRegistry(this.location)).registry;
  }

  async writeRegistry(before: TenantsDocument, after: TenantsDocument): Promise<void> {
    const changes = registryChanges(before, after);
    if (noRegistryChanges(changes)) return;
    await withTable(this.location, (client, tableName) => new DynamoDbTenantRegistry(client, tableName, systemClock).write(changes));
  }

  async scope(): Promise<RegistryScope> {
    const { topicPrefix, accountId } = schedulerTopicsOf(this.outputs.inputTopicArn);
    return {
      region: this.outputs.region ?? this.outputs.inputTopicArn.split(':')[3],
      schedulerTopics: {
        topicPrefix,
        accountId,
        ownTopicArns: this.outputs.alarmTopicArn === undefined ? [] : [this.outputs.alarmTopicArn],
      },
    };
  }

  /**
   * Creates the topic (SNS's CreateTopic returns the one of that name when it exists), sets its
   * policy (the tenant's accounts now, TLS only), and subscribes it to the ingest queue with the
   * stack's set-aside queue for what SNS cannot deliver, unless it is subscribed already.
   */
  async ensureTenantTopic(entry: TenantEntry): Promise<string> {
    const name = inputTopicName(topicPrefixOf(this.outputs.inputTopicArn), entry.id);
    try {
      const { TopicArn } = await this.sns.send(new CreateTopicCommand({ Name: name }));
      if (!TopicArn) throw new Error('CreateTopic returned no ARN');
      await this.refuseConfiguredTenant(TopicArn, entry.id);
      await this.sns.send(
        new SetTopicAttributesCommand({
          TopicArn,
          AttributeName: 'Policy',
          AttributeValue: JSON.stringify(tenantTopicPolicy(TopicArn, entry.accounts)),
        }),
      );
      const { Subscriptions = [] } = await this.sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
      if (!Subscriptions.some((subscription) => subscription.Endpoint === this.outputs.ingestQueueArn)) {
        await this.sns.send(
          new SubscribeCommand({
            TopicArn,
            Protocol: 'sqs',
            Endpoint: this.outputs.ingestQueueArn,
            // The envelope is kept (no raw delivery): ingest takes the tenant from its TopicArn.
            Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: this.outputs.inputDeadLetterQueueArn }) },
          }),
        );
      }
      return TopicArn;
    } catch (error) {
      if (error instanceof AdminError) throw error;
      throw topicNotMade(name, entry.id, error);
    }
  }

  async deleteTenantTopic(id: string): Promise<string> {
    const arn = inputTopicArnOf(this.outputs.inputTopicArn, id);
    try {
      await this.refuseConfiguredTenant(arn, id);
      await this.sns.send(new DeleteTopicCommand({ TopicArn: arn }));
    } catch (error) {
      if (error instanceof AdminError) throw error;
      throw new AdminError(`could not delete the input topic ${arn}: ${describeError(error)}`);
    }
    return arn;
  }

  /**
   * An AdminError when the topic is one the stack made for a tenant of its CDK configuration
   * (STACK_TENANT_TOPIC_TAG): a deploy manages that tenant, and changing it here would be undone
   * or leave the stack's resources behind. A topic that does not exist is no one's.
   */
  private async refuseConfiguredTenant(topicArn: string, tenantId: string): Promise<void> {
    let tags: readonly { readonly Key?: string | undefined; readonly Value?: string | undefined }[];
    try {
      tags = (await this.sns.send(new ListTagsForResourceCommand({ ResourceArn: topicArn }))).Tags ?? [];
    } catch (error) {
      if (error instanceof Error && error.name === 'NotFoundException') return;
      throw error;
    }
    if (tags.some(({ Key, Value }) => Key === STACK_TENANT_TOPIC_TAG.key && Value === STACK_TENANT_TOPIC_TAG.value))
      throw new AdminError(
        `tenant "${tenantId}" is in the stack's CDK configuration, and its input topic ${topicArn} is the stack's: ` +
          'change or remove it there and deploy (docs/operators/aws.md, "Tenants on AWS"); nothing was changed',
      );
  }

  async topicsRegistered(): Promise<void> {}

  async topicDeleted(): Promise<void> {}

  async targetWarning(): Promise<string | undefined> {
    return undefined;
  }

  close(): void {
    this.sns.destroy();
  }
}

/** SNS's answer when the account holds as many topics as its quota allows. */
const TOPIC_LIMIT_EXCEEDED = 'TopicLimitExceededException';

/**
 * Why a tenant's input topic could not be made, as an AdminError: the account's topic quota named
 * when that is why (the capacity model's first bound with many tenants; SNS publishes no count of
 * topics to alarm on), else SNS's own answer.
 */
export function topicNotMade(topicName: string, tenantId: string, error: unknown): AdminError {
  const why =
    error instanceof Error && error.name === TOPIC_LIMIT_EXCEEDED
      ? 'the account holds as many SNS topics as its quota allows (Topics per account, 100,000 by default): raise it in Service Quotas (Amazon SNS), or put further tenants in a stack in another account. Nothing was registered'
      : describeError(error);
  return new AdminError(`could not make the input topic ${topicName} of tenant "${tenantId}": ${why}`);
}

function tenantOutputs(outputs: StackOutputs, path: string): StackTenantOutputs {
  const { tableName, region, inputTopicArn, ingestQueueArn, inputDeadLetterQueueArn, alarmTopicArn } = outputs;
  const missing = [
    inputTopicArn === undefined ? SCHEDULER_OUTPUTS.inputTopicArn : undefined,
    ingestQueueArn === undefined ? SCHEDULER_OUTPUTS.ingestQueueArn : undefined,
    inputDeadLetterQueueArn === undefined ? SCHEDULER_OUTPUTS.inputDeadLetterQueueArn : undefined,
  ].filter((key) => key !== undefined);
  if (inputTopicArn === undefined || ingestQueueArn === undefined || inputDeadLetterQueueArn === undefined)
    throw new AdminError(`${path} has no ${missing.join(', ')} output: deploy this version of the stack to manage its tenants at runtime`);
  return { tableName, region, inputTopicArn, ingestQueueArn, inputDeadLetterQueueArn, alarmTopicArn };
}

/**
 * The tenants of a command's location: the local service (its tenants file, `tenantsPath` or the
 * default) or the deployed stack its values name, whose registry is its table.
 */
export async function tenantPlace(location: Location, tenantsPath: string | undefined, command: string): Promise<TenantPlace> {
  if (location.kind === 'local') return new LocalTenants(tenantsPath ?? LOCAL_SERVICE_FILES.tenants, location.outputs);
  refuseTenantsFile(tenantsPath, command);
  if (location.stackOutputs === undefined)
    throw new AdminUsageError(`${command} on a deployed stack needs its outputs: name them with --stack-outputs FILE`, command);
  return StackTenants.open({ stackOutputs: location.stackOutputs, region: location.region, profile: location.profile });
}

/**
 * The registry at a location, to read: the local service's tenants file (`tenantsPath`, or the
 * default), or a deployed stack's table (named by --stack-outputs or --table); and how messages name it.
 */
export async function readTenants(
  location: Location,
  tenantsPath: string | undefined,
  command: string,
): Promise<{ readonly registry: TenantsDocument; readonly registryName: string }> {
  if (location.kind === 'local') {
    const path = tenantsPath ?? LOCAL_SERVICE_FILES.tenants;
    return { registry: readRegistry(path), registryName: path };
  }
  refuseTenantsFile(tenantsPath, command);
  return readTableRegistry(location);
}

/** The registry a deployed stack's table holds, and how messages name it. */
function readTableRegistry(location: Location): Promise<{ readonly registry: TenantsDocument; readonly registryName: string }> {
  return withTable(location, async (client, tableName) => ({
    registry: await new DynamoDbTenantRegistry(client, tableName, systemClock).read(),
    registryName: `table ${tableName}`,
  }));
}

/** A usage error for --tenants given on a deployed stack, whose registry is its table, not a file. */
export function refuseTenantsFile(tenantsPath: string | undefined, command: string): void {
  if (tenantsPath !== undefined)
    throw new AdminUsageError("--tenants names the local service's tenants file: a deployed stack's registry is its table", command);
}
