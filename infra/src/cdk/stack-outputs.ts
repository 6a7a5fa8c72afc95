// No CDK import here: the operator CLI reads these keys without loading the CDK library.

/** Keys of the stack's outputs (`cdk deploy --outputs-file` writes them under the stack name). */
export const SCHEDULER_OUTPUTS = {
  inputTopicArn: 'InputTopicArn',
  emitterRoleArn: 'EmitterRoleArn',
  region: 'Region',
  nearPathWindowSeconds: 'NearPathWindowSeconds',
  shardCount: 'ShardCount',
  indexQueuedEvents: 'IndexQueuedEvents',
  tableName: 'TableName',
  /** Where a tenant's input topic delivers: scripts/admin tenant add subscribes the topics it makes to it. */
  ingestQueueArn: 'IngestQueueArn',
  /** Where SNS sets aside what an input topic could not deliver: each tenant topic's subscription names it. */
  inputDeadLetterQueueArn: 'InputDeadLetterQueueArn',
  /** The changes queue's, among the queues' outputs (queueOutputKeys('changes')): where a bulk cancel or a resume starts. */
  changesQueueUrl: 'ChangesQueueUrl',
  alarmTopicArn: 'AlarmTopicArn',
  dashboardUrl: 'DashboardUrl',
} as const;

/**
 * The tag the stack gives the input topics of the tenants its CDK configuration names: they are
 * the stack's, changed by a deploy. scripts/admin refuses to change or delete a topic so tagged,
 * and says where the tenant is managed.
 */
export const STACK_TENANT_TOPIC_TAG = { key: 'adhoc-scheduler:managed-by', value: 'cdk-configuration' } as const;

/**
 * The output holding a registered tenant's input topic ARN: `Tenant<Id>InputTopicArn`, the id
 * in PascalCase (`acme-corp`: TenantAcmeCorpInputTopicArn). Output keys are alphanumeric.
 */
export function tenantInputTopicOutputKey(tenantId: string): string {
  return `Tenant${pascalCase(tenantId)}InputTopicArn`;
}

/** The scheduler's queues whose messages a function may fail, each with a dead-letter queue, as `scripts/admin dead-letters --queue` names them. */
export const DEAD_LETTER_SOURCES = ['ingest', 'public-ingest', 'loading', 'delay', 'changes'] as const;
export type DeadLetterSource = (typeof DEAD_LETTER_SOURCES)[number];

/**
 * The outputs holding a queue's URL and its dead-letter queue's (`delay`: DelayQueueUrl and
 * DelayDeadLetterQueueUrl): the admin tools read a dead-letter queue and redrive to its queue.
 */
export function queueOutputKeys(source: DeadLetterSource): { readonly queueUrl: string; readonly deadLetterQueueUrl: string } {
  const pascal = pascalCase(source);
  return { queueUrl: `${pascal}QueueUrl`, deadLetterQueueUrl: `${pascal}DeadLetterQueueUrl` };
}

/** Output keys are alphanumeric: `acme-corp` becomes AcmeCorp. */
function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`)
    .join('');
}
