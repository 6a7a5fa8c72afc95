import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PublishCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventListing, EVENT_STATE } from '@adhoc-scheduler/shared';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import { LOCAL_CREDENTIALS, LOCAL_EMITTER_ROLE_ARN } from '../../src/local/runtime.js';
import { expectNotEarly, FAST_TIMINGS, request, uniqueName, waitFor } from './kit.js';
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

afterEach(() => {
  for (const service of services) service.child.kill('SIGKILL');
});

describe('a persistent local service', () => {
  it('loses no scheduled event when killed with SIGKILL and started again on the same data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scheduler-restart-'));
    try {
      const before = await startService(dir);
      const access = { region: before.region, credentials: LOCAL_CREDENTIALS };
      const clientsBefore = clientsFor({ ...access, endpoint: before.endpoint });
      const topicName = uniqueName('target');
      const target = await createSchedulerTarget(clientsBefore.sns, topicName, LOCAL_EMITTER_ROLE_ARN);
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
      clientsBefore.sns.destroy();
      clientsBefore.sqs.destroy();
      services.at(-1)?.child.kill('SIGKILL');

      const after = await startService(dir);
      const received: Received[] = [];
      const clientsAfter = clientsFor({ ...access, endpoint: after.endpoint });
      const subscriber = await TopicSubscriber.subscribe(clientsAfter, target, topicName, (message) => received.push(message));
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
});
