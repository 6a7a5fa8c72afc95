import { describe, expect, it } from 'vitest';
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { decodeDelayQueueMessage, encodeLoadingChunk, eventIdFor, PUBLIC_TENANT_ID, REASON, systemClock } from '@adhoc-scheduler/shared';
import { createDependencies, handlers, type AwsClients } from '@adhoc-scheduler/functions';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import {
  capturingLogger,
  expectNotEarly,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  storedItem,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();

/** Records every event id the service sends to its delay queue. */
function recordDelayQueueSends(sent: string[]): (clients: AwsClients) => void {
  return (clients) => {
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Partial<SendMessageBatchCommandInput>;
        if (context.commandName === 'SendMessageBatchCommand' && input.QueueUrl?.endsWith('-delay')) {
          for (const entry of input.Entries ?? []) {
            const message = decodeDelayQueueMessage(entry.MessageBody ?? '');
            if (message.kind === 'event') sent.push(message.event.id);
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordDelayQueueSends' },
    );
  };
}

async function setup(options: { namePrefix?: string; sent?: string[] } = {}) {
  const scheduler = await startTestScheduler(emulators, {
    env: FAST_TIMINGS,
    ...(options.namePrefix ? { namePrefix: options.namePrefix } : {}),
    ...(options.sent ? { instrumentClients: recordDelayQueueSends(options.sent) } : {}),
  });
  const client = new SchedulerClient(scheduler);
  return { scheduler, client };
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

describe.concurrent('far path (stored in DynamoDB, moved by the loader)', () => {
  it('stores an event due beyond the window and delivers it on time through the loader', async () => {
    const { scheduler, client } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const dueAt = Date.now() + 9_000;
      const messageId = await client.publish(request(target.topicArn, dueAt, 'far'));
      const item = await waitFor(
        () => storedItem(scheduler, eventIdFor(PUBLIC_TENANT_ID, 'tests', undefined, messageId)),
        'the stored event',
      );
      // In the tenant index under its tenant's stored family; not in the time-bucket index of earlier versions.
      expect(item.tenantShard).toMatch(/^public#s\d$/);
      expect(item).not.toHaveProperty('bucketShard');
      expect(item.dueAt).toBe(dueAt);

      const delivery = await waitFor(() => target.withPayload('far')[0], 'the delivery');
      expectNotEarly(delivery, dueAt);
      // The emitter records the emission after the publish: the consumer may have the event first.
      const loaded = await waitFor(async () => {
        const stored = await storedItem(scheduler, eventIdFor(PUBLIC_TENANT_ID, 'tests', undefined, messageId));
        return stored?.state === 'emitted' && stored;
      }, 'the emission recorded');
      expect(loaded.loadedBy).toEqual(expect.any(String));
      expect(loaded.emittedAt).toBeGreaterThanOrEqual(dueAt);
    } finally {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('keeps the first request with an id: another with the same user and id is refused, and cannot replace the stored payload', async () => {
    const { scheduler, client } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      // On the shared input topic anyone can send both: the key is only a user and an id.
      const key = { user: 'alice', id: 'order-1', failure_topic: failures.topicArn };
      const id = eventIdFor(PUBLIC_TENANT_ID, 'alice', 'order-1', '');
      // Payloads over 1 KB: each is kept in an item of its own, written before the record's conditional insert.
      const first = `first ${'a'.repeat(2_000)}`;
      const second = `second ${'b'.repeat(2_000)}`;
      const dueAt = Date.now() + 9_000;
      await client.publish(request(target.topicArn, dueAt, first, key));
      expect(await waitFor(() => storedItem(scheduler, id), 'the first request stored')).toMatchObject({ payloadKept: 'item' });
      await client.publish(request(target.topicArn, dueAt, second, key));

      const delivery = await waitFor(() => target.deliveries[0], 'the delivery', 30_000);
      expect(delivery.body).toBe(first);
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the refusal');
      expect(notice).toMatchObject({
        reason: REASON.IDEMPOTENCY_KEY_REUSED,
        eventId: id,
        details: { field: 'id', eventId: id },
        event: { payload: second },
      });
      // The second request, had it been taken, was due with the first: it would arrive before a sentinel due later.
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.deliveries.map((d) => d.body)).toEqual([first, 'sentinel']);
    } finally {
      client.destroy();
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it('never misses events due just past the near-path window (window to window plus one loader interval)', async () => {
    const { scheduler, client } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const windowMs = scheduler.config.nearPathWindowSeconds * 1000;
      const intervalMs = scheduler.config.loaderIntervalSeconds * 1000;
      const start = Date.now();
      const requests = Array.from({ length: 60 }, (_, i) => {
        const dueAt = start + windowMs - 500 + Math.round(((intervalMs + 1_500) * i) / 59);
        return request(target.topicArn, dueAt, `edge-${i}`);
      });
      await client.publishBatch(requests);
      await waitFor(() => new Set(target.deliveries.map((d) => d.body)).size === 60, 'all 60 events', 30_000);
      // A copy a later tick sent again would be overdue, so emitted before a sentinel due a loader interval later.
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      const edge = target.deliveries.filter((d) => d.body.startsWith('edge-'));
      expect(edge).toHaveLength(60);
      for (const delivery of edge) expectNotEarly(delivery);
    } finally {
      client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('sends nothing twice when a loader tick runs twice or a loading batch is delivered twice', async () => {
    const sent: string[] = [];
    const { scheduler, client } = await setup({ sent });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    try {
      // Far enough out that the runtime's own ticks (4 s of lookahead) hand out none of them before
      // the extra ticks run, however slowly a busy machine stores them.
      const dueAt = Date.now() + 15_000;
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const messageId = await client.publish(request(target.topicArn, dueAt + i * 50, `twice-${i}`));
        ids.push(eventIdFor(PUBLIC_TENANT_ID, 'tests', undefined, messageId));
      }
      await waitFor(async () => (await Promise.all(ids.map((id) => storedItem(scheduler, id)))).every(Boolean), 'all stored');

      // Two extra ticks at once, besides the runtime's own, on a clock that already sees the
      // events coming due (so both hand out all 20), and the same chunk delivered twice.
      const loaderDeps = createDependencies('loader', scheduler.config, scheduler.clients, {
        logger: capturingLogger().logger,
        clock: { now: () => dueAt - 2_000, sleep: systemClock.sleep },
      });
      const ticks = await Promise.all([handlers.loader(loaderDeps), handlers.loader(loaderDeps)]);
      expect(ticks.map((tick) => tick.eventsFound)).toEqual([20, 20]);
      const chunk = encodeLoadingChunk({ ids });
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: scheduler.outputs.loadingQueueUrl,
          Entries: [
            { Id: 'first', MessageBody: chunk },
            { Id: 'again', MessageBody: chunk },
          ],
        }),
      );

      await waitFor(() => target.deliveries.length >= 20, 'all 20 events', 30_000);
      // Every copy the extra ticks and the chunk sent twice could make was due with the 20: before the sentinel.
      await client.publish(request(target.topicArn, Date.now() + 1_500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.deliveries.filter((d) => d.body.startsWith('twice-'))).toHaveLength(20);
      for (const delivery of target.deliveries) expectNotEarly(delivery);
      const sends = countBy(sent.filter((id) => ids.includes(id)));
      expect([...sends.values()].every((count) => count === 1)).toBe(true);
      expect(sends.size).toBe(20);
    } finally {
      sqs.destroy();
      client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('catches up after an outage: events that came due while the loader was down are delivered late, once', async () => {
    const namePrefix = uniqueName('outage');
    const first = await setup({ namePrefix });
    const target = await TopicConsumer.create(first.scheduler.outputs.endpoint, 'target');
    const dueAt = Date.now() + 10_000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const messageId = await first.client.publish(request(target.topicArn, dueAt, `outage-${i}`));
      ids.push(eventIdFor(PUBLIC_TENANT_ID, 'tests', undefined, messageId));
    }
    await waitFor(async () => (await Promise.all(ids.map((id) => storedItem(first.scheduler, id)))).every(Boolean), 'all stored');
    first.client.destroy();
    await first.scheduler.stop();
    await waitFor(() => Date.now() > dueAt + 2_000, 'the events to be overdue');
    expect(target.deliveries).toHaveLength(0);

    const second = await setup({ namePrefix });
    try {
      await waitFor(() => target.deliveries.length >= 5, 'the overdue events');
      // A copy sent again by a later catch-up tick would be overdue, so emitted before a sentinel due later.
      await second.client.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.deliveries.filter((d) => d.body.startsWith('outage-'))).toHaveLength(5);
      for (const delivery of target.deliveries) expectNotEarly(delivery);
    } finally {
      second.client.destroy();
      await target.stop();
      await second.scheduler.stop();
    }
  });
});
