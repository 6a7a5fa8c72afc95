import { Writable } from 'node:stream';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, startLocalScheduler, type LocalScheduler } from '@adhoc-scheduler/infra';
import { createLogger } from '@adhoc-scheduler/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from '../../infra/test/local/kit.js';
import { injectFaults, type AwsService, type FaultDecision, type InjectedFault } from '../src/chaos/faults.js';
import { createConsumerEndpoint, deleteConsumerEndpoint, failureReceiptOf, receiptOf, startConsumer } from '../src/consumer.js';
import { planUniform, scheduleRequest } from '../src/plan.js';
import { pollUntil } from '../src/poll.js';
import { publishEvents } from '../src/publisher.js';
import { DeliveryTracker } from '../src/tracker.js';

/** On each service, the first call is refused and the second loses its answer; the rest go through. */
function firstCallsFail(): FaultDecision {
  const calls = new Map<AwsService, number>();
  return ({ service }) => {
    const n = (calls.get(service) ?? 0) + 1;
    calls.set(service, n);
    return n === 1 ? 'refused' : n === 2 ? 'lost' : undefined;
  };
}

const logLines: string[] = [];
const faults: InjectedFault[] = [];
let scheduler: LocalScheduler;

beforeAll(async () => {
  const log = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  scheduler = await startLocalScheduler({
    // The faults are injected into the service's own clients: the run's emulators serve it as they are.
    emulators: sharedEmulators(),
    logger: createLogger('info', { destination: log }),
    // Retries after a few seconds, not the default 30.
    visibilityTimeoutSeconds: 3,
    instrumentClients: (clients) =>
      injectFaults(clients, {
        decide: firstCallsFail(),
        idPrefix: 'f1.',
        idPattern: /c-[0-9a-f]{40}/,
        onFault: (fault) => faults.push(fault),
      }),
  });
});

afterAll(async () => {
  await scheduler?.stop();
});

describe('faults injected into the local service', () => {
  it('reach its code on SNS, SQS and DynamoDB, refused and lost, and every event is still delivered, none early', async () => {
    const access = { region: scheduler.outputs.region, endpoint: scheduler.outputs.endpoint, credentials: LOCAL_CREDENTIALS };
    const sns = new SNSClient(access);
    const sqs = new SQSClient(access);
    const target = await createConsumerEndpoint(sns, sqs, `chaos-test-${Date.now()}`, scheduler.outputs.emitterRoleArn, 5);
    const failures = await createConsumerEndpoint(sns, sqs, `chaos-test-failures-${Date.now()}`, scheduler.outputs.emitterRoleArn, 5);
    const now = Date.now();
    const events = planUniform({
      runId: 'chaos-test',
      user: 'chaos-test',
      count: 5,
      firstDueAt: now + 5_000,
      spreadMs: 2_000,
      publishAheadMs: undefined,
      publishFrom: now,
    });
    const tracker = new DeliveryTracker(100);
    for (const event of events) tracker.expect(event.eventId, event.dueAt);
    const consumers = [
      startConsumer(sqs, target.queueUrl, 2, (message, receivedAt) => tracker.record(receiptOf(message, receivedAt))),
      startConsumer(sqs, failures.queueUrl, 1, (message) => tracker.recordFailure(failureReceiptOf(message, () => undefined))),
    ];
    try {
      const published = await publishEvents(events, {
        sns,
        inputTopicArn: scheduler.outputs.inputTopicArn,
        render: (event) => scheduleRequest(event, 'chaos-test', target.topicArn, 50, failures.topicArn),
        concurrency: 1,
        onPublished: () => undefined,
        onFailed: () => undefined,
        untilAccepted: true,
      });
      expect(published.published).toBe(5);

      const delivered = await pollUntil(() => tracker.accountedFor >= tracker.expected, Date.now() + 40_000);

      expect(delivered).toBe(true);
      expect(tracker.counts()).toMatchObject({ expected: 5, delivered: 5, missing: 0, early: 0, failed: 0 });
      const seen = (service: AwsService, kind: InjectedFault['kind']): boolean =>
        faults.some((fault) => fault.service === service && fault.kind === kind);
      for (const service of ['sns', 'sqs', 'dynamodb'] as const) {
        expect(seen(service, 'refused'), `${service} refused`).toBe(true);
        expect(seen(service, 'lost'), `${service} lost`).toBe(true);
      }
      // The service's own code met them: its logs name the faults it handled.
      const handled = faults.filter((fault) => logLines.some((line) => line.includes(`injected fault ${fault.id}:`)));
      expect(new Set(handled.map((fault) => fault.service))).toEqual(new Set(['sns', 'sqs', 'dynamodb']));
    } finally {
      for (const consumer of consumers) await consumer.stop();
      await deleteConsumerEndpoint(sns, sqs, target);
      await deleteConsumerEndpoint(sns, sqs, failures);
      sns.destroy();
      sqs.destroy();
    }
  }, 60_000);
});
