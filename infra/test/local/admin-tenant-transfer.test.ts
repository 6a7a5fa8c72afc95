import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ListSubscriptionsByTopicCommand, ListTopicsCommand, SNSClient } from '@aws-sdk/client-sns';
import { describe, expect, it } from 'vitest';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { admin } from './admin-run.js';
import { expectNotEarly, request, SchedulerClient, sharedEmulators, startServiceWithFiles, TopicConsumer, waitFor } from './kit.js';

const emulators = sharedEmulators();

/** A running service with its files, and the tenant commands' flags for it. */
async function setup() {
  const service = await startServiceWithFiles(emulators);
  const sns = new SNSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: service.scheduler.outputs.endpoint });
  return {
    ...service,
    sns,
    files: ['--tenants', service.tenantsFile, '--outputs', service.outputsFile],
    async teardown() {
      sns.destroy();
      await service.stop();
    },
  };
}

/** The `tenant topic-ARN` lines an import prints, by tenant. */
function printedTopics(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.split('\n').map((line) => line.split(' ') as [string, string]));
}

/** Every topic on the emulator of this service whose name ends so. */
async function topicsEndingWith(sns: SNSClient, suffix: string): Promise<string[]> {
  const arns: string[] = [];
  let NextToken: string | undefined;
  do {
    const page = await sns.send(new ListTopicsCommand({ NextToken }));
    arns.push(...(page.Topics ?? []).flatMap(({ TopicArn }) => (TopicArn?.endsWith(suffix) ? [TopicArn] : [])));
    NextToken = page.NextToken;
  } while (NextToken !== undefined);
  return arns;
}

describe.concurrent('scripts/admin tenant import and tenant export', () => {
  it('adds and updates the tenants a file names, leaves the others, and their requests are delivered at once', async () => {
    const { scheduler, sns, files, dir, tenantsFile, outputsFile, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      expect((await admin('tenant', 'add', 'acme', '--account', '111111111111', ...files)).code).toBe(0);
      expect((await admin('tenant', 'add', 'hooli', '--account', '444444444444', ...files)).code).toBe(0);
      const bulk: TenantsDocument = {
        public: { maxIngestPerSecond: 50 },
        tenants: [
          { id: 'acme', accounts: ['111111111111'], maxOpenEvents: 5 },
          { id: 'globex', accounts: ['222222222222'], targetAccounts: [LOCAL_ACCOUNT] },
          { id: 'initech', accounts: ['333333333333'], targetAccounts: [LOCAL_ACCOUNT], requireUser: false },
        ],
      };
      const bulkFile = join(dir, 'bulk.json');
      await writeFile(bulkFile, JSON.stringify(bulk));

      const imported = await admin('tenant', 'import', bulkFile, ...files);
      expect(imported.code).toBe(0);
      expect(imported.stderr).toContain(
        `Imported ${bulkFile} into ${tenantsFile}: 2 added, 1 updated, 0 unchanged; the public tenant's settings updated.`,
      );
      const topics = printedTopics(imported.stdout);
      expect(Object.keys(topics)).toEqual(['acme', 'globex', 'initech']);
      // The tenant it does not name stays; the ones it names are as the file says.
      expect(JSON.parse(await readFile(tenantsFile, 'utf8'))).toEqual({
        public: { maxIngestPerSecond: 50 },
        tenants: [bulk.tenants?.[0], { id: 'hooli', accounts: ['444444444444'] }, bulk.tenants?.[1], bulk.tenants?.[2]],
      });
      expect(JSON.parse(await readFile(outputsFile, 'utf8')).tenantInputTopicArns).toEqual(
        expect.objectContaining({ acme: topics.acme, globex: topics.globex, initech: topics.initech }),
      );
      const ingestQueues = new Set<string>();
      for (const arn of Object.values(topics)) {
        const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: arn }));
        expect(Subscriptions).toHaveLength(1);
        ingestQueues.add(String(Subscriptions[0]?.Endpoint));
      }
      expect(ingestQueues.size).toBe(1);

      // The running service reads the file again: an imported tenant's first request is its own.
      const initech = new SchedulerClient(scheduler, topics.initech);
      try {
        const { user: _none, ...withoutUser } = request(target.topicArn, Date.now() + 1_500, 'from initech');
        await initech.publish(withoutUser);
        expectNotEarly(await waitFor(() => target.withPayload('from initech')[0], "the imported tenant's event delivered"));
      } finally {
        initech.destroy();
      }

      const written = await readFile(tenantsFile, 'utf8');
      const again = await admin('tenant', 'import', bulkFile, ...files);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain("0 added, 0 updated, 3 unchanged; the public tenant's settings unchanged.");
      expect(printedTopics(again.stdout)).toEqual(topics);
      expect(await readFile(tenantsFile, 'utf8')).toBe(written);

      // Any setting counts as a change, those tenant add has no flag for included.
      const acme = { ...bulk.tenants?.[0], seriesOccurrencesPerMinute: 3 };
      await writeFile(bulkFile, JSON.stringify({ tenants: [acme] }));
      expect((await admin('tenant', 'import', bulkFile, ...files)).stderr).toContain('0 added, 1 updated, 0 unchanged.');
      expect(JSON.parse(await readFile(tenantsFile, 'utf8')).tenants[0]).toEqual(acme);
      // The control quota too: imported, and exported as written.
      const stricter = { ...acme, maxControlPerSecond: 20 };
      await writeFile(bulkFile, JSON.stringify({ tenants: [stricter] }));
      expect((await admin('tenant', 'import', bulkFile, ...files)).stderr).toContain('0 added, 1 updated, 0 unchanged.');
      expect(JSON.parse((await admin('tenant', 'export', '--tenants', tenantsFile)).stdout).tenants[0]).toEqual(stricter);
    } finally {
      await target.stop();
      await teardown();
    }
  });

  it('exports a registry that an import on another service takes back whole', async () => {
    const from = await setup();
    const to = await setup();
    try {
      expect((await admin('tenant', 'add', 'acme', '--account', '111111111111', '--max-ingest-per-second', '7', ...from.files)).code).toBe(
        0,
      );
      expect((await admin('tenant', 'add', 'globex', '--account', '222222222222', '--user-optional', ...from.files)).code).toBe(0);
      const exported = await admin('tenant', 'export', '--tenants', from.tenantsFile);
      expect(exported.code).toBe(0);
      expect(JSON.parse(exported.stdout)).toEqual(JSON.parse(await readFile(from.tenantsFile, 'utf8')));
      const backup = join(to.dir, 'backup.json');
      await writeFile(backup, exported.stdout);

      const restored = await admin('tenant', 'import', backup, ...to.files);
      expect(restored.code).toBe(0);
      expect(restored.stderr).toContain('2 added, 0 updated, 0 unchanged.');
      const listed = async (files: readonly string[]) =>
        (JSON.parse((await admin('tenant', 'list', '--json', ...files)).stdout) as { tenants: Record<string, unknown>[] }).tenants.map(
          ({ inputTopicArn: _differs, ...tenant }) => tenant,
        );
      expect(await listed(to.files)).toEqual(await listed(from.files));
      expect(JSON.parse((await admin('tenant', 'export', '--tenants', join(to.dir, 'none.json'))).stdout)).toEqual({});
    } finally {
      await Promise.all([from.teardown(), to.teardown()]);
    }
  });

  it('refuses a file that is missing, invalid, or makes a registry that breaks a rule, and writes nothing', async () => {
    const { sns, files, dir, tenantsFile, scheduler, teardown } = await setup();
    try {
      expect((await admin('tenant', 'add', 'acme', '--account', '111111111111', ...files)).code).toBe(0);
      const written = await readFile(tenantsFile, 'utf8');
      const file = async (name: string, content: string) => {
        const path = join(dir, name);
        await writeFile(path, content);
        return path;
      };

      const missing = await admin('tenant', 'import', join(dir, 'missing.json'), ...files);
      expect(missing).toMatchObject({ code: 1, stdout: '' });
      expect(missing.stderr).toContain('missing.json: no such file');

      const invalid = await file('invalid.json', JSON.stringify({ tenants: [{ id: 'globex', accounts: ['12345'] }] }));
      const refusedInvalid = await admin('tenant', 'import', invalid, ...files);
      expect(refusedInvalid.code).toBe(1);
      expect(refusedInvalid.stderr).toContain(`${invalid} is not a valid tenant registry: /tenants/0/accounts/0`);

      const twice = await file(
        'twice.json',
        JSON.stringify({
          tenants: [
            { id: 'globex', accounts: ['222222222222'] },
            { id: 'globex', accounts: ['333333333333'] },
          ],
        }),
      );
      expect((await admin('tenant', 'import', twice, ...files)).stderr).toContain('"globex" is registered twice');

      // Valid alone; with the registry, globex could target acme's own topics.
      const grabbing = await file(
        'grabbing.json',
        JSON.stringify({ tenants: [{ id: 'globex', accounts: ['222222222222'], targetAccounts: ['111111111111'] }] }),
      );
      const refusedGrab = await admin('tenant', 'import', grabbing, ...files);
      expect(refusedGrab.code).toBe(1);
      expect(refusedGrab.stderr).toContain(
        `the tenants of ${grabbing} cannot be registered so: tenant "globex" lists 111111111111 in targetAccounts, but it is an account of tenant "acme"`,
      );

      expect(await readFile(tenantsFile, 'utf8')).toBe(written);
      expect(await topicsEndingWith(sns, scheduler.outputs.inputTopicArn.replace(/-input$/, '-tenant-globex'))).toEqual([]);
      expect((await admin('tenant', 'import', ...files)).code).toBe(2);
    } finally {
      await teardown();
    }
  });

  it('onboards a thousand tenants in one import, each on its own topic, and lists them a page at a time by prefix or account', async () => {
    const { sns, files, dir, scheduler, teardown } = await setup();
    try {
      const tenants = Array.from({ length: 1_000 }, (_, index) => ({
        id: `tenant-${index}`,
        accounts: [String(100_000_000_000 + index)],
      }));
      const bulkFile = join(dir, 'thousand.json');
      await writeFile(bulkFile, JSON.stringify({ tenants }));
      const imported = await admin('tenant', 'import', bulkFile, ...files);
      expect(imported.code).toBe(0);
      expect(imported.stderr).toContain('1000 added, 0 updated, 0 unchanged.');
      const topics = printedTopics(imported.stdout);
      expect(Object.keys(topics)).toEqual(tenants.map(({ id }) => id));
      const prefix = scheduler.outputs.inputTopicArn.replace(/-input$/, '');
      for (const { id } of tenants) expect(topics[id]).toBe(`${prefix}-tenant-${id}`);
      expect(await topicsEndingWith(sns, `${prefix}-tenant-tenant-999`)).toEqual([topics['tenant-999']]);

      // The listing finds them a page at a time, by id prefix or by account.
      const page = async (...args: string[]) => {
        const listed = await admin('tenant', 'list', '--json', ...args, ...files);
        expect(listed.code).toBe(0);
        const { tenants: shown, next } = JSON.parse(listed.stdout) as {
          tenants: { id: string; inputTopicArn: string }[];
          next: string | null;
        };
        return { ids: shown.map(({ id }) => id), arns: shown.map(({ inputTopicArn }) => inputTopicArn), next };
      };
      const first = await page('--prefix', 'tenant-99', '--limit', '5');
      expect(first).toMatchObject({ ids: ['tenant-99', 'tenant-990', 'tenant-991', 'tenant-992', 'tenant-993'], next: 'tenant-993' });
      expect(first.arns[0]).toBe(topics['tenant-99']);
      expect(await page('--prefix', 'tenant-99', '--limit', '5', '--after', 'tenant-993')).toMatchObject({
        ids: ['tenant-994', 'tenant-995', 'tenant-996', 'tenant-997', 'tenant-998'],
        next: 'tenant-998',
      });
      expect(await page('--prefix', 'tenant-99', '--limit', '5', '--after', 'tenant-998')).toMatchObject({
        ids: ['tenant-999'],
        next: null,
      });
      expect(await page('--account', '100000000042')).toMatchObject({ ids: ['tenant-42'], next: null });
      const whole = await page('--limit', '100');
      expect(whole.ids.slice(0, 3)).toEqual(['public', 'tenant-0', 'tenant-1']);
      expect(whole.next).toBe(whole.ids.at(-1));
      const table = await admin('tenant', 'list', '--prefix', 'tenant-99', '--limit', '5', ...files);
      expect(table.stdout.split('\n').at(-1)).toBe('next page: --after tenant-993');
      expect((await admin('tenant', 'list', '--prefix', 'nobody', ...files)).stdout).toBe('no tenant matches');
    } finally {
      await teardown();
    }
  });

  it('onboards 5,000 tenants by import and one more by tenant add, and delivers the events of 50 of them, on either path, each once, none early', async () => {
    const { files, dir, scheduler, outputsFile, teardown } = await setup();
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const tenants = Array.from({ length: 5_000 }, (_, index) => ({
        id: `t${String(index).padStart(4, '0')}`,
        accounts: [String(100_000_000_000 + index)],
        targetAccounts: [LOCAL_ACCOUNT],
      }));
      const bulkFile = join(dir, 'five-thousand.json');
      await writeFile(bulkFile, JSON.stringify({ tenants }));
      const imported = await admin('tenant', 'import', bulkFile, ...files);
      expect(imported.code).toBe(0);
      expect(imported.stderr).toContain('5000 added, 0 updated, 0 unchanged.');
      const topics = printedTopics(imported.stdout);
      const added = await admin('tenant', 'add', 'newcomer', '--account', '999999999999', '--target-account', LOCAL_ACCOUNT, ...files);
      expect(added.code).toBe(0);
      const outputs = JSON.parse(await readFile(outputsFile, 'utf8')) as { tenantInputTopicArns: Record<string, string> };
      topics.newcomer = outputs.tenantInputTopicArns.newcomer as string;

      // 50 of the 5,000 and the newcomer: half due at once (the delay queue), half past the near-path window (the loader).
      const senders = [...tenants.filter((_, index) => index % 100 === 7).map(({ id }) => id), 'newcomer'];
      const now = Date.now();
      const events = senders.map((tenant, index) => ({
        tenant,
        payload: `from ${tenant}`,
        dueAt: now + (index % 2 === 0 ? 3_000 : 12_000),
      }));
      await Promise.all(
        events.map(async ({ tenant, payload, dueAt }) => {
          const client = new SchedulerClient(scheduler, topics[tenant]);
          try {
            await client.publish(request(target.topicArn, dueAt, payload));
          } finally {
            client.destroy();
          }
        }),
      );
      await waitFor(() => events.every(({ payload }) => target.withPayload(payload).length > 0), 'every event delivered', 60_000);
      for (const { payload, dueAt } of events) {
        expect(target.withPayload(payload), payload).toHaveLength(1);
        expectNotEarly(target.withPayload(payload)[0], dueAt);
      }
    } finally {
      await target.stop();
      await teardown();
    }
  }, 120_000);
});
