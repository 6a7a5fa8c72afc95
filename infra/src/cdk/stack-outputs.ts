// No CDK import here: the operator CLI reads these keys without loading the CDK library.

/** Keys of the stack's outputs (`cdk deploy --outputs-file` writes them under the stack name). */
export const SCHEDULER_OUTPUTS = {
  inputTopicArn: 'InputTopicArn',
  emitterRoleArn: 'EmitterRoleArn',
  region: 'Region',
  nearPathWindowSeconds: 'NearPathWindowSeconds',
  tableName: 'TableName',
  alarmTopicArn: 'AlarmTopicArn',
  dashboardUrl: 'DashboardUrl',
  changesQueueUrl: 'ChangesQueueUrl',
} as const;

/**
 * The output holding a registered tenant's input topic ARN: `Tenant<Id>InputTopicArn`, the id
 * in PascalCase (`acme-corp`: TenantAcmeCorpInputTopicArn). Output keys are alphanumeric.
 */
export function tenantInputTopicOutputKey(tenantId: string): string {
  const pascal = tenantId
    .split('-')
    .map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`)
    .join('');
  return `Tenant${pascal}InputTopicArn`;
}
