import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PublishCommand } from '@aws-sdk/client-sns';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbQuotaCounters, openEventsCounterId, PUBLIC_TENANT_ID, TABLE } from '@adhoc-scheduler/shared';
import { clientsFor } from '@adhoc-scheduler/quickstart/client-topics';
import { LOCAL_CREDENTIALS } from '../../src/local/runtime.js';
import { request, uniqueName, waitFor } from './kit.js';
import { outputsOf, spawnService, type ServiceProcess } from './service-process.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');

let service: ServiceProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  service?.child.kill('SIGKILL');
  await service?.exited;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** scripts/admin as an operator runs it, on the service's outputs and tenants files. */
function admin(argv: readonly string[]): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> {
  return new Promise((done) => {
    execFile(join(REPO_ROOT, 'scripts/admin'), argv, { cwd: REPO_ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}

describe('scripts/admin quota reconcile', () => {
  it("recounts a tenant's open events and corrects its counter, whether it was left too high or too low", async () => {
    dir = await mkdtemp(join(tmpdir(), 'quota-reconcile-'));
    service = spawnService(dir, { args: ['--in-memory'], env: { LOG_LEVEL: 'warn' } });
    const outputs = await outputsOf(service);
    const where = ['--outputs', service.outputsFile, '--tenants', service.tenantsFile];
    const access = { region: outputs.region, credentials: LOCAL_CREDENTIALS };
    const { sns } = clientsFor({ ...access, endpoint: outputs.endpoint });
    const table = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: outputs.dynamodbEndpoint }));
    const counters = new DynamoDbQuotaCounters(table, outputs.tableName);
    const setCounter = (openEvents: number) =>
      table.send(
        new UpdateCommand({
          TableName: outputs.tableName,
          Key: { [TABLE.partitionKey]: openEventsCounterId(PUBLIC_TENANT_ID) },
          UpdateExpression: 'SET openEvents = :count',
          ExpressionAttributeValues: { ':count': openEvents },
        }),
      );
    try {
      // Two open events, stored an hour ahead, and a series whose first occurrence is an hour
      // ahead too: the series holds one place of its own.
      const target = `arn:aws:sns:${outputs.region}:000000000000:${uniqueName('target')}`;
      for (let i = 0; i < 2; i++) {
        const message = JSON.stringify(request(target, Date.now() + 3_600_000, `open-${i}`));
        await sns.send(new PublishCommand({ TopicArn: outputs.inputTopicArn, Message: message }));
      }
      const start = new Date(Date.now() + 3_600_000).toISOString();
      const message = JSON.stringify({ schedule: 'rate(1 hour)', start, target, user: 'tests', payload: 'hourly' });
      await sns.send(new PublishCommand({ TopicArn: outputs.inputTopicArn, Message: message }));
      await waitFor(async () => (await counters.openEvents(PUBLIC_TENANT_ID)) === 3, 'the two events and the series counted');

      await setCounter(10);
      const high = await admin(['quota', 'reconcile', '--tenant', PUBLIC_TENANT_ID, ...where]);
      expect(high).toMatchObject({ code: 0, stderr: '' });
      expect(high.stdout.trim()).toBe('tenant public: 3 open events counted; the counter said 10; corrected by -7.');
      expect(await counters.openEvents(PUBLIC_TENANT_ID)).toBe(3);

      await setCounter(1);
      const low = await admin(['quota', 'reconcile', '--tenant', PUBLIC_TENANT_ID, '--json', ...where]);
      expect(low.code).toBe(0);
      expect(JSON.parse(low.stdout)).toEqual({
        tenant: PUBLIC_TENANT_ID,
        counted: 3,
        counterBefore: 1,
        counterAfter: 1,
        correction: 2,
        exact: true,
      });
      expect(await counters.openEvents(PUBLIC_TENANT_ID)).toBe(3);

      const again = await admin(['quota', 'reconcile', '--tenant', PUBLIC_TENANT_ID, ...where]);
      expect(again.stdout.trim()).toBe('tenant public: 3 open events counted; the counter said 3; nothing to correct.');
    } finally {
      sns.destroy();
      table.destroy();
    }
  }, 120_000);
});
