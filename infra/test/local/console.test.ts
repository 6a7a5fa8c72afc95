import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DynamoDbQuotaCounters,
  EVENT_STATE,
  encodeLoadingChunk,
  labelEntries,
  newEventItems,
  shardOf,
  type EventState,
} from '@adhoc-scheduler/shared';
import { runAdmin } from '../../src/admin/cli.js';
import { AdminConsoleBackend } from '../../src/console/admin-backend.js';
import { startConsole, type ConsoleServer } from '../../src/console/server.js';
import { LOCAL_ACCOUNT, LOCAL_REGION, type LocalSchedulerOptions } from '../../src/local/runtime.js';
import {
  FAST_TIMINGS,
  request,
  SchedulerClient,
  seriesDueSoon,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';
import { outputsOf, spawnService } from './service-process.js';

/** Debian's Chromium (scripts/bootstrap.sh installs it): Playwright's own browser builds are not used. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const TENANT_ACCOUNT = '111111111111';
const MINUTE = 60_000;

const emulators = sharedEmulators();
let browser: Browser;
beforeAll(async () => {
  // Root (as in CI) needs --no-sandbox; the browser loads only the console's pages.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

/** Saves a screenshot for docs/operators/console.md when CONSOLE_SCREENSHOTS is set (a run that updates them). */
async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS) await page.screenshot({ path: join(REPO_ROOT, 'docs/images', `console-${name}.png`) });
}

interface Seeded {
  readonly state?: EventState;
  readonly labels?: readonly string[];
  readonly dueAt: number;
  readonly emittedAt?: number;
}

/** The local service with tenant acme registered, and the console over it, in a browser page that records every request it makes. */
async function setup(
  options: Pick<LocalSchedulerOptions, 'instrumentClients' | 'visibilityTimeoutSeconds'> = {},
  env: Readonly<Record<string, string>> = {},
) {
  const service = await startServiceWithFiles(emulators, { ...options, env: { ...FAST_TIMINGS, ...env } });
  const { scheduler, tenantsFile, outputsFile, dir } = service;
  let acmeTopicArn = '';
  const added = await runAdmin(
    [
      'tenant',
      'add',
      'acme',
      '--account',
      TENANT_ACCOUNT,
      '--target-account',
      LOCAL_ACCOUNT,
      '--tenants',
      tenantsFile,
      '--outputs',
      outputsFile,
    ],
    { out: (text) => (acmeTopicArn = text), err: () => {} },
  );
  expect(added).toBe(0);
  const backend = new AdminConsoleBackend({ kind: 'local', outputs: outputsFile }, { tenantsFile });
  const server: ConsoleServer = await startConsole({ backend, port: 0 });
  const context = await browser.newContext({ viewport: { width: 1000, height: 640 } });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (sent) => requests.push(sent.url()));
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'console-target');
  const acme = new SchedulerClient(scheduler, acmeTopicArn);
  let seeded = 0;
  return {
    scheduler,
    dir,
    outputsFile,
    backend,
    server,
    page,
    requests,
    target,
    acme,
    /**
     * Writes an event of acme's record, its payload's item and its label entries as the store writes them, in a state
     * of the test's choosing (ended states included, which no request can make directly).
     */
    async seed(event: Seeded): Promise<string> {
      const id = `c-${uniqueName('seeded')}-${seeded++}`;
      const shard = shardOf(id, scheduler.config);
      const expiresAt = Math.floor(event.dueAt / 1000) + 86_400;
      const { record, payloadItem } = newEventItems(
        {
          event: {
            id,
            tenant: 'acme',
            user: 'tests',
            target: target.topicArn,
            payload: 'seeded',
            dueAt: event.dueAt,
            version: 1,
            labels: event.labels,
          },
          clientId: undefined,
          inputMessageId: `seed-${id}`,
          requestHash: 'seeded',
          placement: { state: 'scheduled', shard },
          queuedBy: undefined,
          createdBy: id,
          now: Date.now(),
          expiresAt,
        },
        // Stored, not placed in the delay queue: the setting does not change what is written.
        { indexQueuedEvents: false },
      );
      const state = event.state ?? EVENT_STATE.scheduled;
      const items = [
        { ...record, state, ...(event.emittedAt === undefined ? {} : { emittedAt: event.emittedAt, queuedAt: event.dueAt - 1000 }) },
        ...(payloadItem === undefined ? [] : [payloadItem]),
        ...labelEntries({ id, tenant: 'acme', labels: event.labels, dueAt: event.dueAt, expiresAt }, shard),
      ];
      for (const Item of items) await scheduler.clients.dynamodb.send(new PutCommand({ TableName: scheduler.outputs.tableName, Item }));
      return id;
    },
    async stateOf(id: string): Promise<unknown> {
      const { Item } = await scheduler.clients.dynamodb.send(new GetCommand({ TableName: scheduler.outputs.tableName, Key: { id } }));
      return Item?.state;
    },
    /** Every request the page made went to the console. */
    onlyConsoleRequests(): void {
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.filter((url) => !url.startsWith(`${server.url}/`))).toEqual([]);
    },
    async teardown() {
      await context.close();
      await server.close();
      await target.stop();
      acme.destroy();
      await service.stop();
    },
  };
}

describe('the console in the browser', () => {
  it('shows the events labelled L at consoleUrl/events?tenant=acme&label=L, loading nothing from elsewhere', async () => {
    const { server, page, seed, onlyConsoleRequests, teardown } = await setup();
    try {
      const dueAt = Date.now() + 30 * MINUTE;
      const labelled = await seed({ dueAt, labels: ['L', 'order-7'] });
      const other = await seed({ dueAt: dueAt + MINUTE, labels: ['M'] });
      const unlabelled = await seed({ dueAt: dueAt + 2 * MINUTE });

      const response = await page.goto(`${server.url}/events?tenant=acme&label=L`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
      const table = page.getByRole('table', { name: 'Events of acme, by due time' });
      await expect.poll(() => table.getByRole('link', { name: labelled }).count()).toBe(1);
      expect(await table.getByRole('link').allTextContents()).toEqual([labelled]);
      expect(await table.getByRole('row').nth(1).textContent()).toContain('L, order-7');
      expect(await page.content()).not.toContain(other);
      expect(await page.content()).not.toContain(unlabelled);
      // The filters are kept in the form, so the bookmark and the page agree.
      expect(await page.getByLabel('Label').inputValue()).toBe('L');
      expect(await page.getByLabel('State').inputValue()).toBe('open');
      await screenshot(page, 'events');

      // The state filter, from the form: a scheduled event is open, not emitted.
      await page.getByLabel('State').selectOption('emitted');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/state=emitted/);
      expect(new URL(page.url()).searchParams.get('label')).toBe('L');
      expect(await page.getByRole('status').textContent()).toBe('No events match.');
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('follows an event scheduled through SNS: listed, shown step by step, cancelled with the keyboard after a confirmation', async () => {
    const { server, page, acme, target, onlyConsoleRequests, teardown } = await setup();
    try {
      const dueAt = Date.now() + 10 * MINUTE;
      await acme.publish(request(target.topicArn, dueAt, 'to cancel', { id: 'order-7' }));
      const link = page.getByRole('link', { name: /^c-/ });
      await waitFor(async () => {
        await page.goto(`${server.url}/events?tenant=acme`);
        return (await link.count()) === 1;
      }, 'the event listed');
      const id = (await link.textContent()) ?? '';
      await link.click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Event ${id}`);
      expect(await page.locator('.steps').textContent()).toMatch(/^created \S+ by ingest/);
      await screenshot(page, 'event');

      // Keyboard only: the button is reached and pressed, the confirmation takes the focus.
      await page.getByRole('button', { name: 'Cancel this event…' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/actions\/cancel$/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Cancel event ${id}?`);
      const confirm = page.getByRole('button', { name: 'Yes, cancel it' });
      await expect.poll(() => confirm.evaluate((button) => button.matches(':focus'))).toBe(true);
      await screenshot(page, 'confirm');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe(`Event ${id} cancelled.`);

      await page.getByRole('link', { name: 'Back' }).click();
      await page.waitForURL(`${server.url}/events/${id}`);
      expect(await page.locator('.fields').textContent()).toContain('cancelled');
      expect(await page.locator('.steps').textContent()).toMatch(/created.*cancelled/s);
      // An ended event offers no changes.
      expect(await page.getByRole('button', { name: 'Cancel this event…' }).count()).toBe(0);
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it("lists a tenant's series from its events and shows one: next occurrences in its zone and in UTC, the last ones with their lateness", async () => {
    const { server, page, acme, target, onlyConsoleRequests, teardown } = await setup();
    try {
      await acme.publish({ ...seriesDueSoon(target.topicArn, 4000), id: 'minutely', timezone: 'Asia/Kolkata' });
      const { date: _date, ...content } = request(target.topicArn, 0, 'daily report');
      const start = new Date(Date.now() + 2 * 24 * 60 * MINUTE).toISOString();
      await acme.publish({ ...content, id: 'daily', schedule: 'cron(0 9 * * ? *)', timezone: 'Europe/Berlin', start });

      await page.goto(`${server.url}/events?tenant=acme`);
      await page.getByRole('link', { name: 'Recurring series of acme' }).click();
      await page.waitForURL(/\/series\?tenant=acme$/);
      const table = page.getByRole('table', { name: 'Series of acme, by next due time' });
      await waitFor(async () => {
        await page.reload();
        return (await table.getByRole('link').count()) === 2;
      }, 'both series listed');
      // The one due within the minute first.
      const [minutely, daily] = await table.getByRole('link').allTextContents();
      const dailyRow = table.getByRole('row').nth(2);
      expect((await dailyRow.getByRole('cell').allTextContents()).slice(0, 4)).toEqual([
        daily,
        'active',
        'cron(0 9 * * ? *)',
        'Europe/Berlin',
      ]);
      // Its next occurrence: 09:00 in Berlin, winter or summer time, and the same instant in UTC.
      const [inBerlin, inUtc] = await dailyRow.locator('time').allTextContents();
      expect(inBerlin).toMatch(/T09:00:00\.000\+0[12]:00$/);
      expect(inUtc).toMatch(/Z$/);
      expect(Date.parse(inUtc ?? '')).toBe(Date.parse(inBerlin ?? ''));
      await screenshot(page, 'series');

      await table.getByRole('link', { name: minutely }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Series ${minutely}`);
      const last = page.getByRole('table', { name: /^Its last occurrences/ });
      await waitFor(async () => {
        await page.reload();
        // Before its due time the page says none has come due: no table yet.
        return (await last.count()) === 1 && ((await last.getByRole('row').nth(1).textContent()) ?? '').includes('emitted at');
      }, 'its first occurrence emitted, shown');
      const [number, inZone, utc, eventId, outcome] = await last.getByRole('row').nth(1).locator('th, td').allTextContents();
      expect(number).toBe('1');
      expect(inZone).toMatch(/\+05:30$/);
      expect(Date.parse(inZone ?? '')).toBe(Date.parse(utc ?? ''));
      expect(outcome).toMatch(/^emitted at \S+Z, late by \d/);
      const next = page.getByRole('table', { name: 'Its next occurrences, in its zone and in UTC' });
      expect(await next.getByRole('row').nth(1).locator('th').textContent()).toBe('2');
      await last.scrollIntoViewIfNeeded();
      await screenshot(page, 'series-detail');

      // The occurrence's event, and from it back to its series.
      await last.getByRole('link', { name: eventId ?? '' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Event ${eventId}`);
      await page.getByRole('link', { name: minutely }).click();
      await page.waitForURL(`${server.url}/series/${minutely}`);
      // A token no page printed, and a series that is not there: said as such.
      expect((await page.goto(`${server.url}/series?tenant=acme&after=not-a-token`))?.status()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toContain('is not a page token');
      expect((await page.goto(`${server.url}/series/s-m-unknown`))?.status()).toBe(404);
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('reschedules an event after a confirmation, and shows its new version', async () => {
    const { server, page, seed, teardown } = await setup();
    try {
      const id = await seed({ dueAt: Date.now() + 20 * MINUTE });
      const moved = new Date(Date.now() + 40 * MINUTE);
      moved.setUTCMilliseconds(0);
      await page.goto(`${server.url}/events/${id}`);
      await page.getByLabel('New due time').fill(moved.toISOString());
      await page.getByRole('button', { name: 'Reschedule…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Move event ${id} to ${moved.toISOString()}?`);
      await page.getByRole('button', { name: 'Yes, reschedule it' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent(), { timeout: 20_000 })
        .toBe(`Event ${id} rescheduled to ${moved.toISOString()}.`);
      await page.goto(`${server.url}/events/${id}`);
      const fields = (await page.locator('.fields').textContent()) ?? '';
      expect(fields).toContain(moved.toISOString());
      expect(fields).toMatch(/Version\s*2/);
      expect(await page.locator('.steps').textContent()).toContain('rescheduled');
    } finally {
      await teardown();
    }
  });

  it("shows the tenants (the first view) and a tenant's overview: due in the next hour, emitted and failed in the last, lateness, drawn", async () => {
    const { server, backend, page, acme, target, seed, onlyConsoleRequests, teardown } = await setup();
    try {
      const now = Date.now();
      await seed({ dueAt: now + 7 * MINUTE });
      await seed({ dueAt: now + 8 * MINUTE });
      await seed({ dueAt: now + 50 * MINUTE });
      // A known load on the near path: 5 delivered, 2 failed (their target does not exist).
      const gone = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('no-such-topic')}`;
      const dueAt = Date.now() + 3_000;
      await acme.publishBatch([
        ...Array.from({ length: 5 }, (_, index) => request(target.topicArn, dueAt, `delivered-${index}`)),
        ...Array.from({ length: 2 }, (_, index) => request(gone, dueAt, `failed-${index}`)),
      ]);
      await waitFor(() => target.deliveries.length === 5, 'the five deliveries', 30_000);
      await waitFor(
        async () => {
          const { emittedLastHour, failedLastHour } = await backend.overview('acme', Date.now());
          return emittedLastHour === 5 && failedLastHour === 2;
        },
        'the ends counted',
        30_000,
      );

      const started = Date.now();
      await page.goto(server.url);
      const loadMs = Date.now() - started;
      const tenants = page.getByRole('table', { name: /Registered tenants/ });
      expect(await tenants.getByRole('rowheader').allTextContents()).toEqual(['public', 'acme']);
      const acmeRow = tenants.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'acme' }) });
      // Counted by the quota counter: the seeded records were written around it, the load's events have ended.
      expect(await acmeRow.textContent()).toContain('0 of 1,000,000');
      expect(await acmeRow.locator('td').nth(2).textContent()).toBe('1,000');
      expect(await acmeRow.locator('td').nth(3).textContent()).toBe('no');
      expect(loadMs).toBeLessThan(3000);
      await screenshot(page, 'tenants');

      await acmeRow.getByRole('link', { name: 'acme' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview of acme');
      const figures = (await page.locator('.figures').textContent()) ?? '';
      expect(figures).toMatch(/Emitted in the last hour\s*5/);
      expect(figures).toMatch(/Failed in the last hour\s*2/);
      // Near-path events are indexed (the default): no note that the listing leaves any out.
      expect(await page.getByText('SCHEDULER_INDEX_QUEUED_EVENTS').count()).toBe(0);
      const timeline = page.getByRole('table', { name: /Open events by five-minute slot/ });
      const counts = await timeline.locator('tbody td').allTextContents();
      expect(counts).toHaveLength(12);
      expect(counts.reduce((sum, count) => sum + Number(count), 0)).toBe(3);
      expect(counts[1]).toBe('2');
      const lateness = page.getByRole('table', { name: /by how long after their due time/ });
      const bins = (await lateness.locator('tbody td').allTextContents()).map(Number);
      expect(bins.reduce((sum, count) => sum + count, 0)).toBe(5);
      // The pictures: the same counts, drawn as inline SVG, one bar a slot or bin, each titled with its count.
      const drawn = async (name: RegExp) => {
        const chart = page.getByRole('img', { name });
        expect(await chart.evaluate((element) => element.tagName)).toBe('svg');
        return (await chart.locator('rect title').allTextContents()).map((title) => Number(title.slice(title.lastIndexOf(': ') + 2)));
      };
      expect(await drawn(/^Events emitted in the last hour, by how long after their due time their publish answered: 5$/)).toEqual(bins);
      expect(await drawn(/^Open events due in the next hour, by five-minute slot: 3$/)).toEqual(counts.map(Number));
      await screenshot(page, 'overview');
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('finds tenants by id prefix and by account, and pages through them with Next page, each with its counter', async () => {
    const { scheduler, page, requests, dir, outputsFile, teardown } = await setup();
    // A registry of its own, beside the service's (whose loader would read each tenant's shards): 250 tenants, each with an account of its own.
    const manyFile = join(dir, 'many-tenants.json');
    const accountOf = (index: number) => String(100_000_000_000 + index);
    const tenants = Array.from({ length: 250 }, (_, index) => ({ id: `tenant-${index}`, accounts: [accountOf(index)] }));
    await writeFile(manyFile, JSON.stringify({ tenants }));
    const many = await startConsole({
      backend: new AdminConsoleBackend({ kind: 'local', outputs: outputsFile }, { tenantsFile: manyFile }),
      port: 0,
    });
    const quotas = { maxOpenEvents: 1_000_000, maxIngestPerSecond: 1000, maxControlPerSecond: 1000 };
    await new DynamoDbQuotaCounters(scheduler.clients.dynamodb, scheduler.outputs.tableName).reserve('tenant-150', quotas, Date.now(), 3);
    const table = page.getByRole('table', { name: /Registered tenants/ });
    const shown = () => table.getByRole('rowheader').allTextContents();
    try {
      await page.goto(many.url);
      const first = await shown();
      expect(first).toHaveLength(50);
      expect(first.slice(0, 4)).toEqual(['public', 'tenant-0', 'tenant-1', 'tenant-10']);

      // tenant-1, tenant-10 to 19 and tenant-100 to 199: 111 tenants, three pages.
      await page.getByLabel('Id starts with').fill('tenant-1');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/prefix=tenant-1/);
      const pages = [await shown()];
      for (let next = page.getByRole('link', { name: 'Next page' }); (await next.count()) === 1; ) {
        await next.click();
        await page.waitForURL(/after=/);
        pages.push(await shown());
      }
      expect(pages.map((listed) => listed.length)).toEqual([50, 50, 11]);
      expect(pages.flat()).toEqual([
        'tenant-1',
        ...tenants
          .map(({ id }) => id)
          .filter((id) => id.startsWith('tenant-1') && id !== 'tenant-1')
          .sort(),
      ]);
      // The search stays in the form as it pages; its counter read for the tenant shown.
      expect(await page.getByLabel('Id starts with').inputValue()).toBe('tenant-1');
      const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'tenant-150', exact: true }) });
      await page.getByRole('link', { name: 'First page' }).click();
      await page.getByRole('link', { name: 'Next page' }).click();
      expect(await row.locator('td').first().textContent()).toBe('3 of 1,000,000 (0.00 %)');

      await page.getByLabel('Id starts with').fill('');
      await page.getByLabel('Account').fill(accountOf(42));
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/account=100000000042/);
      expect(await shown()).toEqual(['tenant-42']);
      await page.getByLabel('Account').fill('999999999999');
      await page.getByRole('button', { name: 'Search' }).click();
      expect(await page.getByRole('status').textContent()).toBe('No tenant matches.');
      expect(requests.filter((url) => !url.startsWith(`${many.url}/`))).toEqual([]);
    } finally {
      await many.close();
      await teardown();
    }
  });

  it("shows the tenant's requests refused at ingest on its overview, newest first, with their reason and message", async () => {
    const { server, page, acme, target, onlyConsoleRequests, teardown } = await setup();
    try {
      await page.goto(`${server.url}/overview?tenant=acme`);
      expect(await page.getByRole('region', { name: 'Refused at ingest' }).textContent()).toContain('No request of acme refused lately.');

      await acme.publish(request(target.topicArn, Date.now() + MINUTE, 'refused', { id: 'order-refused', date: 'next tuesday' }));
      await acme.publish(request(target.topicArn, Date.now() + MINUTE, 'refused', { id: 'order-refused-2', date: 'someday' }));
      await expect
        .poll(
          async () => {
            await page.goto(`${server.url}/overview?tenant=acme`);
            return page
              .getByRole('table', { name: /refused at ingest/ })
              .locator('tbody tr')
              .count();
          },
          { timeout: 20_000 },
        )
        .toBe(2);
      const rows = page.getByRole('table', { name: /refused at ingest/ }).locator('tbody tr');
      const cells = async (row: number) => (await rows.nth(row).locator('td').allTextContents()).slice(1);
      const byClientId = new Map([await cells(0), await cells(1)].map((row) => [row[0], row]));
      expect(byClientId.get('order-refused')).toEqual([
        'order-refused',
        'tests',
        'schedule',
        'INVALID_DATE',
        '"next tuesday" is not an ISO-8601 date-time',
      ]);
      expect(byClientId.get('order-refused-2')?.slice(3, 4)).toEqual(['INVALID_DATE']);
      const times = await rows.locator('time').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('datetime') ?? ''));
      expect([...times].sort().reverse()).toEqual(times);
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('in the lean setting (SCHEDULER_INDEX_QUEUED_EVENTS=false) still lists a failed near-path event, counts it, and says what the listing leaves out', async () => {
    const { server, page, acme, target, onlyConsoleRequests, teardown } = await setup({}, { SCHEDULER_INDEX_QUEUED_EVENTS: 'false' });
    try {
      const gone = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${uniqueName('no-such-topic')}`;
      const dueAt = Date.now() + 3_000;
      await acme.publishBatch([request(gone, dueAt, 'lean-failed'), request(target.topicArn, dueAt, 'lean-delivered')]);
      await waitFor(() => target.deliveries.length === 1, 'the delivery', 30_000);
      const table = page.getByRole('table', { name: 'Events of acme, by due time' });
      await waitFor(
        async () => {
          await page.goto(`${server.url}/events?tenant=acme&state=failed`);
          return (await table.getByRole('link').count()) === 1;
        },
        'the failed event listed',
        30_000,
      );
      expect(await table.locator('tbody td').nth(2).textContent()).toBe('failed');
      expect(await page.getByText('SCHEDULER_INDEX_QUEUED_EVENTS=false').count()).toBe(1);
      // The delivered one is not listed (the lean setting's saving), but both are counted.
      await page.goto(`${server.url}/events?tenant=acme&state=emitted`);
      expect(await page.getByRole('status').textContent()).toBe('No events match.');
      await waitFor(
        async () => {
          await page.goto(`${server.url}/overview?tenant=acme`);
          const figures = (await page.locator('.figures').textContent()) ?? '';
          return /Emitted in the last hour\s*1/.test(figures) && /Failed in the last hour\s*1/.test(figures);
        },
        'both ends counted on the overview',
        30_000,
      );
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('cancels every open event of a label after a confirmation, and shows the counts of the job', async () => {
    const { server, page, acme, target, stateOf, onlyConsoleRequests, teardown } = await setup();
    try {
      const dueAt = Date.now() + 30 * MINUTE;
      const labelled = [['L'], ['L', 'order-7'], ['M']];
      for (const [index, labels] of labelled.entries())
        await acme.publish(request(target.topicArn, dueAt + index * MINUTE, `by-label-${index}`, { labels }));
      const table = page.getByRole('table', { name: 'Events of acme, by due time' });
      await waitFor(async () => {
        await page.goto(`${server.url}/events?tenant=acme&label=L`);
        return (await table.getByRole('link').count()) === 2;
      }, 'the events labelled L listed');
      const ids = await table.getByRole('link').allTextContents();

      await page.getByRole('button', { name: 'Cancel every open event of acme labelled L…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Cancel every open event of acme labelled L?');
      await page.getByRole('button', { name: 'Yes, cancel them' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent(), { timeout: 30_000 })
        .toMatch(
          /^The open events of acme labelled L: cancelled 2; refused: 0 already ended, 0 within the change cutoff \(job b-[0-9a-f-]+\)\.$/,
        );
      for (const id of ids) expect(await stateOf(id)).toBe(EVENT_STATE.cancelled);

      // The event of another label is left open.
      await page.getByRole('link', { name: 'Back' }).click();
      expect(await page.getByRole('status').textContent()).toBe('No events match.');
      await page.goto(`${server.url}/events?tenant=acme&label=M`);
      expect(await table.getByRole('link').count()).toBe(1);
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('pauses a tenant with a note and resumes it: shown on the tenants view and the overview, its event held meanwhile and sent at the resume', async () => {
    const { server, page, acme, target, onlyConsoleRequests, teardown } = await setup();
    const row = (tenant: string) =>
      page
        .getByRole('table', { name: /Registered tenants/ })
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: tenant }) });
    const paused = (tenant: string) => row(tenant).locator('td').nth(3).textContent();
    try {
      await page.goto(server.url);
      expect(await paused('acme')).toBe('no');
      await row('acme').getByLabel('Note').fill('maintenance');
      await row('acme').getByRole('button', { name: 'Pause acme…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Pause tenant acme? Its events that come due are held until it is resumed.',
      );
      await page.getByRole('button', { name: 'Yes, pause it' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent())
        .toBe('Tenant acme paused: its events are held as they come due (none is published) until it is resumed.');
      await page.getByRole('link', { name: 'Back' }).click();
      await page.waitForURL(`${server.url}/`);
      expect(await paused('acme')).toMatch(/^by its operator since \d{4}-\d\d-\d\dT[\d:.]+Z \(operator .+\): maintenance$/);
      expect(await paused('public')).toBe('no');
      // A paused tenant offers a resume, not another pause.
      expect(await row('acme').getByRole('button', { name: 'Pause acme…' }).count()).toBe(0);
      await screenshot(page, 'paused');
      await row('acme').getByRole('link', { name: 'acme' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview of acme');
      expect(await page.locator('.figures').textContent()).toMatch(/Paused\s*by its operator since \S+ \(operator .+\): maintenance/);

      // An event that comes due meanwhile is held, not published.
      const payload = uniqueName('held');
      await acme.publish(request(target.topicArn, Date.now() + 1000, payload, { labels: ['held-one'] }));
      const link = page.getByRole('table', { name: 'Events of acme, by due time' }).getByRole('link');
      await waitFor(async () => {
        await page.goto(`${server.url}/events?tenant=acme&label=held-one&state=held`);
        return (await link.count()) === 1;
      }, 'the event held');
      const id = (await link.textContent()) ?? '';
      await link.click();
      expect(await page.locator('.steps').textContent()).toMatch(
        /^created .*queued \S+ by ingest.*held \S+ by the emitter: its tenant was paused/s,
      );
      expect(target.withPayload(payload)).toEqual([]);

      await page.goto(server.url);
      await row('acme').getByRole('button', { name: 'Resume acme…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Resume tenant acme? Its held events are sent at once, late.',
      );
      await page.getByRole('button', { name: 'Yes, resume it' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent())
        .toMatch(/^Tenant acme resumed \(paused by operator .+ since \S+: maintenance\); its held events are sent now, oldest first/);
      await page.goto(server.url);
      expect(await paused('acme')).toBe('no');
      await waitFor(() => target.withPayload(payload).length > 0, 'the held event sent at the resume');
      expect(target.withPayload(payload)).toHaveLength(1);
      await waitFor(async () => {
        await page.goto(`${server.url}/events/${id}`);
        return /held.*emitted/s.test((await page.locator('.steps').textContent()) ?? '');
      }, 'the emission on the event page');
      onlyConsoleRequests();
    } finally {
      await teardown();
    }
  });

  it('lists an input that failed on every delivery with its last error, redrives it once fixed, and purges another dead letter', async () => {
    const payload = uniqueName('refused-by-the-table');
    let tableRefuses = true;
    const { scheduler, server, page, target, onlyConsoleRequests, teardown } = await setup({
      // A failed batch comes back after a second: the deliveries before the dead-letter queue take seconds.
      visibilityTimeoutSeconds: 1,
      instrumentClients: (clients) =>
        clients.dynamodb.middlewareStack.add(
          (next) => async (args) => {
            if (tableRefuses && JSON.stringify(args.input).includes(payload)) throw new Error('the table refuses this event');
            return next(args);
          },
          { step: 'build', name: 'refuseOneEvent' },
        ),
    });
    const client = new SchedulerClient(scheduler);
    const table = page.getByRole('table', { name: 'Messages set aside after failing too often' });
    const cells = () => table.getByRole('row').nth(1).locator('td').allTextContents();
    try {
      // Its record carries the user (a near-path record has no payload): the fault refuses that record's writes.
      const eventId = `m-${await client.publish(request(target.topicArn, Date.now(), payload, { user: payload }))}`;
      await waitFor(
        async () => {
          await page.goto(`${server.url}/dead-letters?queue=public-ingest&event=${eventId}`);
          return (await table.getByRole('row').count()) === 2;
        },
        'the input in the dead-letter queue',
        90_000,
      );
      const [messageId, queue, receives, , tenant, event, , lastError] = await cells();
      expect([queue, tenant, event]).toEqual(['public-ingest', 'public', eventId]);
      expect(Number(receives)).toBeGreaterThan(10);
      expect(lastError).toMatch(/^ingest: TransientError: /);
      await screenshot(page, 'dead-letters');

      // Fixed: the redriven input is ingested, and its event delivered once.
      tableRefuses = false;
      await page.getByRole('button', { name: 'Redrive them…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        `Send the dead letters in the public-ingest dead-letter queue of event ${eventId} back to their source queues?`,
      );
      await page.getByRole('button', { name: 'Yes, redrive them' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe(`1 message redriven (${messageId} to the public-ingest queue).`);
      await waitFor(() => target.withPayload(payload).length > 0, 'the delivery of the redriven input');
      expect(target.withPayload(payload)).toHaveLength(1);

      // A loading chunk set aside, as SQS sets one aside after its last failed delivery, is purged.
      const chunked = `m-${uniqueName('chunked')}`;
      await scheduler.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: scheduler.outputs.deadLetterQueueUrl,
          MessageBody: encodeLoadingChunk({ ids: [chunked], chunkId: 'chunk-1' }),
        }),
      );
      await page.goto(`${server.url}/dead-letters?event=${chunked}`);
      const [purgedId, purgedQueue] = await cells();
      expect(purgedQueue).toBe('loading');
      await page.getByRole('button', { name: 'Purge them…' }).click();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        `Delete the dead letters in every dead-letter queue of event ${chunked}? They cannot be recovered.`,
      );
      await page.getByRole('button', { name: 'Yes, delete them' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe(`1 message purged (${purgedId}).`);
      await page.getByRole('link', { name: 'Back' }).click();
      expect(await page.getByRole('status').textContent()).toBe('No dead letters match.');
      onlyConsoleRequests();
    } finally {
      client.destroy();
      await teardown();
    }
  }, 150_000);

  it("refuses a change without the session's token, and changes nothing", async () => {
    const { server, seed, stateOf, teardown } = await setup();
    try {
      const id = await seed({ dueAt: Date.now() + 30 * MINUTE });
      const post = (body: Record<string, string>) =>
        fetch(`${server.url}/actions/cancel`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(body).toString(),
        });
      const missing = await post({ event: id, confirmed: 'yes' });
      expect(missing.status).toBe(403);
      expect(await missing.text()).toContain('a change without this console&#39;s token is refused');
      expect((await post({ event: id, confirmed: 'yes', token: 'x'.repeat(server.token.length) })).status).toBe(403);
      expect((await post({ event: id, confirmed: 'yes', token: server.token.slice(1) })).status).toBe(403);
      expect(await stateOf(id)).toBe(EVENT_STATE.scheduled);
    } finally {
      await teardown();
    }
  });

  it("refuses a change from another site's page, even one that has the token, and answers no other host name", async () => {
    const { server, page, seed, stateOf, teardown } = await setup();
    try {
      const id = await seed({ dueAt: Date.now() + 30 * MINUTE });
      // Another origin (another port of this machine) whose page posts a form to the console as soon as it loads.
      const attacker = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(
          `<form method="post" action="${server.url}/actions/cancel"><input name="event" value="${id}">` +
            `<input name="confirmed" value="yes"><input name="token" value="${server.token}"></form>` +
            '<script>document.forms[0].submit()</script>',
        );
      });
      await new Promise<void>((listening) => attacker.listen(0, '127.0.0.1', listening));
      try {
        const answer = page.waitForResponse((response) => response.url() === `${server.url}/actions/cancel`);
        await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
        expect((await answer).status()).toBe(403);
      } finally {
        attacker.close();
      }
      const crossSite = await fetch(`${server.url}/actions/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://attacker.example' },
        body: new URLSearchParams({ event: id, confirmed: 'yes', token: server.token }).toString(),
      });
      expect(crossSite.status).toBe(403);
      expect(await stateOf(id)).toBe(EVENT_STATE.scheduled);

      // A name of the attacker's that resolves to this machine (DNS rebinding) is not answered.
      // (fetch would not send another Host header: node:http does.)
      const rebound = await new Promise<number | undefined>((answered, failed) => {
        get(`${server.url}/`, { headers: { host: `attacker.example:${new URL(server.url).port}` } }, (response) => {
          response.resume();
          answered(response.statusCode);
        }).on('error', failed);
      });
      expect(rebound).toBe(421);
      // Nor may another site frame the console.
      const headers = (await fetch(`${server.url}/`)).headers;
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    } finally {
      await teardown();
    }
  });

  it('listens on the loopback address only', async () => {
    const { server, teardown } = await setup();
    try {
      const { hostname, port } = new URL(server.url);
      expect(hostname).toBe('127.0.0.1');
      expect((await fetch(`${server.url}/`)).status).toBe(200);
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
      for (const address of others) await expect(fetch(`http://${address?.address}:${port}/`)).rejects.toThrow();
    } finally {
      await teardown();
    }
  });
});

describe('scripts/start serves the console', () => {
  it('at consoleUrl in its outputs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'console-start-'));
    const service = spawnService(dir, { args: ['--in-memory'] });
    try {
      const outputs = (await outputsOf(service)) as unknown as { consoleUrl?: string };
      expect(outputs.consoleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const page = await browser.newPage();
      try {
        await page.goto(outputs.consoleUrl ?? '');
        const tenants = page.getByRole('table', { name: /Registered tenants/ });
        expect(await tenants.getByRole('rowheader').allTextContents()).toEqual(['public']);
      } finally {
        await page.close();
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
