import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CreateTopicCommand,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  ListSubscriptionsByTopicCommand,
  SNSClient,
} from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it, vi } from 'vitest';
import { AdminConsoleBackend } from '../../src/console/admin-backend.js';
import { SCHEDULER_OUTPUTS, STACK_TENANT_TOPIC_TAG } from '../../src/cdk/stack-outputs.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbTenantRegistry, registryChanges, systemClock } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { tenantTopicPolicy } from '../../src/tenant-topic-policy.js';
import { admin, adminScript, deployedSdkEnvironment } from './admin-run.js';
import {
  expectNotEarly,
  request,
  SchedulerClient,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  waitFor,
  type ServiceWithFiles,
} from './kit.js';

/**
 * The tenant commands on a deployed stack, against the emulators standing in for its account:
 * its outputs file names the running service's table, topics and queues, and the AWS SDK's own
 * environment (keys, endpoint overrides) reaches them as it would reach AWS.
 */

const emulators = sharedEmulators();

/** A `cdk deploy --outputs-file` of a stack whose resources are the running service's. */
async function stackOutputsOf({
  scheduler,
  dir,
}: ServiceWithFiles): Promise<{ readonly path: string; readonly ingestQueueArn: string; readonly setAsideArn: string }> {
  const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
  try {
    const arnOf = async (QueueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
    const [ingestQueueArn, setAsideArn] = [
      await arnOf(scheduler.outputs.ingestQueueUrl),
      await arnOf(scheduler.outputs.deadLetterQueueUrl),
    ];
    const path = join(dir, 'cdk-outputs.json');
    await writeFile(
      path,
      JSON.stringify({
        AdhocScheduler: {
          [SCHEDULER_OUTPUTS.tableName]: scheduler.outputs.tableName,
          [SCHEDULER_OUTPUTS.region]: LOCAL_REGION,
          [SCHEDULER_OUTPUTS.inputTopicArn]: scheduler.outputs.inputTopicArn,
          [SCHEDULER_OUTPUTS.ingestQueueArn]: ingestQueueArn,
          [SCHEDULER_OUTPUTS.inputDeadLetterQueueArn]: setAsideArn,
          [SCHEDULER_OUTPUTS.changesQueueUrl]: scheduler.outputs.changesQueueUrl,
        },
      }),
    );
    return { path, ingestQueueArn, setAsideArn };
  } finally {
    sqs.destroy();
  }
}

// One test at a time: each stands the emulators in for the stack's account through the SDK's
// environment, which the commands run in this process read.
describe('scripts/admin tenant commands on a deployed stack', () => {
  it('add makes the input topic at runtime (its accounts only, TLS only, subscribed to the ingest queue with the set-aside queue), its events are delivered; list, show, update, export and import use the table; remove deletes the topic and the entry', async () => {
    const service = await startServiceWithFiles(emulators);
    const { scheduler } = service;
    const sns = new SNSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const stack = await stackOutputsOf(service);
      const where = ['--stack-outputs', stack.path];
      const aws = deployedSdkEnvironment(scheduler.outputs);
      for (const [name, value] of Object.entries(aws)) vi.stubEnv(name, value);
      // In this process, as the CLI runs them; the first through scripts/admin, as typed.
      const run = async (...argv: string[]) => {
        const result = await admin(...argv, ...where);
        expect(result, `${argv.join(' ')}: ${result.stderr}`).toMatchObject({ code: 0 });
        return result;
      };

      const added = await adminScript(
        ['tenant', 'add', 'initech', '--account', '333333333333', '--target-account', LOCAL_ACCOUNT, ...where],
        aws,
      );
      expect(added).toMatchObject({ code: 0 });
      const topicArn = added.stdout.trim();
      expect(topicArn).toBe(scheduler.outputs.inputTopicArn.replace(/-input$/, '-tenant-initech'));
      expect(added.stderr).toContain(`Tenant initech registered in table ${scheduler.outputs.tableName}`);
      const policy = async () =>
        JSON.parse((await sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }))).Attributes?.Policy ?? '{}') as unknown;
      expect(await policy()).toEqual(tenantTopicPolicy(topicArn, ['333333333333']));
      const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
      expect(Subscriptions.map(({ Protocol, Endpoint }) => ({ Protocol, Endpoint }))).toEqual([
        { Protocol: 'sqs', Endpoint: stack.ingestQueueArn },
      ]);
      const { Attributes: subscription = {} } = await sns.send(
        new GetSubscriptionAttributesCommand({ SubscriptionArn: Subscriptions[0]?.SubscriptionArn }),
      );
      expect(JSON.parse(subscription.RedrivePolicy ?? '{}')).toEqual({ deadLetterTargetArn: stack.setAsideArn });
      expect(subscription.RawMessageDelivery ?? 'false').toBe('false');
      // The registry is the table's: the local tenants file is not written.
      await expect(readFile(service.tenantsFile, 'utf8')).rejects.toThrow(/ENOENT/);

      // Taken by the running service once its registry cache reads the table, and delivered on time.
      const client = new SchedulerClient(scheduler, topicArn);
      try {
        const dueAt = Date.now() + 4_000;
        await client.publish(request(target.topicArn, dueAt, 'from a tenant made at runtime', { id: 'runtime-1' }));
        expectNotEarly(await waitFor(() => target.withPayload('from a tenant made at runtime')[0], 'the event delivered'), dueAt);
      } finally {
        client.destroy();
      }

      expect((await run('tenant', 'list', '--prefix', 'ini')).stdout).toMatch(new RegExp(`^initech +333333333333 .*${topicArn}`, 'm'));
      // The console on the stack lists the table's registry too, without a tenants file.
      const backend = new AdminConsoleBackend({
        kind: 'deployed',
        stackOutputs: stack.path,
        table: undefined,
        region: undefined,
        profile: undefined,
      });
      expect((await backend.tenants({ limit: 10 })).tenants.map(({ id }) => id)).toEqual(['public', 'initech']);
      expect((await backend.tenant('initech'))?.id).toBe('initech');
      expect(JSON.parse((await run('tenant', 'show', 'initech', '--json')).stdout)).toMatchObject({
        id: 'initech',
        accounts: ['333333333333'],
        inputTopicArn: topicArn,
      });
      // An update gives the topic's policy the new accounts.
      await run('tenant', 'update', 'initech', '--account', '444444444444');
      expect(await policy()).toEqual(tenantTopicPolicy(topicArn, ['444444444444']));

      const importFile = join(service.dir, 'import.json');
      await writeFile(importFile, JSON.stringify({ tenants: [{ id: 'hooli', accounts: ['555555555555'] }] }));
      const imported = await run('tenant', 'import', importFile);
      expect(imported.stdout.trim()).toBe(`hooli ${topicArn.replace(/initech$/, 'hooli')}`);
      const exported = JSON.parse((await run('tenant', 'export')).stdout) as { tenants: { id: string }[] };
      expect(exported.tenants.map(({ id }) => id).sort()).toEqual(['hooli', 'initech']);

      // Its event delivered is not yet its event ended: the emitter records ends after publishing.
      await waitFor(
        async () => (JSON.parse((await run('tenant', 'show', 'initech', '--json')).stdout) as { openEvents: number }).openEvents === 0,
        "the tenant's event ended",
      );
      const removed = await run('tenant', 'remove', 'initech');
      expect(removed.stderr).toContain(`Input topic ${topicArn} deleted`);
      expect(removed.stdout).toContain(`Tenant initech removed from table ${scheduler.outputs.tableName}`);
      // Gone: SNS no longer knows it (a listing of topics is paged, beside the other tests' topics).
      await expect(sns.send(new GetTopicAttributesCommand({ TopicArn: topicArn }))).rejects.toThrow();
      expect((JSON.parse((await run('tenant', 'export')).stdout) as { tenants: { id: string }[] }).tenants.map(({ id }) => id)).toEqual([
        'hooli',
      ]);
    } finally {
      vi.unstubAllEnvs();
      sns.destroy();
      await target.stop();
      await service.stop();
    }
  }, 180_000);

  it("leaves a tenant of the stack's CDK configuration to a deploy: update and remove refused, its topic and entry as they were", async () => {
    const service = await startServiceWithFiles(emulators);
    const { scheduler } = service;
    const sns = new SNSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint });
    const dynamodb = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.dynamodbEndpoint }),
    );
    try {
      const stack = await stackOutputsOf(service);
      // As a deploy leaves a configured tenant: its topic tagged as the stack's, its entry in the table.
      const entry = { id: 'umbrella', accounts: ['666666666666'] };
      const { TopicArn } = await sns.send(
        new CreateTopicCommand({
          Name: scheduler.outputs.inputTopicArn.split(':')[5]?.replace(/-input$/, '-tenant-umbrella'),
          Tags: [{ Key: STACK_TENANT_TOPIC_TAG.key, Value: STACK_TENANT_TOPIC_TAG.value }],
        }),
      );
      const registry = new DynamoDbTenantRegistry(dynamodb, scheduler.outputs.tableName, systemClock);
      await registry.write(registryChanges({}, { tenants: [entry] }));
      for (const [name, value] of Object.entries(deployedSdkEnvironment(scheduler.outputs))) vi.stubEnv(name, value);
      for (const argv of [
        ['tenant', 'update', 'umbrella', '--max-open-events', '5'],
        ['tenant', 'remove', 'umbrella'],
      ]) {
        const refused = await admin(...argv, '--stack-outputs', stack.path);
        expect(refused, argv.join(' ')).toMatchObject({
          code: 1,
          stderr: expect.stringContaining(
            `tenant "umbrella" is in the stack's CDK configuration, and its input topic ${TopicArn} is the stack's`,
          ),
        });
      }
      expect(Object.fromEntries(await registry.entries(['umbrella']))).toEqual({ umbrella: entry });
      // Still there, as the stack made it.
      const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
      expect(Attributes?.TopicArn).toBe(TopicArn);
    } finally {
      vi.unstubAllEnvs();
      sns.destroy();
      dynamodb.destroy();
      await service.stop();
    }
  });

  it('refuses a tenants file beside a stack, and a stack deployed before tenants were made at runtime', async () => {
    const service = await startServiceWithFiles(emulators);
    try {
      const stack = await stackOutputsOf(service);
      const both = await admin(
        'tenant',
        'add',
        'acme',
        '--account',
        '111111111111',
        '--tenants',
        service.tenantsFile,
        '--stack-outputs',
        stack.path,
      );
      expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining("--tenants names the local service's tenants file") });
      const older = join(service.dir, 'older-outputs.json');
      const outputs = JSON.parse(await readFile(stack.path, 'utf8')) as { AdhocScheduler: Record<string, string> };
      const {
        [SCHEDULER_OUTPUTS.ingestQueueArn]: _ingest,
        [SCHEDULER_OUTPUTS.inputDeadLetterQueueArn]: _setAside,
        ...before
      } = outputs.AdhocScheduler;
      await writeFile(older, JSON.stringify({ AdhocScheduler: before }));
      const refused = await admin('tenant', 'add', 'acme', '--account', '111111111111', '--stack-outputs', older);
      expect(refused).toMatchObject({
        code: 1,
        stderr: expect.stringContaining('has no IngestQueueArn, InputDeadLetterQueueArn output: deploy this version of the stack'),
      });
    } finally {
      await service.stop();
    }
  });
});
