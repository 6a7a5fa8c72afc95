import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoDbRefusalLog, EventRejectedError, REASON, REFUSALS_KEPT, refusalCounterId, refusalOf, TABLE } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, type LocalScheduler } from '../../src/local/runtime.js';
import { admin, adminScript } from './admin-run.js';
import { FAST_TIMINGS, request, SchedulerClient, sharedEmulators, startTestScheduler, TopicConsumer, uniqueName, waitFor } from './kit.js';

const TENANT_ACCOUNT = '111111111111';
const invalid = new EventRejectedError(REASON.INVALID_JSON, 'the message is not JSON');

const emulators = sharedEmulators();

/** A running local service with its outputs and tenants files, as scripts/start leaves them. */
async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'refusals-'));
  const tenantsFile = join(dir, 'tenants.json');
  const outputsFile = join(dir, 'outputs.json');
  const scheduler = await startTestScheduler(emulators, { tenants: { file: tenantsFile }, env: FAST_TIMINGS });
  await writeFile(outputsFile, JSON.stringify(scheduler.outputs));
  const clients: SchedulerClient[] = [];
  return {
    scheduler,
    files: ['--tenants', tenantsFile, '--outputs', outputsFile],
    /** Registers a tenant as the operator does; its input topic's client. */
    async tenant(id: string, ...flags: string[]) {
      const added = await admin(
        'tenant',
        'add',
        id,
        '--account',
        TENANT_ACCOUNT,
        ...flags,
        '--tenants',
        tenantsFile,
        '--outputs',
        outputsFile,
      );
      expect(added.code).toBe(0);
      const client = new SchedulerClient(scheduler, added.stdout);
      clients.push(client);
      return { client, added };
    },
    async teardown() {
      for (const client of clients) client.destroy();
      await scheduler.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The refusal log's items of a tenant in the table: its counter and its ring. */
async function refusalItems(scheduler: LocalScheduler, tenant: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await scheduler.clients.dynamodb.send(
      new ScanCommand({
        TableName: scheduler.outputs.tableName,
        FilterExpression: 'begins_with(#id, :prefix)',
        ExpressionAttributeNames: { '#id': TABLE.partitionKey },
        ExpressionAttributeValues: { ':prefix': refusalCounterId(tenant) },
        Select: 'COUNT',
        ExclusiveStartKey: startKey,
      }),
    );
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return count;
}

describe.concurrent('refusals', () => {
  it('explains a request refused at ingest: event show says why, refusals lists it (the onboarding that forgot --target-account)', async () => {
    const { scheduler, files, tenant, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const { client, added } = await tenant('acme');
      expect(added.stderr).toContain(`Warning: tenant acme may not target the local service's topics (account ${LOCAL_ACCOUNT})`);
      await client.publish(
        request(target.topicArn, Date.now() + 60_000, 'refused', { id: 'order-1', user: 'alice', failure_topic: failures.topicArn }),
      );
      const where = ['--tenant', 'acme', ...files];
      await waitFor(async () => (await admin('refusals', ...where, '--json')).stdout.includes('order-1'), 'the refusal kept');

      // As the operator runs them.
      const shown = await adminScript(['event', 'show', '--tenant', 'acme', '--id', 'order-1', ...files]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^state +refused at ingest: ${REASON.FAILURE_TOPIC_NOT_ALLOWED}$`, 'm'));
      const message = `tenant "acme" may not use ${failures.topicArn} as failure topic`;
      expect(shown.stdout).toMatch(new RegExp(`^message +${message}$`, 'm'));
      expect(shown.stdout).toMatch(/^refused +\d{4}-\d\d-\d\dT[\d:.]+Z$/m);
      expect(shown.stdout).toMatch(/^client id +order-1$/m);

      const listed = await adminScript(['refusals', ...where]);
      expect(listed.code).toBe(0);
      const [header, row, ...more] = listed.stdout.trim().split('\n');
      expect(header).toMatch(/^REFUSED +CLIENT ID +USER +ACTION +REASON +MESSAGE$/);
      expect(row).toMatch(new RegExp(`^\\S+Z +order-1 +alice +schedule +${REASON.FAILURE_TOPIC_NOT_ALLOWED} +${message}$`));
      expect(more).toEqual([]);

      // Onboarded as docs/operators/tenants.md says, its requests are taken.
      const { added: corrected } = await tenant('acme', '--target-account', LOCAL_ACCOUNT, '--max-open-events', '50000');
      expect(corrected.stderr).not.toContain('Warning');
      await client.publish(request(target.topicArn, Date.now() + 1_000, 'taken', { id: 'order-2', user: 'alice' }));
      await waitFor(() => target.withPayload('taken').length > 0, 'the corrected tenant delivered');
      // An id nothing refused nor made is still unknown.
      const unknown = await admin('event', 'show', '--tenant', 'acme', '--id', 'order-3', ...files);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('unknown, or ended longer ago than the retention period');
    } finally {
      await target.stop();
      await failures.stop();
      await teardown();
    }
  });

  it("keeps a flood of refusals bounded, and each tenant's apart", async () => {
    const { scheduler, tenant, teardown } = await setup();
    try {
      const { client: acme } = await tenant('acme');
      const { client: globex } = await tenant('globex', '--target-account', LOCAL_ACCOUNT);
      await globex.publish({ action: 'cancel', id: 'globex-1' });
      const flood = 3 * REFUSALS_KEPT.perTenant;
      await acme.publishBatch(Array.from({ length: flood }, (_, n) => `not json ${n}`));
      const log = new DynamoDbRefusalLog(scheduler.clients.dynamodb, scheduler.outputs.tableName);
      // A batch reserves its slots on the counter, then writes them: wait for both.
      const recent = await waitFor(async () => {
        const found = await log.recent('acme');
        const written = Math.min(found.refused - found.notKept, REFUSALS_KEPT.perTenant);
        return found.refused === flood && found.refusals.length === written && found;
      }, 'every refusal of the flood counted, and the kept ones written');
      // However the flood was batched, at most a batch's share of each batch was written, the rest counted.
      const kept = recent.refused - recent.notKept;
      expect(recent.refusals).toHaveLength(Math.min(kept, REFUSALS_KEPT.perTenant));
      expect(kept).toBeLessThanOrEqual(flood);
      expect(recent.refusals.every((refusal) => refusal.tenant === 'acme' && refusal.reason === REASON.INVALID_JSON)).toBe(true);
      // The ring and its counter: nothing grows with the flood.
      expect(await refusalItems(scheduler, 'acme')).toBe(recent.refusals.length + 1);
      // The other tenant's refusal stands, and is its own.
      const other = await waitFor(async () => {
        const found = await log.recent('globex');
        return found.refusals.length > 0 && found;
      }, "globex's refusal kept");
      expect(other.refusals.map(({ tenant, reason, clientId }) => ({ tenant, reason, clientId }))).toEqual([
        { tenant: 'globex', reason: REASON.EVENT_NOT_FOUND, clientId: 'globex-1' },
      ]);
    } finally {
      await teardown();
    }
  });
  it("writes a tenant's refusals in a ring: the newest kept, the oldest overwritten, never more items", async () => {
    const { scheduler, teardown } = await setup();
    try {
      const log = new DynamoDbRefusalLog(scheduler.clients.dynamodb, scheduler.outputs.tableName);
      const tenantId = uniqueName('ring');
      const batches = 15;
      const refusal = (n: number) => refusalOf(tenantId, { input: { id: `id-${n}` }, inputMessageId: `m-${n}` }, invalid, 1_000 + n);
      for (let batch = 0; batch < batches; batch++) {
        const kept = Array.from({ length: REFUSALS_KEPT.perTenantPerBatch }, (_, n) =>
          refusal(batch * REFUSALS_KEPT.perTenantPerBatch + n),
        );
        await log.keep([{ tenant: tenantId, kept, notKept: 3 }], Math.ceil(Date.now() / 1000) + 3600);
      }
      const total = batches * REFUSALS_KEPT.perTenantPerBatch;
      const recent = await log.recent(tenantId);
      expect(recent.refused).toBe(total + 3 * batches);
      expect(recent.notKept).toBe(3 * batches);
      expect(recent.refusals.map(({ clientId }) => clientId)).toEqual(
        Array.from({ length: REFUSALS_KEPT.perTenant }, (_, n) => `id-${total - 1 - n}`),
      );
      expect(await refusalItems(scheduler, tenantId)).toBe(REFUSALS_KEPT.perTenant + 1);
      // A tenant whose id begins like another's reads only its own.
      expect((await log.recent(`${tenantId}-other`)).refusals).toEqual([]);
    } finally {
      await teardown();
    }
  });
});
