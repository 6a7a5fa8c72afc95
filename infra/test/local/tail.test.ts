import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTopicCommand, DeleteTopicCommand, ListSubscriptionsByTopicCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { TAIL_QUEUE_PREFIX } from '../../src/admin/tail-command.js';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { REPO_ROOT } from './admin-run.js';
import { FAST_TIMINGS, request, SchedulerClient, sharedEmulators, startTestScheduler, uniqueName, waitFor } from './kit.js';

const emulators = sharedEmulators();

/** `scripts/admin tail` in a process group of its own, as a terminal runs it: Ctrl-C signals the whole group. */
function startTail(topicArn: string, outputsFile: string) {
  const child = spawn(join(REPO_ROOT, 'scripts/admin'), ['tail', topicArn, '--outputs', outputsFile], { cwd: REPO_ROOT, detached: true });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  return {
    get stdout() {
      return output.stdout;
    },
    get stderr() {
      return output.stderr;
    },
    exited: once(child, 'exit'),
    signal: (signal: NodeJS.Signals) => process.kill(-(child.pid ?? 0), signal),
    kill: () => {
      if (child.exitCode === null) process.kill(-(child.pid ?? 0), 'SIGKILL');
    },
  };
}

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
    const tail = startTail(topicArn, outputsFile);
    const { exited } = tail;
    const subscriptions = async () => (await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }))).Subscriptions ?? [];
    try {
      await waitFor(() => tail.stderr.includes('Stop with Ctrl-C'), 'tail subscribed', 60_000);
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
      await waitFor(() => tail.stdout.includes('{"invoice":42}'), 'the message printed');
      const [head, body] = tail.stdout.trim().split('\n');
      expect(head).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z {2}scheduler-event-id=m-tail-1$/);
      expect(body).toBe('  {"invoice":42}');

      tail.signal('SIGINT');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(tail.stderr).toContain(`Unsubscribed; queue ${queueName} deleted.`);
      expect(await subscriptions()).toEqual([]);
      const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: queueName }));
      expect(QueueUrls).toEqual([]);
    } finally {
      tail.kill();
      await sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
      sns.destroy();
      sqs.destroy();
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("shows a failed event's notice on its failure topic, as clients.md says to watch it", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tail-'));
    const outputsFile = join(dir, 'outputs.json');
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    await writeFile(outputsFile, JSON.stringify(scheduler.outputs));
    const sns = new SNSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    const { TopicArn: failures = '' } = await sns.send(new CreateTopicCommand({ Name: uniqueName('failures') }));
    const client = new SchedulerClient(scheduler);
    const tail = startTail(failures, outputsFile);
    try {
      await waitFor(() => tail.stderr.includes('Stop with Ctrl-C'), 'tail subscribed', 60_000);
      const gone = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('no-such-topic')}`;
      await client.publish(request(gone, Date.now() + 2_000, 'to nowhere', { failure_topic: failures }));
      await waitFor(() => tail.stdout.includes('TARGET_NOT_FOUND'), 'the failure notice printed', 30_000);
      const notice = JSON.parse(tail.stdout.trim().split('\n').at(-1)?.trim() ?? '{}') as Record<string, unknown>;
      expect(notice).toMatchObject({ reason: 'TARGET_NOT_FOUND', event: { target: gone, payload: 'to nowhere' } });
      tail.signal('SIGINT');
      expect((await tail.exited)[0]).toBe(0);
    } finally {
      tail.kill();
      client.destroy();
      await sns.send(new DeleteTopicCommand({ TopicArn: failures }));
      sns.destroy();
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
