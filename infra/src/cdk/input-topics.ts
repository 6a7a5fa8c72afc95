import { inputTopicName, PUBLIC_TENANT_ID, type TenantsDocument } from '@adhoc-scheduler/shared';
import { Aws, Stack, Tags, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IDependable } from 'constructs';
import { STACK_TENANT_TOPIC_TAG } from './stack-outputs.js';

export interface InputTopicsProps {
  /** Prefix of every input topic's name (see `inputTopicName`). */
  readonly topicPrefix: string;
  /** The registry, already checked by `parseTenantsDocument`. */
  readonly tenants: TenantsDocument;
  /** Accounts that may publish to the shared topic; undefined: any AWS account. */
  readonly publisherAccounts: readonly string[] | undefined;
  /** Where the shared topic delivers: the public tenant's requests wait apart from the registered tenants'. */
  readonly publicIngestQueue: sqs.Queue;
  /** Where every registered tenant's topic delivers. */
  readonly ingestQueue: sqs.Queue;
  /** Where SNS sets aside what it could not deliver to either ingest queue, from any input topic. */
  readonly deadLetterQueue: sqs.Queue;
}

export interface InputTopics {
  /** The original shared topic: what arrives there belongs to the public tenant. */
  readonly shared: sns.Topic;
  /** Each registered tenant's own topic, by tenant id. */
  readonly byTenant: Readonly<Record<string, sns.Topic>>;
}

/** SNS topic names: letters, digits, hyphens and underscores, at most 256 characters. */
const TOPIC_NAME_CHARACTERS = /^[A-Za-z0-9_-]+$/;
const MAX_TOPIC_NAME = 256;
/** Tenant ids have at most 40 characters (shared/schema/tenants.schema.json). */
const LONGEST_TENANT_TOPIC_SUFFIX = '-tenant-'.length + 40;

/**
 * Prefix of every topic of the scheduler's own: the input topics (`inputTopicName`) and the
 * alarm topic. Default: the stack's name, so two stacks in one account and region never share topics.
 */
export function schedulerTopicPrefix(scope: Construct, topicPrefix: string | undefined): string {
  return topicPrefix ?? Stack.of(scope).stackName;
}

/**
 * The ARN pattern of every registered tenant's input topic in the stack's own account and region
 * (`inputTopicName(prefix, '*')`): the ingest queue admits what SNS delivers from any topic so
 * named, so that a tenant added at runtime (scripts/admin tenant add) needs no change to the
 * stack, and the stack's policies do not grow with its tenants.
 */
export function tenantTopicArnPattern(topicPrefix: string): string {
  return `arn:${Aws.PARTITION}:sns:${Aws.REGION}:${Aws.ACCOUNT_ID}:${inputTopicName(topicPrefix, '*')}`;
}

/**
 * The input topics, named by the convention ingest reads tenants from (`inputTopicName`): the
 * shared topic, and one per tenant the CDK app registers, each admitting sns:Publish only from
 * its own accounts, delivering with the SNS envelope (its TopicArn names the tenant, its
 * MessageId names events): the shared topic to the public ingest queue, so that a flood there
 * does not hold up the registered tenants, and the tenants' topics to the ingest queue, which
 * admits every topic named as a tenant's (tenantTopicArnPattern), those made at runtime too.
 */
export function createInputTopics(scope: Construct, props: InputTopicsProps): InputTopics {
  assertTopicPrefix(props.topicPrefix);
  const shared = inputTopic(
    scope,
    'InputTopic',
    inputTopicName(props.topicPrefix, PUBLIC_TENANT_ID),
    publisherPrincipals(props.publisherAccounts),
  );
  const byTenant: Record<string, sns.Topic> = {};
  for (const tenant of props.tenants.tenants ?? []) {
    const topic = inputTopic(
      scope,
      `TenantTopic-${tenant.id}`,
      inputTopicName(props.topicPrefix, tenant.id),
      tenant.accounts.map((account) => new iam.AccountPrincipal(account)),
    );
    // The stack's to change: scripts/admin refuses to.
    Tags.of(topic).add(STACK_TENANT_TOPIC_TAG.key, STACK_TENANT_TOPIC_TAG.value);
    byTenant[tenant.id] = topic;
  }
  const tenantTopics = tenantTopicArnPattern(props.topicPrefix);
  const deadLetterPolicy = admitTopics(props.deadLetterQueue, 'InputTopicsSetAside', [shared.topicArn, tenantTopics]);
  const publicPolicy = admitTopics(props.publicIngestQueue, 'InputTopicsDeliver', [shared.topicArn]);
  const tenantsPolicy = admitTopics(props.ingestQueue, 'InputTopicsDeliver', [tenantTopics]);
  deliverToIngest([shared], props.publicIngestQueue, props.deadLetterQueue, [publicPolicy, deadLetterPolicy]);
  deliverToIngest(Object.values(byTenant), props.ingestQueue, props.deadLetterQueue, [tenantsPolicy, deadLetterPolicy]);
  return { shared, byTenant };
}

function inputTopic(scope: Construct, id: string, topicName: string, publishers: iam.IPrincipal[]): sns.Topic {
  const topic = new sns.Topic(scope, id, { topicName, enforceSSL: true });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'PublishScheduleRequests',
      principals: publishers,
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
    }),
  );
  return topic;
}

/**
 * One queue-policy statement letting SNS send from the topics (ARNs or ARN patterns): SQS
 * allows 20 statements per policy, so one per topic (as SqsSubscription and a subscription's
 * dead-letter queue add) would cap the tenants at 18.
 */
function admitTopics(queue: sqs.Queue, sid: string, topicArns: readonly string[]): IDependable {
  const { policyDependable } = queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid,
      principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnLike: { 'aws:SourceArn': topicArns } },
    }),
  );
  if (policyDependable === undefined) throw new Error(`${queue.node.path} keeps no resource policy`);
  return policyDependable;
}

/**
 * Subscribes the topics to the queue, each with a redrive policy: a message SNS cannot deliver
 * there (the queue refuses it, or stays unreachable through all of SNS's retries) is set aside in
 * the dead-letter queue, alarmed, instead of dropped. Each delivers only once `policies` admit it.
 */
function deliverToIngest(
  topics: readonly sns.Topic[],
  queue: sqs.Queue,
  deadLetterQueue: sqs.Queue,
  policies: readonly IDependable[],
): void {
  for (const topic of topics) {
    const subscription = new sns.Subscription(topic, 'IngestQueue', {
      topic,
      protocol: sns.SubscriptionProtocol.SQS,
      endpoint: queue.queueArn,
      // The envelope is kept (no raw delivery): ingest takes the tenant from its TopicArn.
      rawMessageDelivery: false,
    });
    // Set here rather than with the `deadLetterQueue` prop, which adds a queue-policy statement per topic.
    (subscription.node.defaultChild as sns.CfnSubscription).redrivePolicy = { deadLetterTargetArn: deadLetterQueue.queueArn };
    for (const policy of policies) subscription.node.addDependency(policy);
  }
}

function assertTopicPrefix(topicPrefix: string): void {
  if (Token.isUnresolved(topicPrefix)) throw new Error('topicPrefix must be known at synth time: it reaches the functions as plain text');
  if (!TOPIC_NAME_CHARACTERS.test(topicPrefix) || topicPrefix.length + LONGEST_TENANT_TOPIC_SUFFIX > MAX_TOPIC_NAME) {
    throw new Error(
      `topicPrefix "${topicPrefix}" must be letters, digits, hyphens or underscores, ` +
        `at most ${MAX_TOPIC_NAME - LONGEST_TENANT_TOPIC_SUFFIX} characters (SNS topic names)`,
    );
  }
}

function publisherPrincipals(accounts: readonly string[] | undefined): iam.IPrincipal[] {
  if (accounts === undefined) return [new iam.AnyPrincipal()];
  if (accounts.length === 0) throw new Error('publisherAccounts is empty: no account could publish; omit it to allow any account');
  for (const account of accounts) {
    if (!/^\d{12}$/.test(account)) throw new Error(`publisherAccounts: "${account}" is not a 12-digit AWS account id`);
  }
  return accounts.map((account) => new iam.AccountPrincipal(account));
}
