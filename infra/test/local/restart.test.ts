import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PublishCommand } from '@aws-sdk/client-sns';
import { clientsFor, createSchedulerTarget, TopicSubscriber, type Received } from '@adhoc-scheduler/quickstart/client-topics';
import type { LocalOutputs } from '../../src/local/runtime.js';
import { LOCAL_CREDENTIALS, LOCAL_EMITTER_ROLE_ARN } from '../../src/local/runtime.js';
import { FAST_TIMINGS, request, uniqueName, waitFor } from './kit.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const children: ChildProcess[] = [];

/**
 * Starts the service as a user does (`scripts/start` runs the same entry point), in its own
 * process, on system-picked ports so a developer's running service is not in the way.
 */
async function startService(dataDir: string): Promise<LocalOutputs> {
  const outputsFile = join(dataDir, `outputs-${children.length}.json`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/src/local/main.ts', '--data-dir', dataDir, '--outputs', outputsFile, '--port', '0', '--dynamodb-port', '0'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...FAST_TIMINGS, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const text = await waitFor(() => readFile(outputsFile, 'utf8').catch(() => undefined), 'the service to start', 60_000);
  return JSON.parse(text) as LocalOutputs;
}

afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('a persistent local service', () => {
  it('loses no scheduled event when killed with SIGKILL and started again on the same data directory', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'scheduler-restart-'));
    try {
      const before = await startService(dataDir);
      const access = { region: before.region, credentials: LOCAL_CREDENTIALS };
      const clientsBefore = clientsFor({ ...access, endpoint: before.endpoint });
      const topicName = uniqueName('target');
      const target = await createSchedulerTarget(clientsBefore.sns, topicName, LOCAL_EMITTER_ROLE_ARN);
      const now = Date.now();
      // One event on the near path (in the delay queue when killed), one stored for the loader.
      const nearDue = now + 12_000;
      const farDue = now + before.nearPathWindowSeconds * 1000 + 9_000;
      for (const [dueAt, payload] of [[nearDue, 'near'], [farDue, 'far']] as const) {
        await clientsBefore.sns.send(new PublishCommand({ TopicArn: before.inputTopicArn, Message: JSON.stringify(request(target, dueAt, payload)) }));
      }
      clientsBefore.sns.destroy();
      clientsBefore.sqs.destroy();
      children.at(-1)?.kill('SIGKILL');

      const after = await startService(dataDir);
      const received: Received[] = [];
      const clientsAfter = clientsFor({ ...access, endpoint: after.endpoint });
      const subscriber = await TopicSubscriber.subscribe(clientsAfter, target, topicName, (message) => received.push(message));
      try {
        await waitFor(() => received.length >= 2, 'both events after the restart', 40_000);
        expect(received.map((message) => message.body).sort()).toEqual(['far', 'near']);
        for (const message of received) {
          expect(message.receivedAt).toBeGreaterThanOrEqual(Date.parse(message.attributes['scheduler-scheduled-at'] ?? ''));
        }
      } finally {
        await subscriber.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
