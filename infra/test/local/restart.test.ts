import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PublishCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DynamoDbEventListing,
  EMISSION_ATTRIBUTE,
  EVENT_STATE,
  messageEventId,
  occurrenceId,
  retakeDelayMs,
  seriesId,
} from '@adhoc-scheduler/shared';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { LOCAL_CREDENTIALS, LOCAL_EMITTER_ROLE_ARN } from '../../src/local/runtime.js';
import { expectNotEarly, FAST_TIMINGS, request, storedItem, uniqueName, waitFor } from './kit.js';
import { outputsOf, spawnService, type ServiceProcess } from './service-process.js';

const services: ServiceProcess[] = [];

/** The service in its own process on `dir`'s data directory; each start's outputs and tenants files in a directory of their own. */
async function startService(dir: string) {
  const service = spawnService(await mkdtemp(join(dir, 'run-')), {
    args: ['--data-dir', join(dir, 'data')],
    env: { ...FAST_TIMINGS, LOG_LEVEL: 'warn' },
  });
  services.push(service);
  return outputsOf(service);
}

/** A service on `dir`'s data directory, and a target topic the emitter may publish to, created through it. */
async function startWithTarget(dir: string) {
  const before = await startService(dir);
  const access = { region: before.region, credentials: LOCAL_CREDENTIALS };
  const clientsBefore = clientsFor({ ...access, endpoint: before.endpoint });
  const topicName = uniqueName('target');
  const target = await createSchedulerTarget(clientsBefore.sns, topicName, LOCAL_EMITTER_ROLE_ARN);
  return { before, access, clientsBefore, topicName, target };
}

/**
 * Kills the last service started with SIGKILL (its clients closed first), starts it again on
 * `dir`, and subscribes a queue named `queueName` to `target` there: what reaches it from then on.
 */
async function killAndRestart(dir: string, before: Awaited<ReturnType<typeof startWithTarget>>, queueName: string) {
  before.clientsBefore.sns.destroy();
  before.clientsBefore.sqs.destroy();
  services.at(-1)?.child.kill('SIGKILL');
  const after = await startService(dir);
  const received: Received[] = [];
  const clientsAfter = clientsFor({ ...before.access, endpoint: after.endpoint });
  const subscriber = await TopicSubscriber.subscribe(clientsAfter, before.target, queueName, (message) => received.push(message));
  return { after, received, clientsAfter, subscriber };
}

afterEach(() => {
  for (const service of services) service.child.kill('SIGKILL');
});

describe('a persistent local service', () => {
  it('loses no scheduled event when killed with SIGKILL and started again on the same data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scheduler-restart-'));
    try {
      const started = await startWithTarget(dir);
      const { before, access, clientsBefore, topicName, target } = started;
      const now = Date.now();
      // One event on the near path (in the delay queue when killed), one stored for the loader
      // (which moves it to the delay queue four seconds before it is due).
      const nearDue = now + 8_000;
      const farDue = now + before.nearPathWindowSeconds * 1000 + 6_000;
      const placed: [string, string][] = [];
      for (const [dueAt, payload, state] of [
        [nearDue, 'near', EVENT_STATE.queued],
        [farDue, 'far', EVENT_STATE.scheduled],
      ] as const) {
        const { MessageId } = await clientsBefore.sns.send(
          new PublishCommand({ TopicArn: before.inputTopicArn, Message: JSON.stringify(request(target, dueAt, payload)) }),
        );
        placed.push([`m-${MessageId}`, state]);
      }
      // Killed once ingest is done with both, each where it waits: not while ingest still holds
      // them (they would come back after the ingest queue's visibility timeout, whatever the restart does).
      const dynamodb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: before.dynamodbEndpoint }));
      const records = new DynamoDbEventListing(dynamodb, before.tableName);
      const ingestDone = async () => {
        const { Attributes = {} } = await clientsBefore.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: before.publicIngestQueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        return Attributes.ApproximateNumberOfMessages === '0' && Attributes.ApproximateNumberOfMessagesNotVisible === '0';
      };
      await waitFor(
        async () =>
          (await Promise.all(placed.map(async ([id, state]) => (await records.get(id))?.state === state))).every(Boolean) &&
          (await ingestDone()),
        'the near event in the delay queue and the far one stored',
      );
      dynamodb.destroy();
      // DynamoDB Local's file is in write-ahead-log mode (LoopbackDynamoDBLocal.writeAheadLog),
      // header bytes 18 and 19 both 2, so the kill finds the writes above in its log.
      const header = await readFile(join(dir, 'data', 'dynamodb', 'shared-local-instance.db'));
      expect([header[18], header[19]]).toEqual([2, 2]);
      const { received, subscriber } = await killAndRestart(dir, started, topicName);
      try {
        await waitFor(() => received.length >= 2, 'both events after the restart', 40_000);
        expect(received.map((message) => message.body).sort()).toEqual(['far', 'near']);
        for (const message of received) expectNotEarly(message);
      } finally {
        await subscriber.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('delivers every occurrence of a minute series once, none early, when killed with SIGKILL between two and started again', async () => {
    const MINUTE = 60_000;
    const dir = await mkdtemp(join(tmpdir(), 'scheduler-series-restart-'));
    try {
      const started = await startWithTarget(dir);
      const { before, clientsBefore, target } = started;
      const beforeKill: Received[] = [];
      const subscriberBefore = await TopicSubscriber.subscribe(clientsBefore, target, uniqueName('before'), (message) =>
        beforeKill.push(message),
      );
      // Every minute, at an offset that makes the first come in 8 s (past the 6 s near-path window: the loader's take makes it).
      const firstDue = Date.now() + 8_000;
      const { MessageId } = await clientsBefore.sns.send(
        new PublishCommand({
          TopicArn: before.inputTopicArn,
          Message: JSON.stringify({
            schedule: 'cron(* * * * ? *)',
            offset: firstDue % MINUTE,
            count: 2,
            target,
            user: 'tests',
            payload: 'every minute',
          }),
        }),
      );
      const series = seriesId(messageEventId(MessageId ?? ''));
      const first = occurrenceId(series, firstDue);
      // Killed once the first is delivered and its end recorded (an end lost with the process is a documented duplicate), the second not yet materialised.
      await waitFor(
        async () => beforeKill.length === 1 && (await storedItem({ outputs: before }, first))?.state === EVENT_STATE.emitted,
        'the first occurrence',
        30_000,
      );
      // Keyed to be taken again once the second is half a window away (see retakeDelayMs).
      const retake = retakeDelayMs({
        nearPathWindowSeconds: Number(FAST_TIMINGS.SCHEDULER_NEAR_PATH_WINDOW_SECONDS),
        loaderLookaheadSeconds: Number(FAST_TIMINGS.SCHEDULER_LOADER_LOOKAHEAD_SECONDS),
      });
      expect((await storedItem({ outputs: before }, series))?.dueAt).toBe(firstDue + MINUTE + retake);
      await subscriberBefore.stop();
      const { after, received, clientsAfter, subscriber } = await killAndRestart(dir, started, uniqueName('after'));
      try {
        await waitFor(() => received.length >= 1, 'the second occurrence, after the restart', 90_000);
        // A one-off event due a second after it: once it is in, a copy of either occurrence would have come.
        await clientsAfter.sns.send(
          new PublishCommand({ TopicArn: after.inputTopicArn, Message: JSON.stringify(request(target, Date.now() + 2_000, 'sentinel')) }),
        );
        await waitFor(() => received.some((message) => message.body === 'sentinel'), 'the sentinel', 30_000);
        const occurrences = received.filter((message) => message.body === 'every minute');
        expect(occurrences.map((message) => message.attributes[EMISSION_ATTRIBUTE.eventId])).toEqual([
          occurrenceId(series, firstDue + MINUTE),
        ]);
        for (const message of [...beforeKill, ...occurrences]) expectNotEarly(message);
        expect(await storedItem({ outputs: after }, series)).toMatchObject({ seriesState: 'completed', fired: 2 });
      } finally {
        await subscriber.stop();
        clientsAfter.sns.destroy();
        clientsAfter.sqs.destroy();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
