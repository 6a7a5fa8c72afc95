// No CDK import: scripts/admin makes tenants' topics at runtime with this policy, without loading the CDK library.

/** A topic policy document, as SNS's Policy attribute takes it (as JSON). */
export interface TopicPolicyDocument {
  readonly Version: '2012-10-17';
  readonly Statement: readonly Readonly<Record<string, unknown>>[];
}

/**
 * The policy of a registered tenant's input topic, the same whether the CDK app or scripts/admin
 * made it: sns:Publish only from the tenant's own accounts, and only over TLS (the statement the
 * CDK app's `enforceSSL` adds, with its Sid). Managing the topic is left to the stack's account's
 * own IAM policies.
 */
export function tenantTopicPolicy(topicArn: string, accounts: readonly string[]): TopicPolicyDocument {
  const partition = topicArn.split(':')[1] ?? 'aws';
  const roots = accounts.map((account) => `arn:${partition}:iam::${account}:root`);
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowPublishThroughSSLOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'sns:Publish',
        Resource: topicArn,
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
      {
        Sid: 'PublishScheduleRequests',
        Effect: 'Allow',
        Principal: { AWS: roots.length === 1 ? roots[0] : roots },
        Action: 'sns:Publish',
        Resource: topicArn,
      },
    ],
  };
}
