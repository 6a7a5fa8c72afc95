import { inputTopicName, PUBLIC_TENANT_ID, type SchedulerTopics } from '@adhoc-scheduler/shared';
import { AdminError } from './errors.js';

/**
 * The prefix a scheduler names its topics with, read back from its public input topic
 * (`inputTopicName(prefix, 'public')`): the local service and the CDK app name them alike.
 */
export function topicPrefixOf(publicInputTopicArn: string): string {
  const name = publicInputTopicArn.split(':')[5] ?? '';
  const suffix = inputTopicName('', PUBLIC_TENANT_ID);
  const prefix = name.slice(0, -suffix.length);
  if (prefix === '' || inputTopicName(prefix, PUBLIC_TENANT_ID) !== name)
    throw new AdminError(`unexpected name of the shared input topic: ${publicInputTopicArn}`);
  return prefix;
}

/** A tenant's input topic ARN: in the public input topic's account and region, named by the convention. */
export function inputTopicArnOf(publicInputTopicArn: string, tenantId: string): string {
  const parts = publicInputTopicArn.split(':');
  return [...parts.slice(0, 5), inputTopicName(topicPrefixOf(publicInputTopicArn), tenantId)].join(':');
}

/** The scheduler's own topics as far as its public input topic tells: those named with its prefix in its account. */
export function schedulerTopicsOf(publicInputTopicArn: string): SchedulerTopics {
  return { topicPrefix: topicPrefixOf(publicInputTopicArn), accountId: publicInputTopicArn.split(':')[4], ownTopicArns: [] };
}
