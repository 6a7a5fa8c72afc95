import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PublishCommandInput } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDbEventListing, EVENT_STATE, PUBLISH_RETRY, REASON } from '@adhoc-scheduler/shared';
import type { AwsClients } from '@adhoc-scheduler/functions';
import {
  capturingLogger,
  expectNotEarly,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();

/** Makes the service's publishes to one topic fail with a throttling error, `times` times. */
function throttlePublishesTo(topicArn: () => string, times: number, attempts: number[]): (clients: AwsClients) => void {
  return (clients) => {
    clients.sns.middlewareStack.add(
      (next) => async (args) => {
        if ((args.input as Partial<PublishCommandInput>).TopicArn === topicArn()) {
          attempts.push(Date.now());
          if (attempts.length <= times) throw Object.assign(new Error('Rate exceeded'), { name: 'Throttling' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'throttlePublishes' },
    );
  };
}

/**
 * An input of exactly SNS's 256 KiB limit: SNS takes it, but its payload with the scheduler's
 * message attributes would not fit in one emission. (It names no failure topic, so its refusal is
 * reported in the logs only.)
 */
function largestInputWhosePayloadCannotBeEmitted(target: string): string {
  const input = { date: '2026-01-01', target, user: 'u', payload: '' };
  const overhead = Buffer.byteLength(JSON.stringify(input));
  return JSON.stringify({ ...input, payload: 'x'.repeat(262_144 - overhead) });
}

/** An input of exactly SNS's 256 KiB limit, whose payload (with the scheduler's attributes) can be emitted. */
function largestInput(fields: Record<string, unknown>): { readonly text: string; readonly payload: string } {
  const overhead = Buffer.byteLength(JSON.stringify({ ...fields, payload: '' }));
  const payload = 'x'.repeat(262_144 - overhead);
  return { text: JSON.stringify({ ...fields, payload }), payload };
}

describe('failures reach the failure topic with a reason code, and never stop the batch', () => {
  it('reports each kind of invalid input while the valid messages of the same batch go through', async () => {
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const due = Date.now() + 1_500;
      const failure_topic = failures.topicArn;
      const valid = (payload: string) => request(target.topicArn, due, payload, { failure_topic });
      const invalid: [string, unknown][] = [
        [REASON.MISSING_FIELD, { date: new Date(due).toISOString(), target: target.topicArn, payload: 'p', failure_topic }],
        [REASON.INVALID_FIELD, { ...valid('x'), payload: 42 }],
        [REASON.INVALID_DATE, { ...valid('x'), date: 'next tuesday' }],
        [REASON.INVALID_TARGET, { ...valid('x'), target: 'arn:aws:sqs:us-east-1:000000000000:not-a-topic' }],
        // SNS publishes no empty message: refused at once, not at the due time.
        [REASON.INVALID_FIELD, { ...valid('x'), payload: '' }],
        // SNS publishes only within its own region.
        [REASON.TARGET_IN_OTHER_REGION, { ...valid('x'), target: 'arn:aws:sns:eu-west-1:000000000000:far-away' }],
        // A notice quoting it as parsed could not be serialized again.
        [REASON.TOO_DEEPLY_NESTED, JSON.stringify(valid('x')).replace(/}$/, `,"extra":${'['.repeat(10_000)}${']'.repeat(10_000)}}`)],
      ];
      // PublishBatch puts them side by side in the ingest queue: valid and invalid share batches.
      await client.publishBatch([valid('valid-1'), ...invalid.map(([, body]) => body), valid('valid-2')]);
      // Inputs that name no usable failure topic are reported in the logs only.
      await client.publish('not json at all');
      await client.publish(JSON.stringify([valid('in an array')]));
      await client.publish(largestInputWhosePayloadCannotBeEmitted(target.topicArn));
      await client.publish({ ...valid('failure topic far away'), failure_topic: 'arn:aws:sns:eu-west-1:000000000000:far-away' });

      await waitFor(() => failures.deliveries.length >= invalid.length, 'a notice for each invalid input');
      await waitFor(() => target.deliveries.length >= 2, 'the valid events');
      expect(target.deliveries.map((d) => d.body).sort()).toEqual(['valid-1', 'valid-2']);
      for (const delivery of target.deliveries) expectNotEarly(delivery);
      expect(
        failures
          .notices()
          .map((notice) => notice.reason)
          .sort(),
      ).toEqual(invalid.map(([reason]) => reason).sort());
      const dateNotice = failures.notices().find((notice) => notice.reason === REASON.INVALID_DATE);
      expect(dateNotice?.event).toMatchObject({ date: 'next tuesday' });
      const logsOnly = [REASON.INVALID_JSON, REASON.NOT_AN_OBJECT, REASON.PAYLOAD_TOO_LARGE, REASON.FAILURE_TOPIC_IN_OTHER_REGION];
      for (const reason of [...invalid.map(([code]) => code), ...logsOnly]) {
        await waitFor(() => lines.some((line) => line.reason === reason), `the ${reason} log line`);
      }
    } finally {
      client.destroy();
      await Promise.all([target.stop(), failures.stop()]);
      await scheduler.stop();
    }
  });

  it('shortens a notice too large for one SNS message, keeping the size and hash of what it cut, rather than dropping it', async () => {
    const scheduler = await startTestScheduler(emulators);
    const client = new SchedulerClient(scheduler);
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const fields = { date: new Date().toISOString(), user: 'tests', failure_topic: failures.topicArn };
      // Emitted, but its target is missing: the emitter's notice quotes the event.
      // A target name longer than the scheduler's attributes, so the payload fits beside them.
      const emitted = largestInput({ ...fields, target: `arn:aws:sns:us-east-1:000000000000:no-such-topic-${'x'.repeat(200)}` });
      // Refused at ingest: the notice quotes the request.
      const refused = largestInput({ ...fields, date: 'next tuesday', target: failures.topicArn });
      await client.publish(emitted.text);
      await client.publish(refused.text);

      await waitFor(() => failures.notices().length === 2, 'both notices');
      const byReason = new Map(failures.notices().map((notice) => [notice.reason, notice as typeof notice & { truncated?: unknown }]));
      for (const [reason, { payload }] of [
        [REASON.TARGET_NOT_FOUND, emitted],
        [REASON.INVALID_DATE, refused],
      ] as const) {
        const notice = byReason.get(reason);
        expect(notice?.truncated).toEqual({
          field: 'event.payload',
          bytes: payload.length,
          sha256: createHash('sha256').update(payload).digest('hex'),
        });
        const kept = String((notice?.event as { payload?: unknown } | undefined)?.payload);
        expect(kept.length).toBeLessThan(payload.length);
        expect(payload.startsWith(kept)).toBe(true);
      }
      expect(failures.deliveries.every((delivery) => Buffer.byteLength(delivery.body) <= 262_144)).toBe(true);
    } finally {
      client.destroy();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it('retries a publish that failed for a transient reason after a back-off, and delivers once it succeeds', async () => {
    const attempts: number[] = [];
    let targetArn = '';
    const scheduler = await startTestScheduler(emulators, {
      instrumentClients: throttlePublishesTo(() => targetArn, 1, attempts),
    });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    targetArn = target.topicArn;
    try {
      await client.publish(request(target.topicArn, Date.now(), 'flaky'));
      await waitFor(() => target.withPayload('flaky').length > 0, 'the delivery after a retry');
      expect(attempts).toHaveLength(2);
      // Put off by the first back-off (1 s, give or take a fifth), not left to the queue's visibility timeout (3 s here).
      const spacing = (attempts[1] ?? 0) - (attempts[0] ?? 0);
      expect(spacing).toBeGreaterThanOrEqual((PUBLISH_RETRY.firstDelaySeconds * (1 - PUBLISH_RETRY.jitter) - 0.5) * 1000);
      expect(spacing).toBeLessThan(3_000);
      expect(target.withPayload('flaky')).toHaveLength(1);
      expectNotEarly(target.withPayload('flaky')[0]);
    } finally {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('retries a transient failure of an event dated two days ago, and delivers it: its age counts from when its copy was sent, not from its date', async () => {
    const attempts: number[] = [];
    let targetArn = '';
    const scheduler = await startTestScheduler(emulators, {
      instrumentClients: throttlePublishesTo(() => targetArn, 1, attempts),
    });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    targetArn = target.topicArn;
    try {
      await client.publish(
        request(target.topicArn, Date.now() - 2 * 24 * 3600 * 1000, 'two days late', { failure_topic: failures.topicArn }),
      );
      await waitFor(() => target.withPayload('two days late').length > 0, 'the delivery after a retry');
      expect(attempts).toHaveLength(2);
      expect(failures.deliveries).toHaveLength(0);
      expectNotEarly(target.withPayload('two days late')[0]);
    } finally {
      client.destroy();
      await Promise.all([target.stop(), failures.stop()]);
      await scheduler.stop();
    }
  });

  it('reports a publish that keeps failing on the failure topic once its event is past the maximum age', async () => {
    const attempts: number[] = [];
    let targetArn = '';
    const scheduler = await startTestScheduler(emulators, {
      env: { SCHEDULER_EMIT_MAX_AGE_SECONDS: '2' },
      instrumentClients: throttlePublishesTo(() => targetArn, Number.POSITIVE_INFINITY, attempts),
    });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    targetArn = target.topicArn;
    try {
      await client.publish(request(target.topicArn, Date.now() + 3_000, 'doomed', { failure_topic: failures.topicArn }));
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the failure notice');
      expect(notice?.reason).toBe(REASON.PUBLISH_FAILED);
      expect(notice?.event).toMatchObject({ payload: 'doomed', target: target.topicArn });
      // Tried at the due time, and once more after the first back-off, by which time the event was past the maximum age.
      expect(attempts).toHaveLength(2);
      expect(target.deliveries).toHaveLength(0);
    } finally {
      client.destroy();
      await Promise.all([target.stop(), failures.stop()]);
      await scheduler.stop();
    }
  });

  it('reports a target topic that does not exist without retrying', async () => {
    const missing = 'arn:aws:sns:us-east-1:000000000000:no-such-topic';
    const attempts: number[] = [];
    const scheduler = await startTestScheduler(emulators, { instrumentClients: throttlePublishesTo(() => missing, 0, attempts) });
    const client = new SchedulerClient(scheduler);
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
    try {
      const messageId = await client.publish(request(missing, Date.now(), 'lost', { failure_topic: failures.topicArn }));
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the failure notice');
      expect(notice?.reason).toBe(REASON.TARGET_NOT_FOUND);
      // Not retried: the event ended as failed after one attempt, and its message left the delay queue instead of being put back.
      await waitFor(async () => (await records.get(`m-${messageId}`))?.state === EVENT_STATE.failed, 'the event ended as failed');
      await waitFor(async () => {
        const { Attributes = {} } = await scheduler.clients.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: scheduler.outputs.delayQueueUrl, AttributeNames: ['All'] }),
        );
        const { ApproximateNumberOfMessages, ApproximateNumberOfMessagesNotVisible, ApproximateNumberOfMessagesDelayed } = Attributes;
        return [ApproximateNumberOfMessages, ApproximateNumberOfMessagesNotVisible, ApproximateNumberOfMessagesDelayed].every(
          (count) => count === '0',
        );
      }, 'the delay queue empty');
      expect(attempts).toHaveLength(1);
    } finally {
      client.destroy();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it('refuses a schedule or a reschedule dated further ahead than the limit as DATE_TOO_FAR, with the limit and the latest date taken', async () => {
    const limitSeconds = 3600;
    const scheduler = await startTestScheduler(emulators, { env: { SCHEDULER_MAX_SCHEDULE_AHEAD_SECONDS: String(limitSeconds) } });
    const client = new SchedulerClient(scheduler);
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const failure_topic = failures.topicArn;
      const within = Date.now() + 1_800_000;
      const tooFar = new Date(Date.now() + 2 * limitSeconds * 1000).toISOString();
      const messageId = await client.publish(request(target.topicArn, within, 'within the limit', { failure_topic }));
      const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
      await waitFor(() => records.get(`m-${messageId}`), 'the event within the limit recorded');

      await client.publish(request(target.topicArn, Date.parse(tooFar), 'too far', { failure_topic }));
      await client.publish({ action: 'reschedule', event_id: `m-${messageId}`, date: tooFar, failure_topic });
      const notices = await waitFor(() => failures.notices().length >= 2 && failures.notices(), 'both refusals');
      for (const notice of notices) {
        expect(notice).toMatchObject({ reason: REASON.DATE_TOO_FAR, details: { field: 'date', limit: limitSeconds } });
        const { latest } = (notice as unknown as { details: { latest: string } }).details;
        expect(Date.parse(latest)).toBeLessThan(Date.parse(tooFar));
        expect(Date.parse(latest)).toBeGreaterThan(within);
      }
      expect(notices.map((notice) => (notice.event as { action?: string }).action)).toContain('reschedule');
      expect((await records.get(`m-${messageId}`))?.dueAt).toBe(within);
    } finally {
      client.destroy();
      await Promise.all([target.stop(), failures.stop()]);
      await scheduler.stop();
    }
  });
});
