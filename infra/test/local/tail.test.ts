import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTopicCommand, DeleteTopicCommand, ListSubscriptionsByTopicCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { TAIL_QUEUE_PREFIX } from '../../src/admin/tail-command.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { REPO_ROOT } from './admin-run.js';
import { FAST_TIMINGS, sharedEmulators, startTestScheduler, uniqueName, waitFor } from './kit.js';

const emulators = sharedEmulators();

describe('scripts/admin tail', () => {
  it('prints each message published to the topic with its attributes, and on Ctrl-C removes its subscription and queue', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tail-'));
    const outputsFile = join(dir, 'outputs.json');
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    await writeFile(outputsFile, JSON.stringify(scheduler.outputs));
    const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint };
    const sns = new SNSClient(access);
    const sqs = new SQSClient(access);
    const { TopicArn: topicArn = '' } = await sns.send(new CreateTopicCommand({ Name: uniqueName('watched') }));
    // Its own process group, as a terminal runs it: Ctrl-C signals the whole group.
    const tail = spawn(join(REPO_ROOT, 'scripts/admin'), ['tail', topicArn, '--outputs', outputsFile], { cwd: REPO_ROOT, detached: true });
    let stdout = '';
    let stderr = '';
    tail.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    tail.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(tail, 'exit');
    const subscriptions = async () => (await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }))).Subscriptions ?? [];
    try {
      await waitFor(() => stderr.includes('Stop with Ctrl-C'), 'tail subscribed', 60_000);
      const [subscription] = await subscriptions();
      const queueName = subscription?.Endpoint?.split(':').at(-1) ?? '';
      expect(queueName.startsWith(TAIL_QUEUE_PREFIX)).toBe(true);
      // Only the watched topic may send to its queue.
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
      const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['Policy'] }));
      expect(JSON.parse(Attributes?.Policy ?? '{}')).toMatchObject({
        Statement: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Condition: { ArnEquals: { 'aws:SourceArn': topicArn } } }],
      });

      await sns.send(
        new PublishCommand({
          TopicArn: topicArn,
          Message: '{"invoice":42}',
          MessageAttributes: { 'scheduler-event-id': { DataType: 'String', StringValue: 'm-tail-1' } },
        }),
      );
      await waitFor(() => stdout.includes('{"invoice":42}'), 'the message printed');
      const [head, body] = stdout.trim().split('\n');
      expect(head).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}scheduler-event-id=m-tail-1$/);
      expect(body).toBe('  {"invoice":42}');

      process.kill(-(tail.pid ?? 0), 'SIGINT');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(stderr).toContain(`Unsubscribed; queue ${queueName} deleted.`);
      expect(await subscriptions()).toEqual([]);
      const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: queueName }));
      expect(QueueUrls).toEqual([]);
    } finally {
      if (tail.exitCode === null) process.kill(-(tail.pid ?? 0), 'SIGKILL');
      await sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
      sns.destroy();
      sqs.destroy();
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
