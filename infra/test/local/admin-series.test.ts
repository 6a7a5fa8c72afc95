import { describe, expect, it } from 'vitest';
import { eventIdFor, PUBLIC_TENANT_ID, seriesId } from '@adhoc-scheduler/shared';
import { latenessText } from '../../src/admin/series-view.js';
import { admin } from './admin-run.js';
import {
  FAST_TIMINGS,
  request,
  SchedulerClient,
  seriesDueSoon,
  sharedEmulators,
  startServiceWithFiles,
  TopicConsumer,
  waitFor,
} from './kit.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const emulators = sharedEmulators();

/** The local service with its files, a target, and a client of the shared input topic. */
async function setup() {
  const service = await startServiceWithFiles(emulators, { env: FAST_TIMINGS });
  const { scheduler, tenantsFile, outputsFile } = service;
  const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'series-target');
  const client = new SchedulerClient(scheduler);
  return {
    target,
    client,
    where: ['--outputs', outputsFile, '--tenants', tenantsFile],
    /** The series id of the shared topic's client id, as ingest derives it. */
    idOf: (clientId: string) => seriesId(eventIdFor(PUBLIC_TENANT_ID, 'tests', clientId, '')),
    async teardown() {
      client.destroy();
      await target.stop();
      await service.stop();
    },
  };
}

/** A command's --json output, parsed, once it succeeds (a wrong command line fails at once). */
async function json<T>(args: readonly string[], until: (parsed: T) => boolean, description: string): Promise<T> {
  return waitFor(async () => {
    const run = await admin(...args, '--json');
    if (run.code === 2) throw new Error(`wrong command line: ${run.stderr}`);
    const parsed = run.code === 0 ? (JSON.parse(run.stdout) as T) : undefined;
    return parsed !== undefined && until(parsed) && parsed;
  }, description);
}

interface ListedPage {
  series: { id: string; state: string; schedule: string; timezone: string; next: { occurrence: number; at: string; utc: string } | null }[];
  next: string | null;
}

describe.concurrent('scripts/admin series list and series show', () => {
  it("lists a tenant's series a page at a time by next due time, past its stored events, with the next occurrence in the zone and in UTC", async () => {
    const { target, client, where, idOf, teardown } = await setup();
    try {
      const now = Date.now();
      const start = (offsetMs: number) => new Date(now + offsetMs).toISOString();
      const { date: _date, ...content } = request(target.topicArn, 0, 'report');
      await client.publish({ ...content, id: 'daily', schedule: 'rate(1 day)', start: start(3 * DAY) });
      await client.publish({ ...content, id: 'hourly', schedule: 'rate(1 hour)', start: start(DAY) });
      await client.publish({
        ...content,
        id: 'berlin',
        schedule: 'cron(0 9 * * ? *)',
        timezone: 'Europe/Berlin',
        start: start(2 * DAY),
        labels: ['reports'],
      });
      // A stored one-off event among them in the index: read past, not listed.
      await client.publish(request(target.topicArn, now + 1.5 * DAY, 'one-off', { labels: ['reports'] }));
      const list = ['series', 'list', '--tenant', PUBLIC_TENANT_ID, ...where];

      const all = await json<ListedPage>([...list, '--limit', '10'], (page) => page.series.length === 3, 'the three series listed');
      expect(all.series.map(({ id }) => id)).toEqual([idOf('hourly'), idOf('berlin'), idOf('daily')]);
      expect(all.next).toBeNull();
      const berlin = all.series[1];
      expect(berlin).toMatchObject({ state: 'active', schedule: 'cron(0 9 * * ? *)', timezone: 'Europe/Berlin' });
      // 09:00 in Berlin, winter or summer time; the same instant in UTC.
      expect(berlin?.next?.at).toMatch(/T09:00:00\.000\+0[12]:00$/);
      expect(Date.parse(berlin?.next?.at ?? '')).toBe(Date.parse(berlin?.next?.utc ?? ''));

      // Two pages of two: the second from the printed token, the first's order kept.
      const first = await json<ListedPage>([...list, '--limit', '2'], () => true, 'the first page');
      expect(first.series.map(({ id }) => id)).toEqual([idOf('hourly'), idOf('berlin')]);
      expect(first.next).not.toBeNull();
      const second = await json<ListedPage>([...list, '--limit', '2', '--after', first.next ?? ''], () => true, 'the second page');
      expect(second.series.map(({ id }) => id)).toEqual([idOf('daily')]);

      // By label: its label partitions, the series with it (not the event with it).
      const labelled = await json<ListedPage>([...list, '--label', 'reports'], () => true, 'the labelled series');
      expect(labelled.series.map(({ id }) => id)).toEqual([idOf('berlin')]);

      const text = await admin(...list);
      expect(text.code).toBe(0);
      const [header, ...rows] = text.stdout.split('\n');
      expect(header).toMatch(/^SERIES ID +STATE +SCHEDULE +TIMEZONE +NEXT \(ZONE\) +NEXT \(UTC\) +CLIENT ID +LABELS$/);
      expect(rows[1]).toMatch(
        new RegExp(
          `^${idOf('berlin')} +active +cron\\(0 9 \\* \\* \\? \\*\\) +Europe/Berlin +\\S+T09:00:00.000\\+0[12]:00 +\\S+Z +berlin +reports$`,
        ),
      );
      expect(await admin(...list, '--label', 'none')).toMatchObject({
        code: 0,
        stdout: `no active series labelled none of tenant ${PUBLIC_TENANT_ID}`,
      });
      expect(await admin(...list, '--after', 'not-a-token')).toMatchObject({ code: 2 });
      expect((await admin('series', 'list', '--tenant', 'nobody', ...where)).code).toBe(1);
    } finally {
      await teardown();
    }
  });

  it('shows the last occurrences of a series: due time in its zone and in UTC, state, when emitted and how late', async () => {
    const { target, client, where, idOf, teardown } = await setup();
    try {
      await client.publish({ ...seriesDueSoon(target.topicArn, 4000), id: 'minutely', timezone: 'America/New_York' });
      const show = ['series', 'show', idOf('minutely'), '--tenant', PUBLIC_TENANT_ID, ...where];
      interface Shown {
        last: {
          occurrence: number;
          at: string;
          utc: string;
          eventId: string;
          state: string | null;
          emittedAt?: string;
          latenessMs?: number;
        }[];
        next: { occurrence: number }[];
      }
      const shown = await json<Shown>(show, (series) => series.last[0]?.state === 'emitted', 'its first occurrence emitted');
      const [last] = shown.last;
      expect(last).toMatchObject({ occurrence: 1, state: 'emitted' });
      expect(last?.at).toMatch(/-0[45]:00$/);
      expect(Date.parse(last?.at ?? '')).toBe(Date.parse(last?.utc ?? ''));
      // Never early; its lateness from the due time to the publish's answer.
      expect(last?.latenessMs).toBe(Date.parse(last?.emittedAt ?? '') - Date.parse(last?.utc ?? ''));
      expect(last?.latenessMs).toBeGreaterThanOrEqual(0);
      expect(shown.next[0]?.occurrence).toBe(2);
      // The event it became is the occurrence's own.
      expect(JSON.parse((await admin('event', 'show', last?.eventId ?? '', '--json', ...where)).stdout)).toMatchObject({
        state: 'emitted',
      });

      const text = await admin(...show);
      expect(text.code).toBe(0);
      const line = text.stdout.split('\n').find((each) => each.startsWith('last #1 '));
      expect(line?.replace(/^last #1 +/, '')).toBe(
        `${last?.at}  ${last?.utc}  emitted at ${last?.emittedAt}, late by ${latenessText(last?.latenessMs ?? Number.NaN)}`,
      );
    } finally {
      await teardown();
    }
  });
});
