import { describe, expect, it } from 'vitest';
import { isSchedulerTopic, type SchedulerTopics } from '../src/domain/scheduler-topics.js';

const OWN: SchedulerTopics = {
  topicPrefix: 'adhoc',
  accountId: '000000000000',
  ownTopicArns: ['arn:aws:sns:eu-west-1:999999999999:ops-alarms'],
};
const arn = (name: string, account = '000000000000') => `arn:aws:sns:eu-west-1:${account}:${name}`;

describe("the scheduler's own topics", () => {
  it.each([
    ['the shared input topic', arn('adhoc-input')],
    ["a tenant's input topic", arn('adhoc-tenant-acme')],
    ['the alarm topic', arn('adhoc-alarms')],
    ['any other topic named with the prefix in its account', arn('adhoc-')],
    ['a topic in another region of its account', 'arn:aws:sns:us-east-1:000000000000:adhoc-input'],
    ['a topic named in ownTopicArns, in any account', 'arn:aws:sns:eu-west-1:999999999999:ops-alarms'],
    ['a name with a colon after the prefix', 'arn:aws:sns:eu-west-1:000000000000:adhoc-input:extra'],
  ])('include %s', (_case, topicArn) => {
    expect(isSchedulerTopic(topicArn, OWN)).toBe(true);
  });

  it.each([
    ['a topic named with the prefix in another account', arn('adhoc-input', '111111111111')],
    ['a name that only starts like the prefix', arn('adhocinput')],
    ['the prefix alone, without its dash', arn('adhoc')],
    ['a name with the prefix in another case', arn('ADHOC-input')],
    ['a name holding the prefix further on', arn('my-adhoc-input')],
    ['a topic in ownTopicArns’ account with another name', 'arn:aws:sns:eu-west-1:999999999999:ops-pager'],
    ['not an ARN', 'adhoc-input'],
    ['an empty string', ''],
  ])('exclude %s', (_case, topicArn) => {
    expect(isSchedulerTopic(topicArn, OWN)).toBe(false);
  });

  it('include a topic named with the prefix in any account when the account is not known', () => {
    expect(isSchedulerTopic(arn('adhoc-tenant-acme', '111111111111'), { ...OWN, accountId: undefined })).toBe(true);
    expect(isSchedulerTopic(arn('client-target', '111111111111'), { ...OWN, accountId: undefined })).toBe(false);
  });
});
