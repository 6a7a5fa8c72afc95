import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { EVENT_STATE, PUBLIC_TENANT_ID, SERIES_OCCURRENCES_NOTE } from '@adhoc-scheduler/shared';
import { answers } from '@adhoc-scheduler/shared/local-service-access';
import { SCHEDULER_OUTPUTS } from '../../src/cdk/stack-outputs.js';
import { AdminConsoleBackend } from '../../src/console/admin-backend.js';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalScheduler } from '../../src/local/runtime.js';
import { admin, adminScript, deployedSdkEnvironment } from './admin-run.js';
import {
  closedEndpoint,
  expectNotEarly,
  request,
  SchedulerClient,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';
import { outputsOf, spawnService } from './service-process.js';

const TENANT_ACCOUNT = '111111111111';

const emulators = sharedEmulators();

/** A running local service with its outputs and tenants files, as scripts/start leaves them. */
async function setup() {
  const service = await startServiceWithFiles(emulators);
  const { dir, scheduler, tenantsFile, outputsFile } = service;
  const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: scheduler.outputs.endpoint };
  const sns = new SNSClient(access);
  const sqs = new SQSClient(access);
  const clients: SchedulerClient[] = [];
  return {
    dir,
    scheduler,
    tenantsFile,
    outputsFile,
    sns,
    sqs,
    /** The files the tenant commands take. */
    files: ['--tenants', tenantsFile, '--outputs', outputsFile],
    /** Where the event commands read: this service, and its registry. */
    where: ['--outputs', outputsFile, '--tenants', tenantsFile],
    /** A client publishing to this input topic. */
    clientOf(topicArn: string): SchedulerClient {
      const client = new SchedulerClient(scheduler, topicArn);
      clients.push(client);
      return client;
    },
    async teardown() {
      for (const client of clients) client.destroy();
      sns.destroy();
      sqs.destroy();
      await service.stop();
    },
  };
}

/** The event once `event show` finds it, parsed from --json. */
async function shownEvent(args: readonly string[], description: string): Promise<Record<string, unknown>> {
  const run = await waitFor(async () => {
    const shown = await admin('event', 'show', ...args, '--json');
    if (shown.code === 2) throw new Error(`wrong command line: ${shown.stderr}`);
    return shown.code === 0 && shown;
  }, description);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function ingestQueueArn(sqs: SQSClient, scheduler: LocalScheduler): Promise<string | undefined> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: scheduler.outputs.ingestQueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn;
}

describe.concurrent('scripts/admin tenant add and tenant list', () => {
  it("creates the tenant topic on the ingest queue, prints its ARN, and what is published there is the tenant's", async () => {
    const { scheduler, sns, sqs, files, where, tenantsFile, outputsFile, clientOf, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const added = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--target-account', LOCAL_ACCOUNT, ...files);
      expect(added.code).toBe(0);
      const topicArn = added.stdout;
      expect(topicArn).toMatch(/^arn:aws:sns:us-east-1:000000000000:scheduler-[0-9a-f]+-tenant-acme$/);
      expect(added.stderr).toContain('Tenant acme registered');
      expect(JSON.parse(await readFile(tenantsFile, 'utf8'))).toEqual({
        tenants: [{ id: 'acme', accounts: [TENANT_ACCOUNT], targetAccounts: [LOCAL_ACCOUNT] }],
      });
      // The service's outputs list it, as they would after a restart.
      expect(JSON.parse(await readFile(outputsFile, 'utf8'))).toMatchObject({
        endpoint: scheduler.outputs.endpoint,
        tenantInputTopicArns: { acme: topicArn },
      });
      const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
      expect(Subscriptions.map((subscription) => subscription.Endpoint)).toEqual([await ingestQueueArn(sqs, scheduler)]);

      const acme = clientOf(topicArn);
      const farDueAt = Date.now() + 60_000;
      const messageId = await acme.publish(request(target.topicArn, farDueAt, 'far', { user: 'alice', id: 'order-1' }));
      // A near-path event is listed under its labels (it has no other tenant-index entry by default).
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'near', { user: 'alice', id: 'order-2', labels: ['order-2'] }));

      const far = await shownEvent(['--tenant', 'acme', '--id', 'order-1', ...where], 'the far event recorded');
      expect(far).toMatchObject({
        tenant: 'acme',
        user: 'alice',
        state: EVENT_STATE.scheduled,
        dueAt: new Date(farDueAt).toISOString(),
        version: 1,
        target: target.topicArn,
        clientId: 'order-1',
        inputMessageId: messageId,
      });
      const human = await admin('event', 'show', String(far.id), ...where);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^state +scheduled$/m);
      expect(human.stdout).toMatch(new RegExp(`^due +${new Date(farDueAt).toISOString()}$`, 'm'));

      expectNotEarly(await waitFor(() => target.withPayload('near')[0], 'the near event delivered'));
      // The end is recorded after the publish, with the batch's others.
      const near = await waitFor(async () => {
        const shown = await shownEvent(['--tenant', 'acme', '--id', 'order-2', ...where], 'the near event');
        return shown.state === EVENT_STATE.emitted && shown;
      }, 'the near event recorded as emitted');
      expect(Date.parse(String(near.emittedAt))).toBeGreaterThanOrEqual(Date.parse(String(near.queuedAt)));

      const scheduled = await admin('events', '--tenant', 'acme', '--state', 'scheduled', '--json', ...where);
      expect(JSON.parse(scheduled.stdout)).toMatchObject({ events: [{ id: far.id, state: 'scheduled' }], next: null });
      const emitted = await waitFor(async () => {
        const listed = await admin('events', '--tenant', 'acme', '--label', 'order-2', '--state', 'emitted', ...where);
        return listed.stdout.includes(String(near.id)) && listed;
      }, 'the near event listed as emitted');
      expect(emitted.stdout.split('\n')[0]).toMatch(/^DUE +EVENT ID +STATE +SINCE +CLIENT ID +USER +VERSION +LABELS$/);
      expect(emitted.stdout.split('\n')[1]).toMatch(/^\S+Z +\S+ +emitted +\S+Z +order-2 /);

      // Client ids are the tenant's own: the same id under the public tenant is another event.
      const foreign = await admin('event', 'show', '--tenant', PUBLIC_TENANT_ID, '--id', 'order-1', '--user', 'alice', ...where);
      expect(foreign.code).toBe(1);
    } finally {
      await target.stop();
      await teardown();
    }
  });

  it('adding a registered id again updates its settings, or changes nothing when they are the same', async () => {
    const { scheduler, files, tenantsFile, teardown } = await setup();
    try {
      const first = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, ...files);
      const written = await readFile(tenantsFile, 'utf8');

      const again = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, ...files);
      expect(again).toMatchObject({ code: 0, stdout: first.stdout });
      expect(again.stderr).toContain('nothing changed');
      expect(await readFile(tenantsFile, 'utf8')).toBe(written);

      const updated = await admin(
        'tenant',
        'add',
        'acme',
        '--account',
        TENANT_ACCOUNT,
        '--max-open-events',
        '5',
        '--max-ingest-per-second',
        '2',
        '--max-control-per-second',
        '7',
        '--user-optional',
        ...files,
      );
      expect(updated).toMatchObject({ code: 0, stdout: first.stdout });
      expect(updated.stderr).toContain('its settings are updated');
      expect(JSON.parse(await readFile(tenantsFile, 'utf8'))).toEqual({
        tenants: [
          { id: 'acme', accounts: [TENANT_ACCOUNT], maxOpenEvents: 5, maxIngestPerSecond: 2, maxControlPerSecond: 7, requireUser: false },
        ],
      });
      expect(updated.stderr).toContain('at most 5 open events, 2 new events per second and 7 control requests per second');

      const listed = await admin('tenant', 'list', '--json', ...files);
      expect(JSON.parse(listed.stdout)).toEqual({
        tenants: [
          {
            id: PUBLIC_TENANT_ID,
            enabled: true,
            accounts: [],
            targetAccounts: null,
            maxOpenEvents: 1_000_000,
            maxIngestPerSecond: 5_000,
            // Strict on the shared topic, open to anyone.
            maxControlPerSecond: 100,
            requireUser: true,
            inputTopicArn: scheduler.outputs.inputTopicArn,
            deadLetterTopic: null,
            paused: null,
          },
          {
            id: 'acme',
            enabled: true,
            accounts: [TENANT_ACCOUNT],
            targetAccounts: [TENANT_ACCOUNT],
            maxOpenEvents: 5,
            maxIngestPerSecond: 2,
            maxControlPerSecond: 7,
            requireUser: false,
            inputTopicArn: first.stdout,
            deadLetterTopic: null,
            paused: null,
          },
        ],
        next: null,
      });
      const table = await admin('tenant', 'list', ...files);
      expect(table.stdout).toMatch(/^acme +111111111111 +own +5 +2 +7 +arn:aws:sns:\S+-tenant-acme +- +-$/m);
    } finally {
      await teardown();
    }
  });

  it('refuses an invalid tenant, naming the flag at fault, and writes nothing', async () => {
    const { files, tenantsFile, teardown } = await setup();
    try {
      const badAccount = await admin('tenant', 'add', 'acme', '--account', '12345', ...files);
      expect(badAccount.code).toBe(1);
      expect(badAccount.stderr).toContain('--account "12345"');
      const badId = await admin('tenant', 'add', 'Acme!', '--account', TENANT_ACCOUNT, ...files);
      expect(badId.code).toBe(1);
      expect(badId.stderr).toContain('the tenant id "Acme!"');
      expect((await admin('tenant', 'add', PUBLIC_TENANT_ID, '--account', TENANT_ACCOUNT, ...files)).code).toBe(1);
      expect((await admin('tenant', 'add', 'acme', ...files)).code).toBe(2);
      expect((await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--max-open-events', 'many', ...files)).code).toBe(2);
      expect((await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--max-control-per-second', 'lots', ...files)).code).toBe(
        2,
      );
      expect(existsSync(tenantsFile)).toBe(false);
    } finally {
      await teardown();
    }
  });

  it("registers a dead-letter topic in an account the tenant may target, in the service's region, not one of the service's own topics", async () => {
    const { files, tenantsFile, scheduler, teardown } = await setup();
    try {
      const deadLetterTopic = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:acme-dead-letters`;
      const outside = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--dead-letter-topic', deadLetterTopic, ...files);
      expect(outside.code).toBe(1);
      expect(outside.stderr).toContain(`deadLetterTopic ${deadLetterTopic} is in account ${LOCAL_ACCOUNT}, which it may not publish to`);
      const otherRegion = `arn:aws:sns:eu-west-1:${TENANT_ACCOUNT}:acme-dead-letters`;
      const far = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--dead-letter-topic', otherRegion, ...files);
      expect(far.code).toBe(1);
      expect(far.stderr).toContain(`is not in the scheduler's region ${LOCAL_REGION}`);
      expect(
        (await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--dead-letter-topic', 'dead-letters', ...files)).stderr,
      ).toContain('--dead-letter-topic "dead-letters"');
      // The service's own input topic, in an account the tenant may target: never a dead-letter topic.
      const own = await admin(
        'tenant',
        'add',
        'acme',
        '--account',
        TENANT_ACCOUNT,
        '--target-account',
        LOCAL_ACCOUNT,
        '--dead-letter-topic',
        scheduler.outputs.inputTopicArn,
        ...files,
      );
      expect(own.code).toBe(1);
      expect(own.stderr).toContain(`deadLetterTopic ${scheduler.outputs.inputTopicArn} is one of the scheduler's own topics`);
      expect(existsSync(tenantsFile)).toBe(false);

      const added = await admin(
        'tenant',
        'add',
        'acme',
        '--account',
        TENANT_ACCOUNT,
        '--target-account',
        LOCAL_ACCOUNT,
        '--dead-letter-topic',
        deadLetterTopic,
        ...files,
      );
      expect(added.code).toBe(0);
      expect(added.stderr).toContain(`dead-letter topic ${deadLetterTopic}`);
      expect(JSON.parse(await readFile(tenantsFile, 'utf8'))).toEqual({
        tenants: [{ id: 'acme', accounts: [TENANT_ACCOUNT], targetAccounts: [LOCAL_ACCOUNT], deadLetterTopic }],
      });
      const listed = JSON.parse((await admin('tenant', 'list', '--json', ...files)).stdout) as {
        tenants: { id: string; deadLetterTopic: string | null }[];
      };
      expect(listed.tenants.map(({ id, deadLetterTopic: topic }) => [id, topic])).toEqual([
        [PUBLIC_TENANT_ID, null],
        ['acme', deadLetterTopic],
      ]);
    } finally {
      await teardown();
    }
  });

  it("refuses a tenant that would reach another tenant's account, naming both, and writes nothing", async () => {
    const { files, tenantsFile, teardown } = await setup();
    try {
      expect((await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, ...files)).code).toBe(0);
      const written = await readFile(tenantsFile, 'utf8');
      const grabbing = await admin('tenant', 'add', 'globex', '--account', '222222222222', '--target-account', TENANT_ACCOUNT, ...files);
      expect(grabbing.code).toBe(1);
      expect(grabbing.stderr).toContain(`tenant "globex" lists ${TENANT_ACCOUNT} in targetAccounts, but it is an account of tenant "acme"`);
      expect(await readFile(tenantsFile, 'utf8')).toBe(written);
    } finally {
      await teardown();
    }
  });

  it('refuses to register while the service is not running, saying to start it, and writes nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'admin-'));
    try {
      const tenantsFile = join(dir, 'tenants.json');
      const never = await admin(
        'tenant',
        'add',
        'acme',
        '--account',
        TENANT_ACCOUNT,
        '--tenants',
        tenantsFile,
        '--outputs',
        join(dir, 'outputs.json'),
      );
      expect(never.code).toBe(1);
      expect(never.stderr).toContain('scripts/start');

      // Outputs left behind by a service that has stopped: its port answers no more.
      const endpoint = await closedEndpoint();
      const stale = join(dir, 'stale-outputs.json');
      await writeFile(
        stale,
        JSON.stringify({
          region: LOCAL_REGION,
          endpoint,
          dynamodbEndpoint: endpoint,
          tableName: 'adhoc-scheduler-events',
          ingestQueueUrl: `${endpoint}/000000000000/adhoc-scheduler-ingest`,
          inputTopicArn: 'arn:aws:sns:us-east-1:000000000000:adhoc-scheduler-input',
        }),
      );
      const stopped = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--tenants', tenantsFile, '--outputs', stale);
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toMatch(/not running .*Start it with scripts\/start/);
      expect(existsSync(tenantsFile)).toBe(false);
      // Reading events there says so too, in the same line.
      const events = await admin(
        'events',
        '--tenant',
        PUBLIC_TENANT_ID,
        '--state',
        'scheduled',
        '--tenants',
        tenantsFile,
        '--outputs',
        stale,
      );
      expect(events).toMatchObject({ code: 1, stdout: '' });
      expect(events.stderr.split('\n')).toHaveLength(1);
      expect(events.stderr).toMatch(/ECONNREFUSED.*\)\. Start it with scripts\/start, then run this again\.$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('on a deployed stack, needs its outputs (its topics and queues), not a table name alone', async () => {
    const refused = await admin('tenant', 'add', 'acme', '--account', TENANT_ACCOUNT, '--table', 'events', '--region', 'eu-west-1');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('tenant add on a deployed stack needs its outputs: name them with --stack-outputs FILE');
  });
});

describe.concurrent('scripts/admin help', () => {
  it("prints a command group's own help, and says which commands a group takes", async () => {
    const tenant = await admin('tenant', '--help');
    expect(tenant.code).toBe(0);
    expect(tenant.stdout).toContain('Usage: scripts/admin tenant add <id>');
    expect(tenant.stdout).toContain('Usage: scripts/admin tenant list');
    expect(tenant.stdout).not.toContain('Operator commands');
    const event = await admin('event', '--help');
    expect(event.code).toBe(0);
    expect(event.stdout).toContain('Usage: scripts/admin event show <event-id>');
    expect(event.stdout).not.toContain('Operator commands');
    expect((await admin('--help')).stdout).toContain('Operator commands');
    const bare = await admin('tenant');
    expect(bare).toMatchObject({ code: 2, stdout: '' });
    expect(bare.stderr).toBe(
      'tenant takes a command: add or update or show or import or export or remove or list or pause or resume (scripts/admin tenant --help explains the command)',
    );
  });
});

describe.concurrent('scripts/admin events, event show and quota reconcile', () => {
  it('shows a recurring series: its schedule and state, and its next occurrences in its zone and in UTC', async () => {
    const { scheduler, where, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const client = new SchedulerClient(scheduler);
    try {
      const { date: _date, ...oneOff } = request(target.topicArn, 0, 'daily report', { user: 'bob', id: 'daily-report' });
      await client.publish({ ...oneOff, schedule: 'cron(0 9 ? * MON-FRI *)', timezone: 'Europe/Berlin', offset: 250, labels: ['reports'] });
      const shown = await waitFor(async () => {
        const run = await admin('series', 'show', 'daily-report', '--tenant', PUBLIC_TENANT_ID, '--user', 'bob', '--json', ...where);
        if (run.code === 2) throw new Error(`wrong command line: ${run.stderr}`);
        return run.code === 0 && run;
      }, 'the series stored');
      const series = JSON.parse(shown.stdout) as {
        id: string;
        state: string;
        fired: number;
        spec: { schedule: string; timezone: string };
        next: { occurrence: number; at: string; utc: string; materialised: boolean }[];
      };
      expect(series).toMatchObject({ state: 'active', fired: 0, spec: { schedule: 'cron(0 9 ? * MON-FRI *)', timezone: 'Europe/Berlin' } });
      expect(series.id).toMatch(/^s-c-/);
      expect(series.next.map(({ occurrence }) => occurrence)).toEqual([1, 2, 3, 4, 5]);
      for (const next of series.next) {
        // 09:00:00.250 in Berlin, winter or summer time; the same instant in UTC.
        expect(next.at).toMatch(/^\d{4}-\d\d-\d\dT09:00:00\.250\+0[12]:00$/);
        expect(Date.parse(next.at)).toBe(Date.parse(next.utc));
        expect(next.utc).toMatch(/^\d{4}-\d\d-\d\dT0[78]:00:00\.250Z$/);
        // Weekdays only.
        expect([0, 6]).not.toContain(new Date(next.utc).getUTCDay());
      }

      const text = await admin('series', 'show', series.id, '--tenant', PUBLIC_TENANT_ID, ...where);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^series +s-c-/m);
      expect(text.stdout).toMatch(/^schedule +cron\(0 9 \? \* MON-FRI \*\)$/m);
      expect(text.stdout).toMatch(/^fired +0 \(/m);
      const [firstNext] = series.next;
      const firstLine = text.stdout.split('\n').find((line) => line.startsWith('next #1 '));
      expect(firstLine?.replace(/^next #1 +/, '')).toBe(`${firstNext?.at}  ${firstNext?.utc}`);
      // Another tenant's series, or no series: not found; the public tenant's client id without its user: a wrong command line.
      expect(await admin('series', 'show', series.id, '--tenant', 'acme', ...where)).toMatchObject({ code: 1 });
      expect(await admin('series', 'show', 'daily-report', '--tenant', PUBLIC_TENANT_ID, ...where)).toMatchObject({ code: 2 });
    } finally {
      client.destroy();
      await target.stop();
      await teardown();
    }
  });

  it("lists a tenant's events in one state a page at a time, in due order, the next page from the printed token", async () => {
    const { scheduler, where, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const client = new SchedulerClient(scheduler);
    try {
      const now = Date.now();
      for (const [id, dueInMs] of [
        ['later', 120_000],
        ['sooner', 60_000],
      ] as const) {
        await client.publish(request(target.topicArn, now + dueInMs, id, { user: 'bob', id }));
      }
      const list = (...extra: string[]) =>
        admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled', '--limit', '1', ...extra, ...where);
      await waitFor(async () => {
        const all = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled', '--json', ...where);
        return (JSON.parse(all.stdout) as { events: unknown[] }).events.length === 2;
      }, 'both events stored');

      const first = await list();
      expect(first.code).toBe(0);
      const [header, row, next] = first.stdout.split('\n');
      expect(header).toMatch(/^DUE +EVENT ID +STATE +SINCE +CLIENT ID +USER +VERSION +LABELS$/);
      expect(row).toMatch(/^\S+Z +c-[0-9a-f]{40} +scheduled +\S+Z +sooner +bob +1 +-$/);
      const token = next?.match(/^next page: --after (\S+)$/)?.[1];
      expect(token).toBeDefined();

      // The second page holds the later event, and is the last.
      const second = JSON.parse((await list('--json', '--after', token ?? '')).stdout) as { events: { clientId: string }[]; next: unknown };
      expect(second).toEqual({ events: [expect.objectContaining({ clientId: 'later' })], next: null });

      expect((await list('--after', 'not-a-token')).code).toBe(2);
      expect((await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'pending', ...where)).code).toBe(2);
      // The public tenant's client ids are per user: without one there is nothing to look up.
      expect((await admin('event', 'show', '--tenant', PUBLIC_TENANT_ID, '--id', 'sooner', ...where)).code).toBe(2);
    } finally {
      client.destroy();
      await target.stop();
      await teardown();
    }
  });

  it("lists a tenant's open events by label and due range, and shows an event's labels", async () => {
    const { scheduler, where, teardown } = await setup();
    const client = new SchedulerClient(scheduler);
    try {
      const now = Date.now();
      const target = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:later`;
      await client.publishBatch([
        request(target, now + 60_000, 'first', { user: 'dan', id: 'first', labels: ['billing', 'eu'] }),
        request(target, now + 120_000, 'second', { user: 'dan', id: 'second', labels: ['billing'] }),
        request(target, now + 180_000, 'third', { user: 'dan', id: 'third' }),
      ]);
      const events = async (...extra: string[]) =>
        (
          JSON.parse((await admin('events', '--tenant', PUBLIC_TENANT_ID, '--json', ...extra, ...where)).stdout) as {
            events: { clientId: string; labels?: string[] }[];
          }
        ).events;
      await waitFor(async () => (await events()).length === 3, 'the three events stored');
      // An event's label entries are written after its record (its request is settled only then).
      await waitFor(async () => (await events('--label', 'billing')).length === 2, 'both billing entries written');

      expect((await events('--label', 'billing')).map(({ clientId }) => clientId)).toEqual(['first', 'second']);
      expect((await events('--label', 'eu'))[0]).toMatchObject({ clientId: 'first', labels: ['billing', 'eu'] });
      const from = new Date(now + 90_000).toISOString();
      const to = new Date(now + 180_000).toISOString();
      expect((await events('--from', from, '--to', to)).map(({ clientId }) => clientId)).toEqual(['second']);
      expect((await events('--state', 'cancelled')).length).toBe(0);
      const table = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--label', 'billing', ...where);
      expect(table.stdout.split('\n')[1]).toMatch(/ billing,eu$/);
      // A listing without a label says, on stderr, that a series' occurrences are listed with their series; one with a label lists them.
      expect(table.stderr).toBe('');
      expect((await admin('events', '--tenant', PUBLIC_TENANT_ID, ...where)).stderr.trim()).toBe(SERIES_OCCURRENCES_NOTE);
      const show = await admin('event', 'show', '--tenant', PUBLIC_TENANT_ID, '--user', 'dan', '--id', 'first', ...where);
      expect(show.stdout).toMatch(/^labels +billing, eu$/m);
      expect((await admin('events', '--tenant', PUBLIC_TENANT_ID, '--from', 'yesterday', ...where)).code).toBe(2);
    } finally {
      client.destroy();
      await teardown();
    }
  });

  it('lists an event due in 10 s that failed (TARGET_NOT_FOUND) under --state failed, and the console’s overview counts it', async () => {
    const { scheduler, where, outputsFile, tenantsFile, teardown } = await setup();
    const client = new SchedulerClient(scheduler);
    try {
      const gone = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('no-such-topic')}`;
      await client.publish(request(gone, Date.now() + 10_000, 'to nowhere'));
      const failed = async () =>
        (
          JSON.parse((await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'failed', '--json', ...where)).stdout) as {
            events: { id: string; state: string; reason?: string }[];
          }
        ).events;
      const [listed] = await waitFor(
        async () => {
          const events = await failed();
          return events.length > 0 && events;
        },
        'the failed event listed',
        30_000,
      );
      expect(listed).toMatchObject({ state: 'failed', reason: 'TARGET_NOT_FOUND' });
      const human = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'failed', ...where);
      expect(human.stdout).toMatch(/ failed /);
      // Its scheduler lists near-path events (the default): no note.
      expect(human.stderr).toBe('');
      const overview = await new AdminConsoleBackend({ kind: 'local', outputs: outputsFile }, { tenantsFile }).overview(
        PUBLIC_TENANT_ID,
        Date.now(),
      );
      expect(overview).toMatchObject({ emittedLastHour: 0, failedLastHour: 1, listsQueuedEvents: true });
    } finally {
      client.destroy();
      await teardown();
    }
  });

  it('prints no next page after a page that holds the last events', async () => {
    const { scheduler, where, outputsFile, teardown } = await setup();
    const client = new SchedulerClient(scheduler);
    try {
      const dueAt = Date.now() + 60_000;
      await client.publishBatch(
        Array.from({ length: 5 }, (_, i) =>
          request(`arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:later`, dueAt, `e-${i}`, { user: 'dan' }),
        ),
      );
      const list = (limit: string) =>
        admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled', '--limit', limit, '--json', ...where);
      await waitFor(
        async () => (JSON.parse((await list('100')).stdout) as { events: unknown[] }).events.length === 5,
        'the five events stored',
      );
      expect(JSON.parse((await list('5')).stdout)).toMatchObject({ events: { length: 5 }, next: null });
      const human = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled', '--limit', '5', ...where);
      expect(human.stdout).not.toContain('next page');
      // Near-path events indexed (the default): nothing is left out, nothing said.
      expect(human.stderr).not.toContain('SCHEDULER_INDEX_QUEUED_EVENTS');
      // In the lean setting, as its outputs say, it says which events a listing without a label leaves out (on stderr, apart from the listing).
      await writeFile(outputsFile, JSON.stringify({ ...scheduler.outputs, indexQueuedEvents: false }));
      const lean = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled', '--limit', '5', ...where);
      expect(lean.stderr).toContain('SCHEDULER_INDEX_QUEUED_EVENTS=false');
      expect(lean.stdout).toBe(human.stdout);
      expect((await admin('events', '--tenant', PUBLIC_TENANT_ID, '--label', 'none', ...where)).stderr).toBe('');
      expect(JSON.parse((await list('4')).stdout)).toMatchObject({ events: { length: 4 }, next: expect.any(String) });
    } finally {
      client.destroy();
      await teardown();
    }
  });

  it('says so when a tenant looked up is not registered, and exits 1', async () => {
    const { where, teardown } = await setup();
    try {
      const events = await admin('events', '--tenant', 'nobody', '--state', 'scheduled', ...where);
      expect(events).toMatchObject({ code: 1, stdout: '' });
      expect(events.stderr).toMatch(/^no scheduled events: tenant "nobody" is not registered in \S+tenants\.json/);
      const show = await admin('event', 'show', '--tenant', 'nobody', '--id', 'order-1', ...where);
      expect(show).toMatchObject({ code: 1, stdout: '' });
      expect(show.stderr).toContain('tenant "nobody" is not registered');
      const reconcile = await admin('quota', 'reconcile', '--tenant', 'nobody', ...where);
      expect(reconcile).toMatchObject({ code: 1, stdout: '' });
      expect(reconcile.stderr).toMatch(/^no quota to reconcile: tenant "nobody" is not registered in \S+tenants\.json/);
      // The public tenant is always there: nothing scheduled is an answer.
      const none = await admin('events', '--tenant', PUBLIC_TENANT_ID, '--state', 'cancelled', ...where);
      expect(none).toMatchObject({ code: 0, stdout: `no cancelled events of tenant ${PUBLIC_TENANT_ID}` });
    } finally {
      await teardown();
    }
  });

  it('after a kill -9 of the service, says in the line docs/operators/admin.md shows that it is not running, for every command that needs it (through scripts/admin)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'admin-'));
    const service = spawnService(dir, { args: ['--in-memory'] });
    try {
      const { endpoint } = await outputsOf(service);
      service.child.kill('SIGKILL');
      await service.exited;
      // Its emulators notice that their parent is gone and exit; the outputs file stays behind.
      await waitFor(async () => !(await answers(endpoint)), 'the killed service no longer answering');
      expect(existsSync(service.outputsFile)).toBe(true);
      const notRunning =
        `the local service of ${service.outputsFile} is not running (${endpoint}: connect ECONNREFUSED ${new URL(endpoint).host}). ` +
        'Start it with scripts/start, then run this again.\n';
      const where = ['--outputs', service.outputsFile, '--tenants', service.tenantsFile];
      const commands = [
        ...[
          ['events', '--tenant', PUBLIC_TENANT_ID, '--state', 'scheduled'],
          ['event', 'show', 'm-00000000-0000-0000-0000-000000000000'],
          ['series', 'show', 's-m-00000000-0000-0000-0000-000000000000', '--tenant', PUBLIC_TENANT_ID],
          ['quota', 'reconcile', '--tenant', PUBLIC_TENANT_ID],
          ['tenant', 'add', 'acme', '--account', TENANT_ACCOUNT],
        ].map((command) => [...command, ...where]),
        // It reads no registry.
        ['table', 'migrate', '--outputs', service.outputsFile],
      ];
      const runs = await Promise.all(commands.map((command) => adminScript(command)));
      for (const [index, command] of commands.entries()) {
        expect(runs[index], command.join(' ')).toEqual({ code: 1, stdout: '', stderr: notRunning });
      }
    } finally {
      service.child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('exits 1 with a clear message for an unknown event id (through scripts/admin)', async () => {
    const { where, teardown } = await setup();
    try {
      const unknown = await adminScript(['event', 'show', 'c-0000000000000000000000000000000000000000', ...where]);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toContain('no event c-0000000000000000000000000000000000000000');
    } finally {
      await teardown();
    }
  });

  it("reads a deployed stack's table named by its cdk outputs, with the default credential chain", async () => {
    const { scheduler, dir, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const client = new SchedulerClient(scheduler);
    try {
      const dueAt = Date.now() + 60_000;
      await client.publish(request(target.topicArn, dueAt, 'deployed', { user: 'carol', id: 'invoice-7' }));
      const stackOutputs = join(dir, 'cdk-outputs.json');
      await writeFile(
        stackOutputs,
        JSON.stringify({
          AdhocScheduler: { [SCHEDULER_OUTPUTS.tableName]: scheduler.outputs.tableName, [SCHEDULER_OUTPUTS.region]: LOCAL_REGION },
        }),
      );
      const awsEnvironment = deployedSdkEnvironment(scheduler.outputs);
      const args = ['event', 'show', '--tenant', PUBLIC_TENANT_ID, '--id', 'invoice-7', '--user', 'carol', '--stack-outputs', stackOutputs];
      const shown = await waitFor(async () => {
        const run = await adminScript(args, awsEnvironment);
        return run.code === 0 && run;
      }, 'the event read from the deployed table');
      expect(shown.stdout).toMatch(/^tenant +public$/m);
      expect(shown.stdout).toMatch(new RegExp(`^due +${new Date(dueAt).toISOString()}$`, 'm'));
    } finally {
      client.destroy();
      await target.stop();
      await teardown();
    }
  });
});
