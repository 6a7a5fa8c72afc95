import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  DynamoDbEventListing,
  DynamoDbTenantPauses,
  EVENT_STATE,
  EMISSION_ATTRIBUTE,
  eventIdFor,
  heldShardKey,
  messageEventId,
  occurrenceId,
  seriesId,
  shardOf,
  REASON,
  TABLE,
  type EventRecord,
  type TenantsDocument,
} from '@adhoc-scheduler/shared';
import { admin } from './admin-run.js';
import { LOCAL_ACCOUNT, type LocalScheduler } from '../../src/local/runtime.js';
import {
  capturingLogger,
  expectNotEarly,
  request,
  scheduledAt,
  SchedulerClient,
  sharedEmulators,
  startServiceWithFiles,
  storedItem,
  TopicConsumer,
  waitFor,
} from './kit.js';
import { shownSteps } from './shown-steps.js';

const TENANTS: TenantsDocument = { tenants: [{ id: 'acme', accounts: ['111111111111'], targetAccounts: [LOCAL_ACCOUNT] }] };

const emulators = sharedEmulators();

/** The service on the emulators, under `namePrefix` (a restart finds its resources again), with acme's registry in a file. */
async function start(dir: string, namePrefix: string) {
  const { logger, lines } = capturingLogger();
  const service = await startServiceWithFiles(emulators, { dir, logger, namePrefix, tenants: TENANTS });
  const { scheduler, where } = service;
  const acme = new SchedulerClient(scheduler, scheduler.outputs.tenantInputTopicArns.acme);
  const records = new DynamoDbEventListing(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  const pauses = new DynamoDbTenantPauses(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  return {
    scheduler,
    acme,
    records,
    pauses,
    lines,
    /** The files an admin command names this service by. */
    where,
    async stop() {
      acme.destroy();
      await service.stop();
    },
  };
}

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'pause-'));
  const namePrefix = `scheduler-${randomBytes(4).toString('hex')}`;
  const service = await start(dir, namePrefix);
  const target = await TopicConsumer.create(service.scheduler.outputs.endpoint, 'target');
  return {
    ...service,
    target,
    restart: async () => {
      await service.stop();
      return start(dir, namePrefix);
    },
    async teardown(running: { stop(): Promise<void> } = service) {
      await target.stop();
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function inState(records: DynamoDbEventListing, id: string, state: string): Promise<EventRecord | undefined> {
  const record = await records.get(id);
  return record?.state === state ? record : undefined;
}

/** Waits until the emitter has had a second to read acme's pause as it now stands (it keeps it a second). */
async function pausedFor(scheduler: LocalScheduler, paused: boolean): Promise<void> {
  const pauses = new DynamoDbTenantPauses(scheduler.clients.dynamodb, scheduler.outputs.tableName);
  const since = await waitFor(async () => (await pauses.paused(['acme'])).has('acme') === paused && Date.now(), 'the pause written');
  await waitFor(() => Date.now() > since + 1_100, 'the emitter to read it');
}

describe.concurrent('a paused tenant', () => {
  it('has its events held as they come due, then delivered in due order, each once and late, on resume; later ones on time', async () => {
    const { scheduler, acme, target, records, pauses, lines, teardown } = await setup();
    try {
      await acme.publish({ action: 'pause', note: 'target under maintenance' });
      await pausedFor(scheduler, true);
      expect((await pauses.paused(['acme'])).get('acme')).toMatchObject({ note: 'target under maintenance' });

      const start = Date.now();
      // Published latest first: the resume sends them by due time.
      const ids: string[] = [];
      for (const [index, inMs] of [5_000, 4_000, 3_000].entries())
        ids.unshift(`m-${await acme.publish(request(target.topicArn, start + inMs, `held-${3 - index}`))}`);
      for (const id of ids) await waitFor(() => inState(records, id, EVENT_STATE.held), `event ${id} held`);
      // The emitter logs each hold once its batch is done, which may be after the last record shows it.
      await waitFor(
        () => lines.filter((line) => line.msg === 'due while its tenant is paused: held until it resumes').length === 3,
        'each hold logged',
      );
      expect(target.deliveries).toEqual([]);

      const resumedAt = Date.now();
      await acme.publish({ action: 'resume' });
      // Far enough that the resume's sends are out first even on a loaded 2-core run (they took over 5 s once).
      const laterDueAt = resumedAt + 15_000;
      await acme.publish(request(target.topicArn, laterDueAt, 'after'));

      await waitFor(() => target.deliveries.length === 4, 'the held events and the later one', 30_000);
      expect(target.deliveries.map((delivery) => delivery.body)).toEqual(['held-1', 'held-2', 'held-3', 'after']);
      for (const [index, delivery] of target.deliveries.slice(0, 3).entries()) {
        expect(scheduledAt(delivery)).toBe(start + 3_000 + index * 1000);
        // Late: sent by the resume, not before it.
        expect(delivery.receivedAt).toBeGreaterThan(resumedAt);
      }
      const after = target.withPayload('after')[0];
      expect(after?.receivedAt).toBeGreaterThanOrEqual(laterDueAt);
      expect(after?.receivedAt).toBeLessThan(laterDueAt + 1_000);
      for (const id of ids) {
        const emitted = await waitFor(() => inState(records, id, EVENT_STATE.emitted), `event ${id} recorded as emitted`);
        // Sent again by the resume job, not taken by the loader; its first queueing kept.
        expect(shownSteps(emitted)).toEqual([
          'created by ingest',
          'queued by ingest',
          'held by the emitter',
          'queued by the resume job',
          'emitted by the emitter',
        ]);
      }

      // Nothing more comes: each was delivered once.
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.deliveries).toHaveLength(5);
    } finally {
      await teardown();
    }
  });

  it("holds a series' occurrence due while paused, materialised during the pause, and delivers it once after the resume; the next on time", async () => {
    const { scheduler, acme, target, records, teardown } = await setup();
    const MINUTE = 60_000;
    try {
      await acme.publish({ action: 'pause' });
      await pausedFor(scheduler, true);
      // Beyond ingest's near-path window (6 s): the loader's take materialises it, while the tenant is paused.
      const firstDue = Date.now() + 10_000;
      const messageId = await acme.publish({
        schedule: 'rate(1 minute)',
        start: new Date(firstDue).toISOString(),
        offset: firstDue % MINUTE,
        count: 2,
        target: target.topicArn,
        user: 'tests',
        payload: 'paused series',
      });
      const series = seriesId(messageEventId(messageId));
      const first = occurrenceId(series, firstDue);
      await waitFor(() => inState(records, first, EVENT_STATE.held), 'the first occurrence held', 30_000);
      // Made by loading's take of the series (its second version: ingest's take made none), during the pause.
      expect(await storedItem(scheduler, first)).toMatchObject({ inputMessageId: `${series}.v2` });
      expect(target.deliveries).toEqual([]);

      const resumedAt = Date.now();
      await acme.publish({ action: 'resume' });
      const [held] = await waitFor(
        () => target.withPayload('paused series').length > 0 && target.withPayload('paused series'),
        'the held one',
      );
      expect(held?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(first);
      expect(held?.attributes[EMISSION_ATTRIBUTE.seriesId]).toBe(series);
      expect(held?.receivedAt).toBeGreaterThan(resumedAt);
      expectNotEarly(held, firstDue);

      // The second, due after the resume, is not held: on time.
      const deliveries = await waitFor(
        () => target.withPayload('paused series').length === 2 && target.withPayload('paused series'),
        'the second occurrence',
        90_000,
      );
      const second = deliveries[1];
      expect(second?.attributes[EMISSION_ATTRIBUTE.eventId]).toBe(occurrenceId(series, firstDue + MINUTE));
      expectNotEarly(second, firstDue + MINUTE);
      expect(second?.receivedAt).toBeLessThan(firstDue + MINUTE + 1_000);
      // Nothing more comes: each once.
      await acme.publish(request(target.topicArn, Date.now() + 2_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('paused series')).toHaveLength(2);
      expect(await storedItem(scheduler, series)).toMatchObject({ seriesState: 'completed' });
    } finally {
      await teardown();
    }
  }, 150_000);

  it('stays paused across a restart of the service; the operator pauses, lists and resumes it with scripts/admin', async () => {
    const { scheduler, acme, target, where, restart, teardown } = await setup();
    let running: Awaited<ReturnType<typeof restart>> | undefined;
    try {
      const paused = await admin('tenant', 'pause', 'acme', '--note', 'investigating a flood', ...where);
      expect(paused).toMatchObject({ code: 0 });
      const listed = JSON.parse((await admin('tenant', 'list', '--json', ...where)).stdout) as {
        tenants: { id: string; paused: { since: string; note: string } | null }[];
      };
      expect(listed.tenants.find(({ id }) => id === 'acme')?.paused).toMatchObject({ note: 'investigating a flood' });
      expect(listed.tenants.find(({ id }) => id === 'public')?.paused).toBeNull();
      await pausedFor(scheduler, true);

      const dueAt = Date.now() + 8_000;
      const id = `m-${await acme.publish(request(target.topicArn, dueAt, 'across a restart'))}`;
      running = await restart();
      const held = await waitFor(() => inState(running?.records as DynamoDbEventListing, id, EVENT_STATE.held), 'the event held', 20_000);
      expect(held.heldAt).toBeGreaterThanOrEqual(dueAt - 2_300);
      expect(target.deliveries).toEqual([]);

      const resumed = await admin('tenant', 'resume', 'acme', ...running.where);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toContain('investigating a flood');
      const delivery = await waitFor(() => target.withPayload('across a restart')[0], 'the held event', 20_000);
      expect(scheduledAt(delivery)).toBe(dueAt);
      const after = JSON.parse((await admin('tenant', 'list', '--json', ...running.where)).stdout) as { tenants: { paused: unknown }[] };
      expect(after.tenants.every(({ paused: state }) => state === null)).toBe(true);
    } finally {
      await teardown(running);
    }
  });

  it("keeps its operator's pause against its own resume, and says so on its failure topic; the tenant list says whose pause it is", async () => {
    const { scheduler, acme, target, records, pauses, where, teardown } = await setup();
    const failures = await TopicConsumer.create(scheduler.outputs.endpoint, 'failures');
    try {
      expect(await admin('tenant', 'pause', 'acme', '--note', 'flood under investigation', ...where)).toMatchObject({ code: 0 });
      const listed = JSON.parse((await admin('tenant', 'list', '--json', ...where)).stdout) as {
        tenants: { id: string; paused: { by: string; owner: string; note: string } | null }[];
      };
      expect(listed.tenants.find(({ id }) => id === 'acme')?.paused).toMatchObject({
        owner: 'operator',
        by: expect.stringMatching(/^operator /),
        note: 'flood under investigation',
      });
      expect((await admin('tenant', 'list', ...where)).stdout).toMatch(/by operator \S+ since \S+: flood under investigation/);
      await pausedFor(scheduler, true);
      const id = `m-${await acme.publish(request(target.topicArn, Date.now() + 3_000, 'contained'))}`;
      await waitFor(() => inState(records, id, EVENT_STATE.held), 'the event held');

      await acme.publish({ action: 'resume', failure_topic: failures.topicArn });
      const notice = await waitFor(
        () => failures.notices().find((found) => found.reason === REASON.PAUSED_BY_OPERATOR),
        'the refusal on the failure topic',
      );
      expect(notice).toMatchObject({ details: { note: 'flood under investigation' } });
      expect((await pauses.paused(['acme'])).get('acme')).toMatchObject({ owner: 'operator' });
      expect(await inState(records, id, EVENT_STATE.held)).toBeDefined();
      expect(target.deliveries).toEqual([]);

      expect(await admin('tenant', 'resume', 'acme', ...where)).toMatchObject({ code: 0 });
      await waitFor(() => target.withPayload('contained').length > 0, 'the held event, at the operator’s resume', 20_000);
    } finally {
      await failures.stop();
      await teardown();
    }
  });

  it('lets a held event be cancelled or rescheduled: the cancelled one never comes, the moved one comes at its new time', async () => {
    const { scheduler, acme, target, records, teardown } = await setup();
    try {
      await acme.publish({ action: 'pause' });
      await pausedFor(scheduler, true);
      const dueAt = Date.now() + 3_000;
      await acme.publish(request(target.topicArn, dueAt, 'cancelled', { id: 'to-cancel' }));
      await acme.publish(request(target.topicArn, dueAt, 'moved', { id: 'to-move' }));
      // Named by the client's ids: a registered tenant's c- ids follow from the tenant and the id.
      const cancelled = eventIdFor('acme', 'tests', 'to-cancel', '');
      const moved = eventIdFor('acme', 'tests', 'to-move', '');
      await waitFor(() => inState(records, cancelled, EVENT_STATE.held), 'the first held');
      await waitFor(() => inState(records, moved, EVENT_STATE.held), 'the second held');

      await acme.publish({ action: 'cancel', id: 'to-cancel' });
      const newDueAt = Date.now() + 9_000;
      await acme.publish({ action: 'reschedule', id: 'to-move', date: new Date(newDueAt).toISOString() });
      await waitFor(() => inState(records, cancelled, EVENT_STATE.cancelled), 'the cancel');
      // Moved past the near-path window (6 s here): stored for the loader again.
      expect(await waitFor(() => inState(records, moved, EVENT_STATE.scheduled), 'the reschedule')).toMatchObject({ version: 2 });
      await acme.publish({ action: 'resume' });
      await pausedFor(scheduler, false);

      const delivery = await waitFor(() => target.withPayload('moved')[0], 'the moved event', 20_000);
      expect(scheduledAt(delivery)).toBe(newDueAt);
      expect(delivery.receivedAt).toBeGreaterThanOrEqual(newDueAt);
      await acme.publish(request(target.topicArn, Date.now() + 1_000, 'sentinel'));
      await waitFor(() => target.withPayload('sentinel').length > 0, 'the sentinel');
      expect(target.withPayload('cancelled')).toHaveLength(0);
      expect(target.withPayload('moved')).toHaveLength(1);
    } finally {
      await teardown();
    }
  });

  it("delivers a held event whose hold reached the index after the resume's job read it: the loader sends it on", async () => {
    const { scheduler, acme, target, records, lines, teardown } = await setup();
    try {
      await acme.publish({ action: 'pause' });
      await pausedFor(scheduler, true);
      await acme.publish(request(target.topicArn, Date.now() + 2_000, 'late to the index', { id: 'late-held' }));
      const id = eventIdFor('acme', 'tests', 'late-held', '');
      await waitFor(() => inState(records, id, EVENT_STATE.held), 'the event held');
      // Its held-index entry taken away while the resume's job reads the index, and back after: a GSI updated late.
      const heldKey = async (update: 'REMOVE' | 'SET') =>
        scheduler.clients.dynamodb.send(
          new UpdateCommand({
            TableName: scheduler.outputs.tableName,
            Key: { [TABLE.partitionKey]: id },
            UpdateExpression: update === 'REMOVE' ? 'REMOVE #key' : 'SET #key = :key',
            ExpressionAttributeNames: { '#key': TABLE.tenantShardKey },
            ...(update === 'SET' ? { ExpressionAttributeValues: { ':key': heldShardKey('acme', shardOf(id, { shardCount: 2 })) } } : {}),
          }),
        );
      await heldKey('REMOVE');
      await acme.publish({ action: 'resume' });
      await waitFor(() => lines.some((line) => line.msg === 'resume: every held event handed out'), "the resume's job done");
      await heldKey('SET');

      const delivery = await waitFor(() => target.withPayload('late to the index')[0], 'the held event, sent on by the loader', 20_000);
      expect(delivery.receivedAt).toBeGreaterThan(scheduledAt(delivery));
      expect(lines.some((line) => line.msg === 'held events of a tenant no longer paused; sent on')).toBe(true);
    } finally {
      await teardown();
    }
  });
});
