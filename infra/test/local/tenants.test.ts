import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  DynamoDbEventListing,
  EMISSION_ATTRIBUTE,
  EVENT_STATE,
  eventIdFor,
  openEventsCounterId,
  REASON,
  TABLE,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import {
  LOCAL_ACCOUNT,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type LocalScheduler,
  type LocalSchedulerOptions,
} from '../../src/local/runtime.js';
import { writeTenantsFile } from '../../src/local/tenants-file.js';
import {
  capturingLogger,
  expectNotEarly,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

const FOREIGN_ACCOUNT = '222222222222';

const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: [LOCAL_ACCOUNT] },
    // Its accounts hold none of the local topics: every local topic is foreign to it.
    { id: 'globex', accounts: [FOREIGN_ACCOUNT] },
  ],
};

const emulators = sharedEmulators();

async function setup(
  tenants: TenantsDocument = TENANTS,
  options: Pick<LocalSchedulerOptions, 'visibilityTimeoutSeconds' | 'instrumentClients' | 'onInvocation'> = {},
) {
  const { logger, lines } = capturingLogger();
  const scheduler = await startTestScheduler(emulators, { logger, tenants, env: FAST_TIMINGS, ...options });
  const clientOf = (tenant: string) => new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns[tenant]);
  return { scheduler, lines, clientOf };
}

/** Log lines that refused something for this reason. */
function refusals(lines: readonly Record<string, unknown>[], reason: string): Record<string, unknown>[] {
  return lines.filter((line) => line.reason === reason);
}

async function openEvents(scheduler: LocalScheduler, tenant: string): Promise<number | undefined> {
  const { Item } = await scheduler.clients.dynamodb.send(
    new GetCommand({
      TableName: scheduler.outputs.tableName,
      Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
      ConsistentRead: true,
    }),
  );
  return Item?.openEvents as number | undefined;
}

describe.concurrent('a tenant is who owns the input topic, never what the message says', () => {
  it('takes the tenant from the topic: a forged user is only an informational field', async () => {
    const { scheduler, clientOf, lines } = await setup();
    const acme = clientOf('acme');
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const dueAt = Date.now() + 2_000;
      await acme.publish(request(target.topicArn, dueAt, 'forged', { user: 'globex', id: 'order-1' }));
      await waitFor(
        () => new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName).get(eventIdFor('acme', '', 'order-1', '')),
        'the event',
      );
      // The same client id under another user names the same event of the same tenant: that request differs from the first, and is refused.
      await acme.publish(request(target.topicArn, dueAt, 'forged', { user: 'alice', id: 'order-1' }));
      await waitFor(() => refusals(lines, REASON.IDEMPOTENCY_KEY_REUSED).length === 1, 'the second request refused');
      const [delivery] = await waitFor(() => target.withPayload('forged').length > 0 && target.withPayload('forged'), 'the delivery');
      expectNotEarly(delivery);
      expect(delivery?.attributes[EMISSION_ATTRIBUTE.tenant]).toBe('acme');
      expect(delivery?.attributes[EMISSION_ATTRIBUTE.user]).toBe('globex');

      // The refused request, had it been taken, was due with the first: before a sentinel due later.
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('forged')).toHaveLength(1);
    } finally {
      acme.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it("refuses a target outside the tenant's accounts, on the tenant's own failure topic", async () => {
    const { scheduler, clientOf, lines } = await setup();
    const acme = clientOf('acme');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    const foreignTarget = `arn:aws:sns:${LOCAL_REGION}:${FOREIGN_ACCOUNT}:someone-elses-topic`;
    try {
      await acme.publish(request(foreignTarget, Date.now() + 1_000, 'not yours', { failure_topic: failures.topicArn }));
      const [notice] = await waitFor(() => failures.notices().length > 0 && failures.notices(), 'the notice');
      expect(notice).toMatchObject({ reason: REASON.TARGET_NOT_ALLOWED, event: { target: foreignTarget } });
      expect(refusals(lines, REASON.TARGET_NOT_ALLOWED)).toHaveLength(1);
    } finally {
      acme.destroy();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it("never publishes for a tenant to another account's topics, not even a failure notice", async () => {
    const { scheduler, clientOf, lines } = await setup();
    const globex = clientOf('globex');
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      await globex.publish(request(target.topicArn, Date.now() + 1_000, 'target'));
      await globex.publish(request(target.topicArn, Date.now() + 1_000, 'failure topic', { failure_topic: failures.topicArn }));
      await waitFor(() => refusals(lines, REASON.TARGET_NOT_ALLOWED).length === 1, 'the target refusal in the logs');
      await waitFor(() => refusals(lines, REASON.FAILURE_TOPIC_NOT_ALLOWED).length === 1, 'the failure topic refusal in the logs');

      // Both refused requests were due by now, and a notice goes out at ingest: a sentinel due later,
      // on the same target, comes after anything they could have sent.
      const acme = clientOf('acme');
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel', { failure_topic: failures.topicArn }));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      acme.destroy();
      expect(target.deliveries.map((delivery) => delivery.body)).toEqual(['sentinel']);
      expect(failures.deliveries).toHaveLength(0);
    } finally {
      globex.destroy();
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it("never lets the public tenant reach a registered tenant's topics, though the operator restricted nothing", async () => {
    const { scheduler, clientOf, lines } = await setup();
    const shared = new SchedulerClient(scheduler);
    // Acme's topics: local topics are in acme's account.
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const unregistered = `arn:aws:sns:${LOCAL_REGION}:333333333333:nobodys-topic`;
      await shared.publish(request(target.topicArn, Date.now() + 1_000, 'into acme'));
      await shared.publish(request(unregistered, Date.now(), 'notice into acme', { failure_topic: failures.topicArn }));
      await waitFor(() => refusals(lines, REASON.TARGET_NOT_ALLOWED).length === 1, 'the target refusal in the logs');
      await waitFor(() => refusals(lines, REASON.FAILURE_TOPIC_NOT_ALLOWED).length === 1, 'the failure topic refusal in the logs');

      // Both refused requests were due by now, and a notice goes out at ingest: a sentinel due later,
      // on the same target, comes after anything they could have sent.
      const acme = clientOf('acme');
      await acme.publish(request(target.topicArn, Date.now() + 1_500, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      acme.destroy();
      expect(target.deliveries.map((delivery) => delivery.body)).toEqual(['sentinel']);
      expect(failures.deliveries).toHaveLength(0);
    } finally {
      shared.destroy();
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it("refuses a message that came through no tenant's topic, in the logs", async () => {
    const { scheduler, lines } = await setup();
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const body = JSON.stringify(request(target.topicArn, Date.now() + 1_000, 'raw'));
      const envelope = {
        Type: 'Notification',
        MessageId: 'forged-envelope',
        TopicArn: `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:not-a-tenant-topic`,
        Message: body,
      };
      await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.ingestQueueUrl, MessageBody: body }));
      await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.ingestQueueUrl, MessageBody: JSON.stringify(envelope) }));
      await waitFor(() => refusals(lines, REASON.UNKNOWN_TENANT).length === 2, 'both refusals');
      expect(target.deliveries).toHaveLength(0);
    } finally {
      sqs.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('refuses everything on the shared topic once the operator disables the public tenant', async () => {
    const { scheduler, lines, clientOf } = await setup({ ...TENANTS, public: { enabled: false } });
    const shared = new SchedulerClient(scheduler);
    const acme = clientOf('acme');
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      await shared.publish(request(target.topicArn, Date.now() + 1_000, 'public'));
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'tenant'));
      await waitFor(() => target.withPayload('tenant').length > 0, "the tenant's event");
      await waitFor(() => refusals(lines, REASON.TENANT_DISABLED).length === 1, 'the refusal in the logs');
      expect(target.withPayload('public')).toHaveLength(0);
      expectNotEarly(target.withPayload('tenant')[0]);
    } finally {
      shared.destroy();
      acme.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });
});

describe("a tenant's user switch (requireUser)", () => {
  it('delivers requests without user, on either path, where the tenant allows them, and refuses them as MISSING_FIELD where it does not', async () => {
    const { scheduler, clientOf, lines } = await setup({
      tenants: [
        { id: 'acme', accounts: [LOCAL_ACCOUNT], requireUser: false },
        { id: 'initech', accounts: [LOCAL_ACCOUNT] },
      ],
    });
    const acme = clientOf('acme');
    const initech = clientOf('initech');
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const now = Date.now();
      // Near: straight to the delay queue; far (beyond the 6 s window): through the table and the loader.
      await acme.publish(request(target.topicArn, now + 2_000, 'near', { user: undefined, id: 'near' }));
      await acme.publish(request(target.topicArn, now + 9_000, 'far', { user: undefined, id: 'far' }));
      await initech.publish(request(target.topicArn, now + 2_000, 'refused', { user: undefined }));
      const deliveries = await waitFor(
        () => target.withPayload('near').length + target.withPayload('far').length === 2 && target.deliveries,
        'both deliveries',
      );
      for (const delivery of deliveries) {
        expectNotEarly(delivery);
        expect(delivery.attributes).not.toHaveProperty(EMISSION_ATTRIBUTE.user);
        expect(delivery.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(eventIdFor('acme', '', delivery.body, ''));
      }
      expect(refusals(lines, REASON.MISSING_FIELD)).toEqual([
        expect.objectContaining({ notice: expect.objectContaining({ event: expect.objectContaining({ payload: 'refused' }) }) }),
      ]);
      expect(target.withPayload('refused')).toHaveLength(0);
      const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
      const far = await waitFor(async () => {
        const record = await records.get(eventIdFor('acme', '', 'far', ''));
        return record?.state === EVENT_STATE.emitted && record;
      }, 'the far event recorded emitted');
      expect(far).not.toHaveProperty('user');
    } finally {
      acme.destroy();
      initech.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });
});

describe.concurrent('the registry as it stands when an event is due', () => {
  it("refuses at the due time a public event whose target account was registered as a tenant's since it was scheduled", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tenants-'));
    const tenantsFile = join(dir, 'tenants.json');
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: { file: tenantsFile }, env: FAST_TIMINGS });
    const shared = new SchedulerClient(scheduler);
    const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
    // Local topics are in the emulator's account: nobody's yet, so the public tenant may target them.
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const messageId = await shared.publish(
        request(target.topicArn, Date.now() + 5_000, 'since registered', { failure_topic: failures.topicArn }),
      );
      const eventId = `m-${messageId}`;
      await waitFor(async () => (await records.get(eventId))?.state === EVENT_STATE.queued, 'the event accepted');
      await writeTenantsFile(tenantsFile, { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT] }] });
      await waitFor(
        () => lines.some((line) => line.msg === 'tenants file read again; its registry is in force'),
        'the new registry in force',
      );

      const refusal = await waitFor(
        () => lines.find((line) => line.eventId === eventId && line.reason === REASON.TARGET_NOT_ALLOWED),
        'the refusal logged',
      );
      expect(refusal.msg).toContain(target.topicArn);
      await waitFor(async () => (await records.get(eventId))?.state === EVENT_STATE.failed, 'the event failed');
      expect(await records.get(eventId)).toMatchObject({ reason: REASON.TARGET_NOT_ALLOWED });
      // Neither the target nor the failure topic, now acme's, hears of it.
      expect(target.deliveries).toHaveLength(0);
      expect(failures.deliveries).toHaveLength(0);
    } finally {
      shared.destroy();
      await Promise.all([target.stop(), failures.stop()]);
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Every ReceiveMessage from a queue `slowed` names waits `delayMs` first: ingest works through a flood there for seconds, however fast or loaded the machine. */
function slowReceives(slowed: (queueUrl: string) => boolean, delayMs: number): LocalSchedulerOptions['instrumentClients'] {
  return (clients) =>
    clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { QueueUrl?: string };
        if (context.commandName === 'ReceiveMessageCommand' && input.QueueUrl !== undefined && slowed(input.QueueUrl)) {
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        }
        return next(args);
      },
      { step: 'initialize', name: 'slowReceives' },
    );
}

async function messagesWaiting(scheduler: LocalScheduler, queueUrl: string): Promise<number> {
  const { Attributes = {} } = await scheduler.clients.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes.ApproximateNumberOfMessages ?? 0);
}

/**
 * Publishes `flood` far-path requests through `publishers` (each validated, counted and stored,
 * as a real flood's would be), then acme's one request, and expects acme's event recorded while
 * `queueUrl` still holds some of the flood; stops the scheduler and the clients either way.
 */
async function expectAcmeTakenBeforeTheFlood(
  scheduler: LocalScheduler,
  flood: { readonly publishers: readonly SchedulerClient[]; readonly size: number; readonly target: string; readonly queueUrl: string },
  acme: SchedulerClient,
): Promise<void> {
  try {
    const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
    const dueAt = Date.now() + 3_600_000;
    const perPublisher = flood.size / flood.publishers.length;
    await Promise.all(
      flood.publishers.map((publisher, p) =>
        publisher.publishBatch(Array.from({ length: perPublisher }, (_, i) => request(flood.target, dueAt, `flood-${p}-${i}`))),
      ),
    );
    await acme.publish(
      request(`arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:acme-target`, dueAt, 'after the flood', { id: 'after-the-flood' }),
    );
    // Whichever comes first: acme's event recorded, or the queue handed out the flood's last request.
    const seen = await waitFor(
      async () => {
        const handled = (await records.get(eventIdFor('acme', '', 'after-the-flood', ''))) !== undefined;
        const waiting = await messagesWaiting(scheduler, flood.queueUrl);
        return (handled || waiting === 0) && { handled, waiting };
      },
      "the tenant's event, or the end of the flood",
      60_000,
    );
    expect(seen.handled).toBe(true);
    expect(seen.waiting).toBeGreaterThan(0);
  } finally {
    for (const publisher of flood.publishers) publisher.destroy();
    acme.destroy();
    await scheduler.stop();
  }
}

describe('a flood on one topic', () => {
  const FLOOD = 3_000;
  const RECEIVE_DELAY_MS = 500;

  it("does not hold up a registered tenant: its request is handled while the public tenant's queue still holds the flood", async () => {
    const scheduler = await startTestScheduler(emulators, {
      tenants: TENANTS,
      env: FAST_TIMINGS,
      instrumentClients: slowReceives((url) => url.endsWith('-public-ingest'), RECEIVE_DELAY_MS),
    });
    // To a topic of an account no tenant owns: the public tenant's to target.
    await expectAcmeTakenBeforeTheFlood(
      scheduler,
      {
        publishers: Array.from({ length: 4 }, () => new SchedulerClient(scheduler)),
        size: FLOOD,
        target: `arn:aws:sns:${LOCAL_REGION}:999999999999:flood-target`,
        queueUrl: scheduler.outputs.publicIngestQueueUrl,
      },
      new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme),
    );
  });

  it("does not hold up another registered tenant when each names itself as the publish's MessageGroupId: the ingest queue is a fair queue", async () => {
    const scheduler = await startTestScheduler(emulators, {
      tenants: TENANTS,
      env: FAST_TIMINGS,
      // The registered tenants' queue, not the public tenant's.
      instrumentClients: slowReceives((url) => url.endsWith('-ingest') && !url.endsWith('-public-ingest'), RECEIVE_DELAY_MS),
    });
    const globexTopic = scheduler.outputs.tenantInputTopicArns.globex;
    await expectAcmeTakenBeforeTheFlood(
      scheduler,
      {
        publishers: Array.from({ length: 4 }, () => new SchedulerClient(scheduler, globexTopic, 'globex')),
        size: FLOOD,
        target: `arn:aws:sns:${LOCAL_REGION}:${FOREIGN_ACCOUNT}:flood-target`,
        queueUrl: scheduler.outputs.ingestQueueUrl,
      },
      new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme, 'acme'),
    );
  });
});

describe('quotas', () => {
  it('admits exactly the open-event quota under concurrent ingest, and frees a place per cancel', async () => {
    // A request is decided again if SQS hands it out again; a visibility timeout as long as a
    // deployment's keeps busy batches (transactions retried on conflicts) from being redelivered.
    const { scheduler, clientOf } = await setup(
      { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], maxOpenEvents: 20 }] },
      { visibilityTimeoutSeconds: 30 },
    );
    const first = clientOf('acme');
    const clients = [first, ...Array.from({ length: 3 }, () => clientOf('acme'))];
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      // Far-path events (stored, still open for the whole test), published by four clients at once.
      const dueAt = Date.now() + 60_000;
      const batches = clients.map((client, c) =>
        client.publishBatch(
          Array.from({ length: 15 }, (_, i) =>
            request(target.topicArn, dueAt, `e-${c}-${i}`, { id: `e-${c}-${i}`, failure_topic: failures.topicArn }),
          ),
        ),
      );
      await Promise.all(batches);
      await waitFor(() => failures.notices().length === 40, '40 refusals', 30_000);
      expect(new Set(failures.notices().map((notice) => notice.reason))).toEqual(new Set([REASON.QUOTA_EXCEEDED]));
      expect(failures.notices()[0]).toMatchObject({ details: { quota: 'maxOpenEvents', limit: 20 } });
      expect(await openEvents(scheduler, 'acme')).toBe(20);

      const refused = new Set(failures.notices().map((notice) => (notice.event as { id: string }).id));
      const admitted = clients.flatMap((_, c) => Array.from({ length: 15 }, (__, i) => `e-${c}-${i}`)).filter((id) => !refused.has(id));
      expect(admitted).toHaveLength(20);
      await first.publishBatch(admitted.slice(0, 5).map((id) => ({ action: 'cancel', id })));
      await waitFor(async () => (await openEvents(scheduler, 'acme')) === 15, 'five places freed');
      await first.publishBatch(
        Array.from({ length: 6 }, (_, i) => request(target.topicArn, dueAt, `more-${i}`, { failure_topic: failures.topicArn })),
      );
      await waitFor(() => failures.notices().length === 41, 'the sixth refused');
      expect(await openEvents(scheduler, 'acme')).toBe(20);
    } finally {
      for (const client of clients) client.destroy();
      await target.stop();
      await failures.stop();
      await scheduler.stop();
    }
  });

  it('refuses a flood over the open-event quota with a few counter writes per batch, not one per event', async () => {
    const counterId = openEventsCounterId('acme');
    let counterWrites = 0;
    let batches = 0;
    const { scheduler, clientOf, lines } = await setup(
      { tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], maxOpenEvents: 5 }] },
      {
        instrumentClients: (clients) =>
          clients.dynamodb.middlewareStack.add(
            (next, context) => async (args) => {
              if (context.commandName === 'UpdateItemCommand' && JSON.stringify((args.input as { Key?: unknown }).Key).includes(counterId))
                counterWrites += 1;
              return next(args);
            },
            { step: 'initialize', name: 'countCounterWrites' },
          ),
        onInvocation: ({ fn, records }) => {
          if (fn === 'ingest' && records > 0) batches += 1;
        },
      },
    );
    const first = clientOf('acme');
    const clients = [first, ...Array.from({ length: 3 }, () => clientOf('acme'))];
    try {
      const dueAt = Date.now() + 60_000;
      const target = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:flood-target`;
      await first.publishBatch(Array.from({ length: 5 }, (_, i) => request(target, dueAt, `admitted-${i}`)));
      await waitFor(async () => (await openEvents(scheduler, 'acme')) === 5, 'the quota taken');
      // The count sees the counter's writes (the five admitted took their places with them), so
      // the bounds below cannot pass for want of seeing any.
      expect(counterWrites).toBeGreaterThan(0);
      counterWrites = 0;
      batches = 0;

      const FLOOD = 400;
      await Promise.all(
        clients.map((client, c) =>
          client.publishBatch(Array.from({ length: FLOOD / 4 }, (_, i) => request(target, dueAt, `flood-${c}-${i}`))),
        ),
      );
      await waitFor(() => refusals(lines, REASON.QUOTA_EXCEEDED).length === FLOOD, 'the whole flood refused', 40_000);
      expect(refusals(lines, REASON.QUOTA_EXCEEDED)[0]).toMatchObject({ notice: { details: { quota: 'maxOpenEvents', limit: 5 } } });
      expect(await openEvents(scheduler, 'acme')).toBe(5);
      // Each batch writes the counter at most twice (the batch's places, then the room left), and
      // none while the quota is known full; before, every refused event wrote it once.
      expect(counterWrites).toBeLessThanOrEqual(2 * batches);
      expect(counterWrites).toBeLessThan(FLOOD / 10);
    } finally {
      for (const client of clients) client.destroy();
      await scheduler.stop();
    }
  });

  it('frees every place when a burst due in one second is emitted: the count survives concurrent ends', async () => {
    const { scheduler, clientOf, lines } = await setup();
    const clients = Array.from({ length: 4 }, () => clientOf('acme'));
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const dueAt = Date.now() + 3_000;
      await Promise.all(
        clients.map((client, c) =>
          client.publishBatch(Array.from({ length: 75 }, (_, i) => request(target.topicArn, dueAt, `b-${c}-${i}`))),
        ),
      );
      await waitFor(() => target.deliveries.length === 300, 'all 300 events', 30_000);
      for (const delivery of target.deliveries) expectNotEarly(delivery, dueAt);
      await waitFor(async () => (await openEvents(scheduler, 'acme')) === 0, 'no event left open');
      expect(lines.filter((line) => String(line.msg).startsWith('emitted, but could not record it'))).toHaveLength(0);
    } finally {
      for (const client of clients) client.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });

  it('admits at most the ingest rate in any one second', async () => {
    const { scheduler, clientOf, lines } = await setup({ tenants: [{ id: 'acme', accounts: [LOCAL_ACCOUNT], maxIngestPerSecond: 10 }] });
    const clients = Array.from({ length: 4 }, () => clientOf('acme'));
    const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
    const stored = async () => (await records.listEvents('acme', { states: [EVENT_STATE.scheduled], limit: 100 })).events;
    try {
      const dueAt = Date.now() + 60_000;
      const target = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rate-target`;
      await Promise.all(
        clients.map((client, c) => client.publishBatch(Array.from({ length: 20 }, (_, i) => request(target, dueAt, `r-${c}-${i}`)))),
      );
      await waitFor(async () => (await stored()).length + refusals(lines, REASON.QUOTA_EXCEEDED).length === 80, 'all 80 decided', 40_000);
      expect(refusals(lines, REASON.QUOTA_EXCEEDED)[0]).toMatchObject({ notice: { details: { quota: 'maxIngestPerSecond', limit: 10 } } });
      const admitted = await stored();
      // The bound below is over the seconds of what was admitted: over none, Math.max is -Infinity, under any bound.
      expect(admitted.length).toBeGreaterThan(0);
      const perSecond = new Map<number, number>();
      for (const { createdAt } of admitted)
        perSecond.set(Math.floor(createdAt / 1000), (perSecond.get(Math.floor(createdAt / 1000)) ?? 0) + 1);
      expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(10);
    } finally {
      for (const client of clients) client.destroy();
      await scheduler.stop();
    }
  });
});

describe.concurrent("a tenant's dead-letter topic", () => {
  it('receives every notice no usable failure topic takes, but a refusal its failure topic did not take; the public tenant has its own', async () => {
    const acmeDeadLetters = await TopicConsumer.create(emulators.messagingEndpoint, 'acme-dead-letters');
    const publicDeadLetters = await TopicConsumer.create(emulators.messagingEndpoint, 'public-dead-letters');
    const { scheduler, clientOf, lines } = await setup({
      public: { deadLetterTopic: publicDeadLetters.topicArn },
      tenants: [
        { id: 'acme', accounts: ['111111111111'], targetAccounts: [LOCAL_ACCOUNT], deadLetterTopic: acmeDeadLetters.topicArn },
        { id: 'globex', accounts: [FOREIGN_ACCOUNT] },
      ],
    });
    const acme = clientOf('acme');
    const shared = new SchedulerClient(scheduler);
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    try {
      const local = (name: string, region = LOCAL_REGION) => `arn:aws:sns:${region}:${LOCAL_ACCOUNT}:${name}`;
      const missingTopic = local('no-such-topic');
      const target = local('some-target');
      await acme.publish('not json');
      await acme.publish(request(target, Date.now(), 'p', { date: 'no failure topic' }));
      await acme.publish(
        request(target, Date.now(), 'p', { failure_topic: `arn:aws:sns:${LOCAL_REGION}:${FOREIGN_ACCOUNT}:globex-failures` }),
      );
      await acme.publish(request(target, Date.now(), 'p', { failure_topic: local('failures', 'eu-west-1') }));
      await acme.publish(request(target, Date.now(), 'p', { date: 'failure topic missing', failure_topic: missingTopic }));
      await acme.publish(request(missingTopic, Date.now(), 'emission fails'));
      await acme.publish(request(target, Date.now(), 'p', { date: 'failure topic works', failure_topic: failures.topicArn }));
      await shared.publish('not json either');
      await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.ingestQueueUrl, MessageBody: 'from no input topic' }));

      await waitFor(() => acmeDeadLetters.notices().length === 5, "five notices on acme's dead-letter topic");
      expect(
        acmeDeadLetters
          .notices()
          .map((notice) => notice.reason)
          .sort(),
      ).toEqual([
        REASON.FAILURE_TOPIC_IN_OTHER_REGION,
        REASON.FAILURE_TOPIC_NOT_ALLOWED,
        REASON.INVALID_DATE,
        REASON.INVALID_JSON,
        REASON.TARGET_NOT_FOUND,
      ]);
      const dates = acmeDeadLetters
        .notices()
        .flatMap(({ event }) => (typeof event === 'object' && event !== null ? [(event as { date?: string }).date] : []));
      expect(dates).toContain('no failure topic');
      expect(dates).not.toContain('failure topic missing');
      // A refusal is published once at most: the failure topic that did not take it was that once.
      await waitFor(
        () => lines.some((line) => line.msg === 'failure topic cannot take the notice' && line.topic === missingTopic),
        'the refusal the missing failure topic did not take, in the logs',
      );
      await waitFor(
        () => failures.notices().length === 1 && publicDeadLetters.notices().length === 1,
        'the notice on the failure topic and the public one',
      );
      expect(failures.notices()[0]?.event).toMatchObject({ date: 'failure topic works' });
      expect(publicDeadLetters.notices()[0]).toMatchObject({ reason: REASON.INVALID_JSON, event: 'not json either' });
      await waitFor(() => refusals(lines, REASON.UNKNOWN_TENANT).length === 1, 'the unknown tenant in the logs');
      expect(acmeDeadLetters.notices()).toHaveLength(5);
      expect(publicDeadLetters.notices()).toHaveLength(1);
    } finally {
      acme.destroy();
      shared.destroy();
      sqs.destroy();
      await Promise.all([acmeDeadLetters.stop(), publicDeadLetters.stop(), failures.stop()]);
      await scheduler.stop();
    }
  });
});
