import { inputTopicName, PUBLIC_TENANT_ID, type TenantsDocument } from '@adhoc-scheduler/shared';
import { Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

export interface InputTopicsProps {
  /** Prefix of every input topic's name (see `inputTopicName`). */
  readonly topicPrefix: string;
  /** The registry, already checked by `parseTenantsDocument`. */
  readonly tenants: TenantsDocument;
  /** Accounts that may publish to the shared topic; undefined: any AWS account. */
  readonly publisherAccounts: readonly string[] | undefined;
  /** Where every input topic delivers. */
  readonly ingestQueue: sqs.Queue;
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
 * The input topics, named by the convention ingest reads tenants from (`inputTopicName`): the
 * shared topic and one per registered tenant, each admitting sns:Publish only from its own
 * accounts, all delivering to the ingest queue with the SNS envelope (its TopicArn names the
 * tenant, its MessageId names events).
 */
export function createInputTopics(scope: Construct, props: InputTopicsProps): InputTopics {
  assertTopicPrefix(props.topicPrefix);
  const shared = inputTopic(scope, 'InputTopic', inputTopicName(props.topicPrefix, PUBLIC_TENANT_ID), publisherPrincipals(props.publisherAccounts));
  const byTenant: Record<string, sns.Topic> = {};
  for (const tenant of props.tenants.tenants ?? []) {
    byTenant[tenant.id] = inputTopic(
      scope,
      `TenantTopic-${tenant.id}`,
      inputTopicName(props.topicPrefix, tenant.id),
      tenant.accounts.map((account) => new iam.AccountPrincipal(account)),
    );
  }
  deliverToIngest([shared, ...Object.values(byTenant)], props.ingestQueue);
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
 * One queue-policy statement for all the topics: SQS allows 20 statements per policy, so one
 * per topic (as SqsSubscription adds) would cap the tenants at 18.
 */
function deliverToIngest(topics: readonly sns.Topic[], queue: sqs.Queue): void {
  const { policyDependable } = queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'InputTopicsDeliver',
      principals: [new iam.ServicePrincipal('sns.amazonaws.com')],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: { ArnEquals: { 'aws:SourceArn': topics.map((topic) => topic.topicArn) } },
    }),
  );
  for (const topic of topics) {
    const subscription = new sns.Subscription(topic, 'IngestQueue', {
      topic,
      protocol: sns.SubscriptionProtocol.SQS,
      endpoint: queue.queueArn,
      // The envelope is kept (no raw delivery): ingest takes the tenant from its TopicArn.
      rawMessageDelivery: false,
    });
    // Deliveries start only once the queue admits them.
    if (policyDependable) subscription.node.addDependency(policyDependable);
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
