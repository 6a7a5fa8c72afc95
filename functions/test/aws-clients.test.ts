import { SNSClient } from '@aws-sdk/client-sns';
import { loadConfig } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import { createAwsClients } from '../src/dependencies.js';

const env = {
  SCHEDULER_TABLE_NAME: 'scheduler-events',
  SCHEDULER_DELAY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-delay',
  SCHEDULER_LOADING_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-loading',
  SCHEDULER_CHANGES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/scheduler-changes',
};

/** The steps of a client's middleware stack, by name. */
function stepNames(client: { readonly middlewareStack: { identify(): string[] } }): string[] {
  return client.middlewareStack.identify().map((entry) => entry.split(' ')[0] ?? entry);
}

describe('the functions’ AWS clients', () => {
  it('make their calls without the SDK’s call logging, which filters every request and answer for a logger that drops them', () => {
    // An SDK client as it comes logs every call, through a logger that does nothing by default.
    expect(stepNames(new SNSClient({ region: 'eu-west-1' }))).toContain('loggerMiddleware');
    const clients = createAwsClients(loadConfig(env));
    for (const client of [clients.sns, clients.sqs, clients.dynamodb]) expect(stepNames(client)).not.toContain('loggerMiddleware');
  });
});
