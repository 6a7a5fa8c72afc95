import { topicAccount, topicRegion } from './topic-arn.js';

/**
 * What makes a topic one of the scheduler's own: its input topics (`<prefix>-input`,
 * `<prefix>-tenant-<id>`), its alarm topic (`<prefix>-alarms`), and any other the operator
 * names. The scheduler never publishes to one on a client's behalf: a payload published to an
 * input topic would be taken as that tenant's own request.
 */
export interface SchedulerTopics {
  /** Every topic of the scheduler's account named `<topicPrefix>-...` is its own. */
  readonly topicPrefix: string;
  /** The scheduler's AWS account; undefined: a topic named with the prefix is its own in any account. */
  readonly accountId: string | undefined;
  /** Further topics of its own, by ARN (an alarm topic an embedding app names otherwise). */
  readonly ownTopicArns: readonly string[];
}

/** Whether a topic ARN names one of the scheduler's own topics. */
export function isSchedulerTopic(topicArn: string, own: SchedulerTopics): boolean {
  if (own.ownTopicArns.includes(topicArn)) return true;
  const parts = topicArn.split(':');
  // Everything after the account, so that a name with a colon in it is not a way around the prefix.
  const name = parts.slice(5).join(':');
  const inAccount = own.accountId === undefined || topicAccount(topicArn) === own.accountId;
  return parts.length >= 6 && inAccount && name.startsWith(`${own.topicPrefix}-`);
}

/**
 * Whether an input message's topic is in the scheduler's own region and account: a topic of the
 * same name elsewhere is not the scheduler's, and a body naming one did not come through its SNS
 * (a dead letter sent back re-wrapped, a hand-made body). The account is checked when known.
 */
export function isInStack(topicArn: string, stack: { readonly region: string; readonly accountId: string | undefined }): boolean {
  return topicRegion(topicArn) === stack.region && (stack.accountId === undefined || topicAccount(topicArn) === stack.accountId);
}
