import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbEventListing, DynamoDbEventStore, ENV, EVENT_STATE, eventIdFor, tenantRemovalItemId } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { admin } from './admin-run.js';
import {
  expectNotEarly,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  seriesDueSoon,
  sharedEmulators,
  startServiceWithFiles,
  storedItem,
  TopicConsumer,
  waitFor,
} from './kit.js';

const emulators = sharedEmulators();
const MINUTE = 60_000;

/** A running service with a tenant registered by tenant add, the tenant's client, and a target topic. */
async function setup(tenant: string, env: Readonly<Record<string, string>> = {}) {
  const service = await startServiceWithFiles(emulators, { env: { ...FAST_TIMINGS, ...env } });
  const { scheduler, where } = service;
  const added = await admin('tenant', 'add', tenant, '--account', '111111111111', '--target-account', LOCAL_ACCOUNT, ...where);
  expect(added.code).toBe(0);
  const topicArn = added.stdout.trim();
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
  const dynamodb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.dynamodbEndpoint }),
  );
  const client = new SchedulerClient(scheduler, topicArn);
  return {
    ...service,
    topicArn,
    target,
    client,
    dynamodb,
    /** The tenant's open events and active series, counted as tenant remove counts them. */
    openCount: () => new DynamoDbEventListing(dynamodb, scheduler.outputs.tableName).countOpen(tenant),
    /** An event's state, by the id its client gave it. */
    stateOf: async (clientId: string) => {
      const id = eventIdFor(tenant, 'tests', clientId, '');
      return (await new DynamoDbEventStore(dynamodb, scheduler.outputs.tableName).read([id])).get(id)?.state;
    },
    async teardown() {
      client.destroy();
      await target.stop();
      dynamodb.destroy();
      await service.stop();
    },
  };
}

describe.concurrent('scripts/admin tenant remove', () => {
  it('refuses a tenant with open events and changes nothing; with --cancel-open it cancels them, a series too, lets those within the cutoff be emitted, and unregisters the tenant', async () => {
    const { client, target, where, tenantsFile, outputsFile, topicArn, openCount, stateOf, teardown } = await setup('acme');
    try {
      const soon = Date.now() + 5_000;
      await client.publish(request(target.topicArn, soon, 'within the cutoff', { id: 'soon' }));
      await client.publish(request(target.topicArn, Date.now() + 2 * MINUTE, 'near', { id: 'near' }));
      for (const id of ['far-1', 'far-2']) await client.publish(request(target.topicArn, Date.now() + 30 * MINUTE, id, { id }));
      await client.publish(seriesDueSoon(target.topicArn, 2 * MINUTE, { id: 'every-minute' }));
      await waitFor(async () => (await openCount()) >= 5, "the tenant's requests taken");
      const registry = await readFile(tenantsFile, 'utf8');

      const refused = await admin('tenant', 'remove', 'acme', ...where);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/tenant "acme" has \d+ open events and active recurring series; nothing was changed/);
      expect(await readFile(tenantsFile, 'utf8')).toBe(registry);
      // Its topic still takes its requests.
      await client.publish(request(target.topicArn, Date.now() + 30 * MINUTE, 'far-3', { id: 'far-3' }));
      await waitFor(async () => (await stateOf('far-3')) === EVENT_STATE.scheduled, 'a request after the refusal taken');

      const removed = await admin('tenant', 'remove', 'acme', '--cancel-open', ...where);
      expect(removed.stderr).toContain(`Input topic ${topicArn} deleted`);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toMatch(
        /^Tenant acme removed from .*\. Its open events: cancelled \d+; refused: \d+ already ended, \d+ within the change cutoff\./,
      );
      expect(removed.stdout).toContain('tenant add --restore gives it back to the same client');
      expect(await openCount()).toBe(0);
      for (const id of ['near', 'far-1', 'far-2', 'far-3']) expect(await stateOf(id)).toBe(EVENT_STATE.cancelled);
      // The one due within the cutoff was emitted, once, on time, before the tenant was unregistered.
      expect(await stateOf('soon')).toBe(EVENT_STATE.emitted);
      const delivered = target.withPayload('within the cutoff');
      expect(delivered).toHaveLength(1);
      expectNotEarly(delivered[0], soon);

      expect(JSON.parse(await readFile(tenantsFile, 'utf8')).tenants ?? []).toEqual([]);
      expect(JSON.parse(await readFile(outputsFile, 'utf8')).tenantInputTopicArns ?? {}).not.toHaveProperty('acme');
      await expect(client.publish(request(target.topicArn, Date.now() + MINUTE, 'too late'))).rejects.toThrow(/not ?found|does not exist/i);
    } finally {
      await teardown();
    }
  });

  it('leaves no open event behind: it cancels the requests a service slow to read the registry took after the tenant was unregistered', async () => {
    // A service slow to read the registry: its functions answer from what they read of it for half a minute.
    const { client, target, tenantsFile, outputsFile, openCount, stateOf, teardown } = await setup('hooli', {
      [ENV.registryMaxAgeMs]: '30000',
    });
    try {
      // The tenant's first request: the service has read it as registered, and keeps that.
      await client.publish(request(target.topicArn, Date.now(), 'first', { id: 'first' }));
      await waitFor(async () => (await stateOf('first')) === EVENT_STATE.emitted, 'the first event emitted and recorded');
      const listsHooli = async () =>
        (JSON.parse(await readFile(tenantsFile, 'utf8')).tenants ?? []).some(({ id }: { id: string }) => id === 'hooli');
      const removing = admin('tenant', 'remove', 'hooli', '--tenants', tenantsFile, '--outputs', outputsFile);
      await waitFor(async () => !(await listsHooli()), 'the tenant unregistered by the command');
      // What SNS still delivers of what the tenant published just before its topic went: taken, the service not knowing yet.
      const late = Array.from({ length: 10 }, (_, index) => `late-${index}`);
      for (const id of late) await client.redeliver(request(target.topicArn, Date.now() + 30 * MINUTE, 'straggler', { id }), `m-${id}`);
      await waitFor(
        async () => (await Promise.all(late.map(stateOf))).every((state) => state === EVENT_STATE.scheduled),
        'the late requests taken',
      );
      const removed = await removing;
      expect(removed.code).toBe(0);
      expect(removed.stderr).toContain('10 requests the tenant published before its topic was deleted were taken meanwhile: cancelled.');
      expect(await openCount()).toBe(0);
      for (const id of late) expect(await stateOf(id)).toBe(EVENT_STATE.cancelled);
    } finally {
      await teardown();
    }
  });

  it('keeps a removed id its own: adding or importing it is refused, and --restore registers it again for its client', async () => {
    const { target, where, dir, scheduler, tenantsFile, teardown } = await setup('initech');
    try {
      expect((await admin('tenant', 'remove', 'initech', ...where)).code).toBe(0);
      const removal = await storedItem(scheduler, tenantRemovalItemId('initech'));
      expect(removal).toEqual(expect.objectContaining({ tenant: 'initech' }));
      expect(Number(removal?.reusableFrom) - Number(removal?.removedAt)).toBe(14 * 24 * 3600 * 1000);

      const again = await admin('tenant', 'add', 'initech', '--account', '333333333333', ...where);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /tenant "initech" was removed at .*until then the id is that tenant's\. Register it again with --restore/,
      );
      const file = join(dir, 'import.json');
      await writeFile(file, JSON.stringify({ tenants: [{ id: 'initech', accounts: ['333333333333'] }] }));
      const imported = await admin('tenant', 'import', file, ...where);
      expect(imported.code).toBe(1);
      expect(imported.stderr).toContain('tenant "initech" was removed at');
      // Among many, as a bulk import finds it: through the index of removals, not a read per tenant.
      const many = Array.from({ length: 150 }, (_, index) => ({ id: `bulk-${index}`, accounts: [String(500000000000 + index)] }));
      await writeFile(file, JSON.stringify({ tenants: [...many, { id: 'initech', accounts: ['333333333333'] }] }));
      const bulk = await admin('tenant', 'import', file, ...where);
      expect(bulk.code).toBe(1);
      expect(bulk.stderr).toContain('tenant "initech" was removed at');
      expect(JSON.parse(await readFile(tenantsFile, 'utf8')).tenants ?? []).toEqual([]);

      const restored = await admin(
        'tenant',
        'add',
        'initech',
        '--account',
        '111111111111',
        '--target-account',
        LOCAL_ACCOUNT,
        '--restore',
        ...where,
      );
      expect(restored.code).toBe(0);
      expect(await storedItem(scheduler, tenantRemovalItemId('initech'))).toBeUndefined();
      const restoredClient = new SchedulerClient(scheduler, restored.stdout.trim());
      try {
        const dueAt = Date.now() + 1_500;
        await restoredClient.publish(request(target.topicArn, dueAt, 'restored'));
        expectNotEarly(await waitFor(() => target.withPayload('restored')[0], "the restored tenant's event delivered"), dueAt);
      } finally {
        restoredClient.destroy();
      }
    } finally {
      await teardown();
    }
  });

  it('refuses the public tenant, an id not registered, and a deployed stack named by its table alone', async () => {
    const { where, teardown } = await setup('umbrella');
    try {
      expect((await admin('tenant', 'remove', 'public', ...where)).stderr).toContain('"public" is the shared input topic\'s tenant');
      const unknown = await admin('tenant', 'remove', 'nobody', ...where);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('tenant "nobody" is not registered in');
      // A stack's tenants are removed through its outputs, which name its topics and queues too.
      const deployed = await admin('tenant', 'remove', 'umbrella', '--table', 'scheduler-events');
      expect(deployed.code).toBe(2);
      expect(deployed.stderr).toContain('tenant remove on a deployed stack needs its outputs: name them with --stack-outputs FILE');
    } finally {
      await teardown();
    }
  });
});
