import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type SendMessageBatchCommandInput,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import {
  encodeDelayQueueMessage,
  encodeLoadingChunk,
  encodeNoticePack,
  eventIdFor,
  PUBLIC_TENANT_ID,
  REASON,
  type ScheduledEvent,
} from '@adhoc-scheduler/shared';
import { readDeadLetterBody } from '../../src/admin/dead-letter-bodies.js';
import { isControlCharacter } from '../../src/admin/format.js';
import { queueOutputKeys, SCHEDULER_OUTPUTS } from '../../src/cdk/stack-outputs.js';
import { MAX_RECEIVE_COUNT } from '../../src/queues.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, type LocalSchedulerOptions } from '../../src/local/runtime.js';
import { admin, adminScript, deployedSdkEnvironment } from './admin-run.js';
import {
  capturingLogger,
  closedEndpoint,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

const INPUT = 'arn:aws:sns:us-east-1:000000000000:scheduler-1a2b-input';

describe.concurrent('what a dead letter says of itself', () => {
  it("tells an input message's queue, tenant and event by its topic and request, as ingest derives them; none for a topic of another account or region", () => {
    const envelope = (topicArn: string, request: unknown) =>
      JSON.stringify({ Type: 'Notification', MessageId: 'sns-1', TopicArn: topicArn, Message: JSON.stringify(request) });
    expect(readDeadLetterBody(envelope(INPUT, { user: 'u', labels: ['blue', 'x:1'] }), INPUT)).toEqual({
      source: 'public-ingest',
      tenant: PUBLIC_TENANT_ID,
      eventIds: ['m-sns-1'],
      labels: ['blue', 'x:1'],
      dueAt: undefined,
    });
    const acme = 'arn:aws:sns:us-east-1:000000000000:scheduler-1a2b-tenant-acme';
    expect(readDeadLetterBody(envelope(acme, { user: 'u', id: 'order-7' }), INPUT)).toMatchObject({
      source: 'ingest',
      tenant: 'acme',
      eventIds: [eventIdFor('acme', 'u', 'order-7', 'sns-1')],
    });
    expect(readDeadLetterBody(envelope(acme, { action: 'cancel', event_id: 'm-abc' }), INPUT)).toMatchObject({ eventIds: ['m-abc'] });
    // A topic of the same name in another account or region: nothing the scheduler's SNS delivered, so no queue to go back to.
    for (const elsewhere of [
      'arn:aws:sns:us-east-1:999999999999:scheduler-1a2b-tenant-acme',
      'arn:aws:sns:eu-west-1:000000000000:scheduler-1a2b-tenant-acme',
      'arn:aws:sns:us-east-1:999999999999:scheduler-1a2b-input',
    ])
      expect(readDeadLetterBody(envelope(elsewhere, { user: 'u', id: 'order-7' }), INPUT)).toEqual({
        source: undefined,
        tenant: undefined,
        eventIds: [],
        labels: [],
        dueAt: undefined,
      });
    // Another scheduler's topic, or a request that is not JSON: the queue is known, whose it is not.
    expect(readDeadLetterBody(envelope('arn:aws:sns:us-east-1:000000000000:other-tenant-acme', 'x'), INPUT)).toMatchObject({
      source: 'ingest',
      tenant: undefined,
      eventIds: [],
    });
  });

  it('tells the delay queue, the loading queue and a bulk change by their bodies; anything else is unknown', () => {
    const event = { id: 'm-1', tenant: 'acme', user: 'u', target: 't', payload: 'p', dueAt: 5, version: 1, labels: ['blue'] };
    expect(readDeadLetterBody(encodeDelayQueueMessage({ kind: 'event', event: event as ScheduledEvent, queuedBy: 'q' }), INPUT)).toEqual({
      source: 'delay',
      tenant: 'acme',
      eventIds: ['m-1'],
      labels: ['blue'],
      dueAt: 5,
    });
    // Notices, alone or packed: their tenant and the events they tell of.
    const notice = (noticeId: string, eventId?: string) =>
      encodeDelayQueueMessage({
        kind: 'notice',
        noticeId,
        tenant: 'acme',
        failureTopic: 'f',
        notice: { reason: REASON.PUBLISH_FAILED, message: 'm', event: {}, failedAt: 'x', details: {}, ...(eventId ? { eventId } : {}) },
      });
    expect(readDeadLetterBody(notice('n-1', 'm-1'), INPUT)).toMatchObject({ source: 'delay', tenant: 'acme', eventIds: ['m-1'] });
    expect(readDeadLetterBody(encodeNoticePack([notice('n-1', 'm-1'), notice('n-2'), notice('n-3', 'm-3')]), INPUT)).toMatchObject({
      source: 'delay',
      tenant: 'acme',
      eventIds: ['m-1', 'm-3'],
    });
    expect(readDeadLetterBody(encodeLoadingChunk({ ids: ['m-1', 'm-2'], chunkId: 'c' }), INPUT)).toMatchObject({
      source: 'loading',
      eventIds: ['m-1', 'm-2'],
    });
    expect(readDeadLetterBody(JSON.stringify({ jobId: 'j-1', tenant: 'acme', label: 'blue' }), INPUT)).toMatchObject({
      source: 'changes',
      tenant: 'acme',
      labels: ['blue'],
    });
    for (const body of ['not json', '[]', '{"kind":"other"}']) expect(readDeadLetterBody(body, INPUT).source).toBeUndefined();
  });
});

const emulators = sharedEmulators();

/** A running local service and its outputs file, as scripts/start leaves them, with a client and a target topic. */
async function setup(options: Pick<LocalSchedulerOptions, 'instrumentClients' | 'visibilityTimeoutSeconds' | 'logger' | 'env'> = {}) {
  const service = await startServiceWithFiles(emulators, options);
  const { dir, scheduler, outputsFile } = service;
  const client = new SchedulerClient(scheduler);
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
  return {
    dir,
    scheduler,
    client,
    target,
    sqs,
    where: ['--outputs', outputsFile],
    /** Sets a message aside in the dead-letter queue, as SQS does with one that failed every delivery. */
    async setAside(body: string): Promise<void> {
      await sqs.send(new SendMessageCommand({ QueueUrl: scheduler.outputs.deadLetterQueueUrl, MessageBody: body }));
    },
    async teardown() {
      client.destroy();
      sqs.destroy();
      await target.stop();
      await service.stop();
    },
  };
}

interface Listed {
  readonly messageId: string;
  readonly queue: string;
  readonly receiveCount: number;
  readonly firstSent: string | null;
  readonly tenant: string | null;
  readonly eventIds: string[];
  readonly labels: string[];
  readonly lastError: { fn: string; name: string; message: string; at: string; receiveCount: number } | null;
  readonly body?: string;
}

/** The dead letters `list --json` chooses with these arguments. */
async function listed(...args: string[]): Promise<Listed[]> {
  const run = await admin('dead-letters', 'list', '--json', ...args);
  if (run.code !== 0) throw new Error(`dead-letters list failed (${run.code}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { messages: Listed[] }).messages;
}

describe.concurrent('scripts/admin dead-letters', () => {
  it('lists an input that failed on every delivery with its last error, tenant and event; shows it; redrives it once fixed', async () => {
    const payload = uniqueName('refused-by-the-table');
    let tableRefuses = true;
    const { client, target, where, teardown } = await setup({
      // A failed batch comes back after a second: the ten deliveries before the dead-letter queue take seconds.
      visibilityTimeoutSeconds: 1,
      instrumentClients: (clients) =>
        clients.dynamodb.middlewareStack.add(
          (next) => async (args) => {
            if (tableRefuses && JSON.stringify(args.input).includes(payload)) throw new Error('the table refuses this event');
            return next(args);
          },
          { step: 'build', name: 'refuseOneEvent' },
        ),
    });
    try {
      // Its record carries the user (a near-path record has no payload): the fault refuses that record's writes.
      const snsMessageId = await client.publish(request(target.topicArn, Date.now(), payload, { user: payload }));
      const eventId = `m-${snsMessageId}`;
      const [letter] = await waitFor(
        async () => {
          const found = await listed('--queue', 'public-ingest', '--event', eventId, ...where);
          return found.length > 0 && found;
        },
        'the input in the dead-letter queue',
        90_000,
      );
      expect(letter).toMatchObject({ queue: 'public-ingest', tenant: PUBLIC_TENANT_ID, eventIds: [eventId], labels: [] });
      // Ten deliveries, then the one that moved it, then the peeks.
      expect(letter?.receiveCount).toBeGreaterThan(10);
      expect(Date.parse(letter?.firstSent ?? '')).toBeLessThanOrEqual(Date.now());
      expect(letter?.lastError).toMatchObject({ fn: 'ingest', name: 'TransientError' });
      // A delivery whose batch waited out the short visibility timeout was handed out again unhandled: at most ten failed.
      expect(letter?.lastError?.receiveCount).toBeGreaterThan(0);
      expect(letter?.lastError?.receiveCount).toBeLessThanOrEqual(MAX_RECEIVE_COUNT.local);

      // Filters that do not match choose nothing.
      expect(await listed('--queue', 'delay', '--event', eventId, ...where)).toEqual([]);
      expect(await listed('--tenant', 'acme', '--event', eventId, ...where)).toEqual([]);

      const shown = await admin('dead-letters', 'show', letter?.messageId ?? '', '--json', ...where);
      expect(shown.code).toBe(0);
      const { body, ...rest } = JSON.parse(shown.stdout) as Listed;
      expect(rest).toMatchObject({ messageId: letter?.messageId, lastError: { fn: 'ingest' } });
      expect(body).toContain(payload);
      const text = await admin('dead-letters', 'show', letter?.messageId ?? '', ...where);
      expect(text.stdout).toMatch(/last error +ingest: TransientError: /);

      // Fixed: the redriven input is ingested, and its event delivered once.
      tableRefuses = false;
      const redrive = await admin('dead-letters', 'redrive', '--event', eventId, ...where);
      expect(redrive).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`redriven ${letter?.messageId} to the public-ingest queue`),
      });
      await waitFor(() => target.withPayload(payload).length > 0, 'the delivery of the redriven input');
      expect(target.withPayload(payload)).toHaveLength(1);
      // Gone from the dead-letter queue. (On a busy machine the redriven copy itself may be handed
      // out again past the one-second visibility timeout until SQS sets it aside too: not a failure.)
      expect((await listed('--event', eventId, ...where)).map(({ messageId }) => messageId)).not.toContain(letter?.messageId);
    } finally {
      await teardown();
    }
  }, 150_000);

  it('redrives a delay-queue copy that delivers its event once, never early; a copy of an event already emitted delivers nothing', async () => {
    const payload = uniqueName('set-aside');
    const { logger, lines } = capturingLogger();
    const queues = { delay: '', deadLetters: '' };
    let copy = '';
    const { scheduler, target, client, where, setAside, teardown } = await setup({
      logger,
      // Time for the commands below before the due time, on a busy machine.
      env: { ...FAST_TIMINGS, SCHEDULER_NEAR_PATH_WINDOW_SECONDS: '60' },
      // Ingest's copy lands in the dead-letter queue instead of the delay queue: as if it had failed every delivery.
      instrumentClients: (clients) =>
        clients.sqs.middlewareStack.add(
          (next, context) => async (args) => {
            const input = args.input as Partial<SendMessageBatchCommandInput>;
            if (
              context.commandName !== 'SendMessageBatchCommand' ||
              input.QueueUrl !== queues.delay ||
              !JSON.stringify(input.Entries).includes(payload)
            )
              return next(args);
            copy = input.Entries?.[0]?.MessageBody ?? '';
            // Visible there at once, as a message SQS moves after its last delivery.
            const entries = input.Entries?.map((entry) => ({ ...entry, DelaySeconds: 0 }));
            return next({ ...args, input: { ...input, QueueUrl: queues.deadLetters, Entries: entries } });
          },
          { step: 'initialize', name: 'setCopyAside' },
        ),
    });
    queues.delay = scheduler.outputs.delayQueueUrl;
    queues.deadLetters = scheduler.outputs.deadLetterQueueUrl;
    try {
      const dueAt = Date.now() + 25_000;
      const eventId = `m-${await client.publish(request(target.topicArn, dueAt, payload))}`;
      const [letter] = await waitFor(async () => {
        const found = await listed('--queue', 'delay', '--event', eventId, ...where);
        return found.length > 0 && found;
      }, 'the copy in the dead-letter queue');
      expect(letter).toMatchObject({ queue: 'delay', tenant: PUBLIC_TENANT_ID, lastError: null });

      const redrive = await admin('dead-letters', 'redrive', '--queue', 'delay', '--event', eventId, ...where);
      expect(redrive.code).toBe(0);
      expect(Date.now()).toBeLessThan(dueAt);
      const [delivery] = await waitFor(
        () => target.withPayload(payload).length > 0 && target.withPayload(payload),
        'the delivery of the redriven copy',
        60_000,
      );
      expect(delivery?.receivedAt).toBeGreaterThanOrEqual(dueAt);

      // The same copy set aside again, after its event was emitted: redriven, dropped by the emitter.
      await setAside(copy);
      const again = await admin('dead-letters', 'redrive', '--event', eventId, ...where);
      expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining('1 message redriven') });
      await waitFor(
        () => lines.some((line) => line.msg === 'already emitted; duplicate suppressed' && line.eventId === eventId),
        'the emitter dropping the redriven copy',
      );
      expect(target.withPayload(payload)).toHaveLength(1);
    } finally {
      await teardown();
    }
  }, 120_000);

  it('purges only the messages its filters choose, and only with --yes, as the operator runs it', async () => {
    const { scheduler, dir, where, setAside, teardown } = await setup();
    const copy = (id: string, tenant: string, labels: string[]) =>
      encodeDelayQueueMessage({
        kind: 'event',
        event: { id, tenant, user: 'u', target: 't', payload: 'p', dueAt: Date.now(), version: 1, ...{ labels } } as ScheduledEvent,
      });
    try {
      await setAside(copy('m-blue', PUBLIC_TENANT_ID, ['blue']));
      await setAside(copy('m-acme', 'acme', []));
      await setAside(encodeLoadingChunk({ ids: ['m-loaded'], chunkId: 'chunk-1' }));
      await setAside('not a message of the scheduler');
      const ids = (letters: readonly Listed[]) => letters.flatMap(({ eventIds }) => eventIds).sort();
      expect(ids(await listed(...where))).toEqual(['m-acme', 'm-blue', 'm-loaded']);
      expect(ids(await listed('--label', 'blue', ...where))).toEqual(['m-blue']);
      expect(ids(await listed('--queue', 'loading', ...where))).toEqual(['m-loaded']);

      const refused = await adminScript(['dead-letters', 'purge', '--tenant', 'acme', ...where]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--yes');
      expect(ids(await listed('--tenant', 'acme', ...where))).toEqual(['m-acme']);

      const purged = await adminScript(['dead-letters', 'purge', '--tenant', 'acme', '--yes', ...where]);
      expect(purged).toMatchObject({ code: 0, stdout: expect.stringContaining('1 message purged') });
      const left = await listed(...where);
      expect(ids(left)).toEqual(['m-blue', 'm-loaded']);
      // What is none of the scheduler's is listed under --queue all, and cannot be redriven.
      expect(left.filter(({ queue }) => queue === 'unknown')).toHaveLength(1);
      const redrive = await admin('dead-letters', 'redrive', '--queue', 'all', '--dry-run', ...where);
      expect(redrive.code).toBe(1);
      expect(redrive.stderr).toContain('no unknown queue to send it back to');
      expect(redrive.stdout).toContain('2 messages would be redriven');
      expect(ids(await listed(...where))).toEqual(['m-blue', 'm-loaded']);

      // Outputs left behind by a service that has stopped: said as the other commands say it.
      const endpoint = await closedEndpoint();
      const stale = join(dir, 'stale-outputs.json');
      await writeFile(
        stale,
        JSON.stringify({ ...scheduler.outputs, endpoint, dynamodbEndpoint: endpoint, ingestQueueUrl: `${endpoint}/000000000000/gone` }),
      );
      const stopped = await admin('dead-letters', 'list', '--outputs', stale);
      expect(stopped).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/not running .*Start it with scripts\/start/) });
    } finally {
      await teardown();
    }
  });

  it("prints a body's control characters escaped, in every view: what a publisher planted never reaches the terminal", async () => {
    const { scheduler, where, setAside, teardown } = await setup();
    // Planted where the tools print it: a label (the list's table), the request (the body), the event id.
    const planted = '\u001b]8;;https://example.com\u0007\u009b2J\u001b[31m\r\nforged line\u007f';
    const request = { user: planted, id: planted, labels: [planted], payload: 'p', target: 't', date: 'd' };
    const body = JSON.stringify({
      Type: 'Notification',
      MessageId: 'sns-1',
      TopicArn: scheduler.outputs.inputTopicArn,
      Message: JSON.stringify(request),
    });
    // Every control character but the tools' own line breaks.
    const controls = (text: string) => [...text].some((char) => char !== '\n' && isControlCharacter(char.charCodeAt(0)));
    try {
      await setAside(body);
      const list = await admin('dead-letters', 'list', ...where);
      const [line] = list.stdout.split('\n').filter((text) => text.includes('public-ingest'));
      expect(line).toContain('\\u001b]8;;https://example.com\\u0007\\u009b2J\\u001b[31m\\u000d\\u000aforged line\\u007f');
      const [{ messageId }] = (await listed(...where)) as [Listed];
      const shown = await admin('dead-letters', 'show', messageId, ...where);
      const json = await admin('dead-letters', 'show', messageId, '--json', ...where);
      for (const run of [list, shown, json]) {
        expect(run.code).toBe(0);
        expect(controls(run.stdout)).toBe(false);
        expect(run.stdout).not.toContain('\nforged line');
      }
      // The JSON is still JSON, and says what the body holds.
      expect((JSON.parse(json.stdout) as { body: string }).body).toBe(body);
    } finally {
      await teardown();
    }
  });

  it("reads a deployed stack's dead-letter queues named by its cdk outputs, and redrives to the queue they name", async () => {
    const { scheduler, dir, sqs, teardown } = await setup();
    // The URL names the endpoint, as an AWS queue URL names SQS's (the SDK sends to its host).
    const queue = async (label: string) => {
      const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName(label) }));
      return `${scheduler.outputs.endpoint}${new URL(QueueUrl).pathname}`;
    };
    try {
      // A stack's loading queue and its own dead-letter queue, which the outputs name.
      const [loading, loadingDeadLetters] = [await queue('loading'), await queue('loading-dead-letters')];
      for (const ids of [['m-a'], ['m-b']])
        await sqs.send(new SendMessageCommand({ QueueUrl: loadingDeadLetters, MessageBody: encodeLoadingChunk({ ids, chunkId: ids[0] }) }));
      const keys = queueOutputKeys('loading');
      const stackOutputs = join(dir, 'cdk-outputs.json');
      await writeFile(
        stackOutputs,
        JSON.stringify({
          AdhocScheduler: {
            [SCHEDULER_OUTPUTS.tableName]: scheduler.outputs.tableName,
            [SCHEDULER_OUTPUTS.region]: LOCAL_REGION,
            [SCHEDULER_OUTPUTS.inputTopicArn]: scheduler.outputs.inputTopicArn,
            [keys.queueUrl]: loading,
            [keys.deadLetterQueueUrl]: loadingDeadLetters,
          },
        }),
      );
      const awsEnvironment = deployedSdkEnvironment(scheduler.outputs);
      const where = ['--stack-outputs', stackOutputs];
      const redrive = await adminScript(['dead-letters', 'redrive', '--event', 'm-a', ...where], awsEnvironment);
      expect(redrive).toMatchObject({ stderr: '', code: 0, stdout: expect.stringContaining('1 message redriven') });
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: loading, WaitTimeSeconds: 1 }));
      expect(Messages.map(({ Body }) => Body)).toEqual([encodeLoadingChunk({ ids: ['m-a'], chunkId: 'm-a' })]);
      const left = await adminScript(['dead-letters', 'list', '--json', ...where], awsEnvironment);
      expect(left.code).toBe(0);
      // The queue is the dead-letter queue's, whatever the body.
      expect((JSON.parse(left.stdout) as { messages: Listed[] }).messages).toMatchObject([{ queue: 'loading', eventIds: ['m-b'] }]);
      // A stack without the queue named says so.
      const changes = await admin('dead-letters', 'list', '--queue', 'changes', ...where);
      expect(changes).toMatchObject({ code: 1, stderr: expect.stringContaining('has no changes queue') });
    } finally {
      await teardown();
    }
  });
});
