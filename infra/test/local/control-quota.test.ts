import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbEventListing, EVENT_STATE, openEventsCounterId, REASON, TABLE, type TenantsDocument } from '@adhoc-scheduler/shared';
import { LOCAL_ACCOUNT, LOCAL_REGION, type LocalScheduler } from '../../src/local/runtime.js';
import {
  capturingLogger,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  waitFor,
} from './kit.js';

/**
 * A tenant's control requests (cancels, reschedules, pauses, ...) count against its own
 * `maxControlPerSecond`, on the real emulators: a flood of one tenant's cancels past it is
 * refused as QUOTA_EXCEEDED, on its failure topic and in the logs, while another tenant's
 * cancels, in the same queue at the same time, are all taken.
 */

const emulators = sharedEmulators();
const QUOTA = 2;
const FLOOD = 60;
const OTHERS = 10;

/** Two tenants of the local account's: acme with a strict control quota, globex with the default. */
const TENANTS: TenantsDocument = {
  tenants: [
    { id: 'acme', accounts: [LOCAL_ACCOUNT], maxControlPerSecond: QUOTA },
    { id: 'globex', accounts: [LOCAL_ACCOUNT] },
  ],
};

async function counterItem(scheduler: LocalScheduler, tenant: string): Promise<Record<string, unknown>> {
  const { Item } = await scheduler.clients.dynamodb.send(
    new GetCommand({
      TableName: scheduler.outputs.tableName,
      Key: { [TABLE.partitionKey]: openEventsCounterId(tenant) },
      ConsistentRead: true,
    }),
  );
  return Item ?? {};
}

describe("a tenant's control requests", () => {
  it("are refused past its maxControlPerSecond as QUOTA_EXCEEDED, once each, while another tenant's cancels are all taken", async () => {
    const { logger, lines } = capturingLogger();
    const scheduler = await startTestScheduler(emulators, { logger, tenants: TENANTS, env: FAST_TIMINGS });
    const clientOf = (tenant: string) => new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns[tenant]);
    const acme = Array.from({ length: 3 }, () => clientOf('acme'));
    const globex = clientOf('globex');
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'control-failures');
    const listing = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
    const inState = async (tenant: string, state: string) =>
      (await listing.listEvents(tenant, { states: [state as typeof EVENT_STATE.scheduled], limit: 100 })).events;
    try {
      // Far-path events (stored for the loader, open for the whole test) for both tenants to cancel.
      const dueAt = Date.now() + 120_000;
      const target = `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:control-target`;
      await acme[0]?.publishBatch(Array.from({ length: FLOOD }, (_, i) => request(target, dueAt, `a-${i}`, { id: `a-${i}` })));
      await globex.publishBatch(Array.from({ length: OTHERS }, (_, i) => request(target, dueAt, `g-${i}`, { id: `g-${i}` })));
      await waitFor(async () => (await inState('acme', EVENT_STATE.scheduled)).length === FLOOD, "acme's events stored", 30_000);
      await waitFor(async () => (await inState('globex', EVENT_STATE.scheduled)).length === OTHERS, "globex's events stored", 30_000);

      // Acme floods cancels from three clients at once; globex cancels its own events meanwhile.
      const cancel = (i: number) => ({ action: 'cancel', id: `a-${i}`, failure_topic: failures.topicArn });
      await Promise.all([
        ...acme.map((client, c) => client.publishBatch(Array.from({ length: FLOOD / 3 }, (_, i) => cancel(c * (FLOOD / 3) + i)))),
        globex.publishBatch(Array.from({ length: OTHERS }, (_, i) => ({ action: 'cancel', id: `g-${i}` }))),
      ]);
      await waitFor(
        async () => (await inState('acme', EVENT_STATE.cancelled)).length + failures.notices().length === FLOOD,
        "every one of acme's cancels decided",
        40_000,
      );
      await waitFor(
        async () => (await inState('globex', EVENT_STATE.cancelled)).length === OTHERS,
        "all of globex's cancels taken",
        30_000,
      );

      const notices = failures.notices();
      expect(notices.length).toBeGreaterThan(0);
      for (const notice of notices)
        expect(notice).toMatchObject({
          reason: REASON.QUOTA_EXCEEDED,
          message: `tenant "acme" is at its maxControlPerSecond quota (${QUOTA})`,
          details: { quota: 'maxControlPerSecond', limit: QUOTA },
        });
      // One notice for each refused cancel, each published once: the events it names are all different.
      expect(new Set(notices.map(({ eventId }) => eventId)).size).toBe(notices.length);
      const refused = new Set(notices.map(({ eventId }) => eventId));
      expect((await inState('acme', EVENT_STATE.scheduled)).map(({ id }) => id).sort()).toEqual([...refused].sort());
      // And in the logs, acme's alone.
      const logged = lines.filter((line) => line.reason === REASON.QUOTA_EXCEEDED);
      expect(logged).toHaveLength(notices.length);
      for (const line of logged)
        expect(line).toMatchObject({
          msg: `tenant "acme" is at its maxControlPerSecond quota (${QUOTA})`,
          failureTopic: failures.topicArn,
          notice: { details: { quota: 'maxControlPerSecond' } },
        });

      // No second admitted more than the quota: the counter item counts each second's control requests.
      const seconds = Object.entries(await counterItem(scheduler, 'acme')).filter(([name]) => /^c\d+$/.test(name));
      expect(seconds.length).toBeGreaterThan(0);
      for (const [, count] of seconds) expect(count).toBeLessThanOrEqual(QUOTA);
    } finally {
      for (const client of [...acme, globex]) client.destroy();
      await failures.stop();
      await scheduler.stop();
    }
  });
});
