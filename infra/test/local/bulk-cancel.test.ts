import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  batchPut,
  DynamoDbBulkCancelJobs,
  DynamoDbEventStore,
  DynamoDbLabelledEvents,
  encodeBulkCancelPage,
  EVENT_STATE,
  eventIdFor,
  JOB_CURSOR,
  labelEntryId,
  labelShardKey,
  REASON,
  shardOf,
  TABLE,
  type EventRecord,
  type JobPosition,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { admin } from './admin-run.js';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalOutputs } from '../../src/local/runtime.js';
import { writeTenantsFile } from '../../src/local/tenants-file.js';
import { FAST_TIMINGS, sharedEmulators, startServiceWithFiles, startTestScheduler, TopicConsumer, uniqueName, waitFor } from './kit.js';
import { outputsOf, spawnService, type ServiceProcess } from './service-process.js';

/** Acme's topics are the local ones; globex's account holds none, so its targets are topics of its own that need not exist. */
const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: [LOCAL_ACCOUNT] },
    { id: 'globex', accounts: ['222222222222'] },
  ],
};
const GLOBEX_TARGET = `arn:aws:sns:${LOCAL_REGION}:222222222222:globex-target`;
const HOUR = 3_600_000;

const emulators = sharedEmulators();

/** What the tests reach a service by: its outputs, and clients of its emulators. */
function clientsOf(outputs: Pick<LocalOutputs, 'endpoint' | 'dynamodbEndpoint' | 'tableName'>) {
  const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = DynamoDBDocumentClient.from(new DynamoDBClient({ ...access, endpoint: outputs.dynamodbEndpoint }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return {
    sns: new SNSClient({ ...access, endpoint: outputs.endpoint }),
    sqs: new SQSClient({ ...access, endpoint: outputs.endpoint }),
    dynamodb,
    store: new DynamoDbEventStore(dynamodb, outputs.tableName),
    jobs: new DynamoDbBulkCancelJobs(dynamodb, outputs.tableName),
    destroy() {
      this.sns.destroy();
      this.sqs.destroy();
      dynamodb.destroy();
    },
  };
}
type Clients = ReturnType<typeof clientsOf>;

/** A tenant's events, scheduled through its input topic with client ids `<prefix>-<n>`, once their records are stored. */
async function schedule(
  clients: Clients,
  topicArn: string,
  tenant: string,
  events: { readonly count: number; readonly prefix: string; readonly dueAt: (n: number) => number; readonly target: string },
): Promise<EventRecord[]> {
  const requests = Array.from({ length: events.count }, (_, n) => ({
    id: `${events.prefix}-${n}`,
    date: new Date(events.dueAt(n)).toISOString(),
    target: events.target,
    user: 'tests',
    payload: `${events.prefix}-${n}`,
  }));
  for (let start = 0; start < requests.length; start += 10) {
    await clients.sns.send(
      new PublishBatchCommand({
        TopicArn: topicArn,
        PublishBatchRequestEntries: requests.slice(start, start + 10).map((request, index) => ({
          Id: `r${start + index}`,
          Message: JSON.stringify(request),
        })),
      }),
    );
  }
  const ids = requests.map(({ id }) => eventIdFor(tenant, 'tests', id, ''));
  const records = await waitFor(
    async () => {
      const read = await clients.store.read(ids);
      return read.size === ids.length && read;
    },
    `${events.count} events of ${tenant} stored`,
    60_000,
  );
  return ids.map((id) => records.get(id) as EventRecord);
}

/** Label entries for events, as ingest writes them for a request's labels (see the tenant index in DESIGN): one item per event and label. */
async function label(
  clients: Clients,
  tableName: string,
  shardCount: number,
  records: readonly EventRecord[],
  name: string,
): Promise<void> {
  await batchPut(
    clients.dynamodb,
    tableName,
    records.map((record) => ({
      [TABLE.partitionKey]: labelEntryId(record.id, name),
      eventId: record.id,
      [TABLE.tenantShardKey]: labelShardKey(record.tenant, name, shardOf(record.id, { shardCount })),
      [TABLE.dueAtKey]: record.dueAt,
      [TABLE.ttlAttribute]: record.expiresAt,
    })),
  );
}

async function states(clients: Clients, records: readonly EventRecord[]): Promise<Map<string, string>> {
  const read = await clients.store.read(records.map(({ id }) => id));
  return new Map([...read].map(([id, record]) => [id, record.state]));
}

describe.concurrent("a tenant's labelled events, from the tenant index", () => {
  it('are read a page at a time in (due time, id) order, each once, however many are due at the same millisecond', async () => {
    const scheduler = await startTestScheduler(emulators, { tenants: TENANTS, env: FAST_TIMINGS });
    const clients = clientsOf(scheduler.outputs);
    try {
      const { tableName } = scheduler.outputs;
      const start = Date.now() + HOUR;
      // 260 entries in one shard, due at four times: pages of 100 end inside a run of equal due times.
      const entries = Array.from({ length: 260 }, (_, n) => ({ id: `c-${(n * 7919) % 1000}-${n}`, dueAt: start + (n % 4) }));
      await batchPut(
        clients.dynamodb,
        tableName,
        [...entries, { id: 'c-other-tenant', dueAt: start }].map(({ id, dueAt }) => ({
          [TABLE.partitionKey]: labelEntryId(id, 'busy'),
          eventId: id,
          [TABLE.tenantShardKey]: labelShardKey(id === 'c-other-tenant' ? 'globex' : 'acme', 'busy', 0),
          [TABLE.dueAtKey]: dueAt,
        })),
      );
      const labelled = new DynamoDbLabelledEvents(clients.dynamodb, tableName, 1);
      const read: JobPosition[] = [];
      for (let after: JobPosition | undefined; ; ) {
        const page = await labelled.page({ tenant: 'acme', label: 'busy', fromMs: start, beforeMs: undefined, after, limit: 100 });
        read.push(...page);
        after = page.at(-1);
        if (page.length < 100) break;
      }
      const ordered = entries.toSorted((a, b) => a.dueAt - b.dueAt || (a.id < b.id ? -1 : 1));
      expect(read).toEqual(ordered);
      expect(
        await labelled.page({ tenant: 'acme', label: 'busy', fromMs: start, beforeMs: start + 1, after: undefined, limit: 100 }),
      ).toEqual(ordered.filter(({ dueAt }) => dueAt === start));
    } finally {
      clients.destroy();
      await scheduler.stop();
    }
  }, 60_000);
});

describe.concurrent('bulk cancel by label', () => {
  it("cancels exactly the tenant's open events with the label and before the bound, never another tenant's, and tells the counts", async () => {
    const scheduler = await startTestScheduler(emulators, { tenants: TENANTS, env: FAST_TIMINGS });
    const clients = clientsOf(scheduler.outputs);
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      const { tableName, tenantInputTopicArns } = scheduler.outputs;
      const { shardCount } = scheduler.config;
      const start = Date.now() + HOUR;
      const bound = start + 1_000_000;
      const acmeTarget = failures.topicArn;
      const at = (n: number) => start + n * 1000;
      // More than two pages of them before the bound, some after it.
      const inScope = await schedule(clients, tenantInputTopicArns.acme ?? '', 'acme', {
        count: 230,
        prefix: 'in',
        dueAt: at,
        target: acmeTarget,
      });
      const afterBound = await schedule(clients, tenantInputTopicArns.acme ?? '', 'acme', {
        count: 20,
        prefix: 'late',
        dueAt: (n) => bound + n,
        target: acmeTarget,
      });
      const otherLabel = await schedule(clients, tenantInputTopicArns.acme ?? '', 'acme', {
        count: 5,
        prefix: 'other',
        dueAt: at,
        target: acmeTarget,
      });
      const theirs = await schedule(clients, tenantInputTopicArns.globex ?? '', 'globex', {
        count: 10,
        prefix: 'theirs',
        dueAt: at,
        target: GLOBEX_TARGET,
      });
      await label(clients, tableName, shardCount, [...inScope, ...afterBound], 'campaign-7');
      await label(clients, tableName, shardCount, otherLabel, 'campaign-8');
      await label(clients, tableName, shardCount, theirs, 'campaign-7');
      // One of them cancelled on its own before: refused as already ended.
      const [first] = inScope;
      await clients.store.cancel(first?.id ?? '', { tenant: 'acme', cutoffMs: 4000 }, { by: 'own-cancel', publishedAt: 0, expiresAt: 0 });

      await clients.sns.send(
        new PublishCommand({
          TopicArn: tenantInputTopicArns.acme,
          Message: JSON.stringify({
            action: 'cancel',
            label: 'campaign-7',
            due_before: new Date(bound).toISOString(),
            failure_topic: failures.topicArn,
          }),
        }),
      );
      const done = () => failures.notices().filter((notice) => notice.reason === REASON.BULK_CANCEL_DONE);
      await waitFor(() => done().length > 0, 'the counts on the failure topic', 60_000);
      expect(done()).toHaveLength(1);
      expect(done()[0]).toMatchObject({
        reason: REASON.BULK_CANCEL_DONE,
        details: { label: 'campaign-7', cancelled: 229, refused: { ended: 1, emitting: 0 } },
      });
      const inScopeStates = await states(clients, inScope);
      expect([...inScopeStates.values()].every((state) => state === EVENT_STATE.cancelled)).toBe(true);
      for (const others of [afterBound, otherLabel, theirs])
        expect([...(await states(clients, others)).values()].every((state) => state === EVENT_STATE.scheduled)).toBe(true);
      const read = await clients.store.read(inScope.map(({ id }) => id));
      expect([...read.values()].filter((record) => record.cancelledBy?.startsWith('b-'))).toHaveLength(229);
    } finally {
      await failures.stop();
      clients.destroy();
      await scheduler.stop();
    }
  }, 120_000);

  it('counts a page delivered twice once', async () => {
    const scheduler = await startTestScheduler(emulators, { tenants: TENANTS, env: FAST_TIMINGS });
    const clients = clientsOf(scheduler.outputs);
    try {
      const { tableName, tenantInputTopicArns, changesQueueUrl } = scheduler.outputs;
      const start = Date.now() + HOUR;
      const events = await schedule(clients, tenantInputTopicArns.acme ?? '', 'acme', {
        count: 150,
        prefix: 'twice',
        dueAt: (n) => start + n,
        target: `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('target')}`,
      });
      await label(clients, tableName, scheduler.config.shardCount, events, 'twice');
      const now = Date.now();
      await clients.jobs.create({
        jobId: 'b-twice',
        tenant: 'acme',
        label: 'twice',
        fromMs: now,
        dueBefore: undefined,
        failureTopic: undefined,
        dryRun: false,
        createdAt: now,
        expiresAt: Math.ceil(now / 1000) + 3600,
      });
      const body = encodeBulkCancelPage({ jobId: 'b-twice', from: JOB_CURSOR.start });
      await Promise.all([1, 2].map(() => clients.sqs.send(new SendMessageCommand({ QueueUrl: changesQueueUrl, MessageBody: body }))));
      const job = await waitFor(async () => {
        const current = await clients.jobs.get('b-twice');
        return current?.state === 'done' && current;
      }, 'the job done');
      expect(job.counts).toEqual({ cancelled: 150, refused: { ended: 0, emitting: 0 } });
      expect([...(await states(clients, events)).values()].every((state) => state === EVENT_STATE.cancelled)).toBe(true);
    } finally {
      clients.destroy();
      await scheduler.stop();
    }
  }, 120_000);

  it('resumes after the service is killed with SIGKILL mid-job and started again, with exact counts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bulk-cancel-restart-'));
    const services: ServiceProcess[] = [];
    const start = async () => {
      const run = await mkdtemp(join(dir, 'run-'));
      await writeTenantsFile(join(run, 'tenants.json'), TENANTS);
      const service = spawnService(run, { args: ['--data-dir', join(dir, 'data')], env: { ...FAST_TIMINGS, LOG_LEVEL: 'warn' } });
      services.push(service);
      return { service, outputs: await outputsOf(service) };
    };
    try {
      const before = await start();
      let clients = clientsOf(before.outputs);
      const shardCount = Number(FAST_TIMINGS.SCHEDULER_SHARD_COUNT);
      const due = Date.now() + HOUR;
      const events = await schedule(clients, before.outputs.tenantInputTopicArns.acme ?? '', 'acme', {
        count: 500,
        prefix: 'resume',
        dueAt: (n) => due + n * 10,
        target: `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('target')}`,
      });
      await label(clients, before.outputs.tableName, shardCount, events, 'resume');
      const { MessageId } = await clients.sns.send(
        new PublishCommand({
          TopicArn: before.outputs.tenantInputTopicArns.acme,
          Message: JSON.stringify({ action: 'cancel', label: 'resume' }),
        }),
      );
      const jobId = `b-${MessageId}`;
      // Killed once the first page is counted, while the job still has pages to go.
      const moving = await waitFor(async () => {
        const job = await clients.jobs.get(jobId);
        return job !== undefined && job.cursor !== JOB_CURSOR.start && job;
      }, 'the job under way');
      before.service.child.kill('SIGKILL');
      await before.service.exited;
      clients.destroy();
      expect(moving.state).toBe('running');

      const after = await start();
      clients = clientsOf(after.outputs);
      try {
        const job = await waitFor(
          async () => {
            const current = await clients.jobs.get(jobId);
            return current?.state === 'done' && current;
          },
          'the job done after the restart',
          // A page the killed service held comes back after the visibility timeout (10 s).
          90_000,
        );
        expect(job.counts).toEqual({ cancelled: 500, refused: { ended: 0, emitting: 0 } });
        const read = await clients.store.read(events.map(({ id }) => id));
        expect([...read.values()].every((record) => record.state === EVENT_STATE.cancelled && record.cancelledBy === jobId)).toBe(true);
      } finally {
        clients.destroy();
      }
    } finally {
      for (const service of services.splice(0)) service.child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('is started by scripts/admin events cancel, which counts a dry run, then cancels and prints the counts', async () => {
    const service = await startServiceWithFiles(emulators, { tenants: TENANTS });
    const { scheduler, where } = service;
    const clients = clientsOf(scheduler.outputs);
    try {
      const start = Date.now() + HOUR;
      const events = await schedule(clients, scheduler.outputs.tenantInputTopicArns.acme ?? '', 'acme', {
        count: 120,
        prefix: 'cli',
        dueAt: (n) => start + n,
        target: `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('target')}`,
      });
      await label(clients, scheduler.outputs.tableName, scheduler.config.shardCount, events, 'cli');

      const dry = await admin('events', 'cancel', '--tenant', 'acme', '--label', 'cli', '--dry-run', ...where);
      expect(dry.stderr).toBe('');
      expect(dry.code).toBe(0);
      expect(dry.stdout.split('\n').at(-1)).toBe('done: would cancel 120; refused: 0 already ended, 0 within the change cutoff');
      expect([...(await states(clients, events)).values()].every((state) => state === EVENT_STATE.scheduled)).toBe(true);

      const run = await admin('events', 'cancel', '--tenant', 'acme', '--label', 'cli', ...where);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^job b-[0-9a-f-]+: cancelling the open events of tenant acme labelled "cli"/);
      expect(run.stdout.split('\n').at(-1)).toBe('done: cancelled 120; refused: 0 already ended, 0 within the change cutoff');
      expect([...(await states(clients, events)).values()].every((state) => state === EVENT_STATE.cancelled)).toBe(true);

      const unknown = await admin('events', 'cancel', '--tenant', 'initech', '--label', 'cli', ...where);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('not registered');
      expect((await admin('events', 'cancel', '--tenant', 'acme', '--label', '.bad', ...where)).code).toBe(2);
    } finally {
      clients.destroy();
      await service.stop();
    }
  }, 120_000);

  it("cancels with --all every open event of the tenant, labelled or not, and none of another tenant's", async () => {
    const service = await startServiceWithFiles(emulators, { tenants: TENANTS });
    const { scheduler, where } = service;
    const clients = clientsOf(scheduler.outputs);
    try {
      const start = Date.now() + HOUR;
      const target = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('target')}`;
      const acme = await schedule(clients, scheduler.outputs.tenantInputTopicArns.acme ?? '', 'acme', {
        count: 130,
        prefix: 'all',
        dueAt: (n) => start + n,
        target,
      });
      await label(clients, scheduler.outputs.tableName, scheduler.config.shardCount, acme.slice(0, 30), 'some');
      const globex = await schedule(clients, scheduler.outputs.tenantInputTopicArns.globex ?? '', 'globex', {
        count: 5,
        prefix: 'theirs',
        dueAt: (n) => start + n,
        target: GLOBEX_TARGET,
      });

      const run = await admin('events', 'cancel', '--tenant', 'acme', '--all', ...where);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^job b-[0-9a-f-]+: cancelling every open event and recurring series of tenant acme$/m);
      expect(run.stdout.split('\n').at(-1)).toBe('done: cancelled 130; refused: 0 already ended, 0 within the change cutoff');
      expect([...(await states(clients, acme)).values()].every((state) => state === EVENT_STATE.cancelled)).toBe(true);
      expect([...(await states(clients, globex)).values()].every((state) => state === EVENT_STATE.scheduled)).toBe(true);

      expect((await admin('events', 'cancel', '--tenant', 'acme', '--all', '--label', 'some', ...where)).code).toBe(2);
      expect((await admin('events', 'cancel', '--tenant', 'acme', ...where)).stderr).toContain('--label is missing (or --all');
    } finally {
      clients.destroy();
      await service.stop();
    }
  }, 120_000);
});
