import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  DEFAULT_QUOTAS,
  DynamoDbDueIndex,
  DynamoDbEventListing,
  DynamoDbEventStore,
  DynamoDbLabelledEvents,
  DynamoDbTenantPauses,
  EMISSION_ATTRIBUTE,
  EVENT_STATE,
  heldShardKey,
  heldShardKeys,
  type JobPosition,
  requestHashOf,
  shardOf,
  tenantIndexKeyAt,
  type DueEventRef,
  type EventRecord,
  type EventsQuery,
  type ListingRead,
  type NewEvent,
  type ScheduledEvent,
} from '@adhoc-scheduler/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalResources } from '../../src/local/resources.js';
import { LOCAL_ACCOUNT, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import {
  capturingLogger,
  FAST_TIMINGS,
  request,
  SchedulerClient,
  sharedEmulators,
  startTestScheduler,
  TopicConsumer,
  uniqueName,
  waitFor,
} from './kit.js';

/** A tenant's events through the tenant index, on DynamoDB Local: what `scripts/admin events` reads. */
const emulators = sharedEmulators();
let client: DynamoDBDocumentClient;
beforeAll(() => {
  client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
});
afterAll(() => {
  client?.destroy();
});

const SHARDS = 4;
const NOW = Date.now();
const HOUR = 3_600_000;
let attempts = 0;

/** A new event of `tenant`, due `inMs` from now: near path (its payload only in the delay queue) or far (stored). */
function newEvent(tenant: string, id: string, inMs: number, options: { near?: boolean; labels?: string[] } = {}): NewEvent {
  attempts += 1;
  const event: ScheduledEvent = {
    id,
    tenant,
    user: 'alice',
    target: `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT}:out`,
    payload: `payload of ${id}`,
    dueAt: NOW + inMs,
    version: 1,
    ...(options.labels ? { labels: options.labels } : {}),
  };
  return {
    event,
    clientId: undefined,
    inputMessageId: `input-${id}`,
    requestHash: requestHashOf(event),
    placement: { state: options.near ? EVENT_STATE.queued : EVENT_STATE.scheduled, shard: shardOf(id, { shardCount: SHARDS }) },
    queuedBy: options.near ? `copy-${id}` : undefined,
    createdBy: `attempt-${attempts}`,
    quotas: DEFAULT_QUOTAS,
    now: NOW,
    expiresAt: Math.ceil((NOW + inMs) / 1000) + 3600,
  };
}

/** A fresh table with the store (indexing events placed in the delay queue, or not), and the listing reading it. */
async function setup({ indexQueuedEvents = true } = {}) {
  const resources = await createLocalResources(
    { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
    { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
    uniqueName('listing'),
    { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
  );
  const reads: ListingRead[] = [];
  const requests: string[] = [];
  const counted = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
  );
  counted.middlewareStack.add(
    (next, context) => async (args) => {
      requests.push(context.commandName ?? '');
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  const store = new DynamoDbEventStore(client, resources.tableName, { batchWrites: 'transactions', indexQueuedEvents, shardCount: SHARDS });
  const records = new DynamoDbEventListing(counted, resources.tableName, { shardCount: SHARDS, onRead: (read) => reads.push(read) });
  /** Every page of a listing, following `next`. */
  const all = async (tenant: string, query: Omit<EventsQuery, 'after'>): Promise<{ pages: EventRecord[][]; ids: string[] }> => {
    const pages: EventRecord[][] = [];
    let after: string | undefined;
    do {
      const page = await records.listEvents(tenant, { ...query, after });
      pages.push([...page.events]);
      after = page.next;
    } while (after !== undefined);
    return { pages, ids: pages.flat().map(({ id }) => id) };
  };
  /** Moves an item of the table into another partition of the tenant index: what no write of the scheduler does. */
  const plant = (id: string, tenantShard: string) =>
    client.send(
      new UpdateCommand({
        TableName: resources.tableName,
        Key: { id },
        UpdateExpression: 'SET tenantShard = :key',
        ExpressionAttributeValues: { ':key': tenantShard },
      }),
    );
  return { store, records, reads, requests, all, plant, tableName: resources.tableName, destroy: () => counted.destroy() };
}

/** Ids in due order. */
function byDue(events: readonly NewEvent[]): string[] {
  return [...events].sort((a, b) => a.event.dueAt - b.event.dueAt).map(({ event }) => event.id);
}

describe.concurrent('listing a tenant’s events', () => {
  it('gives its open events in due order, near and far path alike (with SCHEDULER_INDEX_QUEUED_EVENTS), a page at a time, and never another tenant’s', async () => {
    const { store, all, requests, destroy } = await setup();
    try {
      const acme = Array.from({ length: 23 }, (_, i) =>
        newEvent('acme', `a-${i}`, (i % 7) * 60_000 + i * 1_000 + HOUR, { near: i % 2 === 0 }),
      );
      // Globex's events are due at the same times.
      const globex = acme.map(({ event }, i) => newEvent('globex', `g-${i}`, event.dueAt - NOW, { near: i % 2 === 1 }));
      await store.createMany(acme);
      await store.createMany(globex);

      const { pages, ids } = await all('acme', { limit: 5 });
      expect(ids).toEqual(byDue(acme));
      expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
      expect(pages.flat().every((record) => record.tenant === 'acme')).toBe(true);
      expect((await all('globex', { limit: 100 })).ids).toEqual(byDue(globex));
      expect(requests).not.toContain('ScanCommand');
    } finally {
      destroy();
    }
  });

  it('lists each of 250 events due in the same millisecond once, in pages of 100, by id within the millisecond, with or without a label', async () => {
    const { store, all, destroy } = await setup();
    try {
      // More in each partition than its first read asks for: the millisecond straddles reads and pages.
      const same = Array.from({ length: 250 }, (_, i) => newEvent('acme', `t-${String(i).padStart(3, '0')}`, HOUR, { labels: ['tie'] }));
      for (let from = 0; from < same.length; from += 25) await store.createMany(same.slice(from, from + 25));
      const ids = same.map(({ event }) => event.id).sort();
      const listed = await all('acme', { limit: 100 });
      expect(listed.pages.map((page) => page.length)).toEqual([100, 100, 50]);
      expect(listed.ids).toEqual(ids);
      const byLabel = await all('acme', { limit: 100, label: 'tie' });
      expect(byLabel.ids).toEqual(ids);
    } finally {
      destroy();
    }
  });

  it('gives a bulk cancel each of 250 labelled events due in the same millisecond once, in pages of 100, by id', async () => {
    const { store, tableName, destroy } = await setup();
    try {
      const same = Array.from({ length: 250 }, (_, i) => newEvent('acme', `t-${String(i).padStart(3, '0')}`, HOUR, { labels: ['tie'] }));
      for (let from = 0; from < same.length; from += 25) await store.createMany(same.slice(from, from + 25));
      const labelled = new DynamoDbLabelledEvents(client, tableName, SHARDS);
      const pages: (readonly JobPosition[])[] = [];
      let after: JobPosition | undefined;
      do {
        const page = await labelled.page({ tenant: 'acme', label: 'tie', fromMs: NOW, beforeMs: undefined, after, limit: 100 });
        pages.push(page);
        after = page.length === 100 ? page.at(-1) : undefined;
      } while (after !== undefined);
      expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
      expect(pages.flat().map(({ id }) => id)).toEqual(same.map(({ event }) => event.id).sort());
    } finally {
      destroy();
    }
  });

  it('gives a resume each of 250 held events due in the same millisecond once, in pages of 100, by id', async () => {
    const { tableName, destroy } = await setup();
    try {
      const ids = Array.from({ length: 250 }, (_, i) => `t-${String(i).padStart(3, '0')}`);
      // Index entries only: what a resume reads of a held event is its key in its tenant's held partitions.
      for (let from = 0; from < ids.length; from += 25) {
        const items = ids
          .slice(from, from + 25)
          .map((id) => ({ id, tenantShard: heldShardKey('acme', shardOf(id, { shardCount: SHARDS })), dueAt: NOW }));
        await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: items.map((Item) => ({ PutRequest: { Item } })) } }));
      }
      const dueIndex = new DynamoDbDueIndex(client, tableName);
      const pages: (readonly DueEventRef[])[] = [];
      let after: DueEventRef | undefined;
      do {
        const page = await dueIndex.page(heldShardKeys('acme', SHARDS), after, 100);
        pages.push(page);
        after = page.length === 100 ? page.at(-1) : undefined;
      } while (after !== undefined);
      expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
      expect(pages.flat().map(({ id }) => id)).toEqual(ids);
    } finally {
      destroy();
    }
  });

  it('without SCHEDULER_INDEX_QUEUED_EVENTS, lists an open near-path event only under its labels, so that it costs no write beyond its record and its end', async () => {
    const { store, all, destroy } = await setup({ indexQueuedEvents: false });
    try {
      const events = [
        newEvent('acme', 'near-plain', HOUR, { near: true }),
        newEvent('acme', 'near-labelled', HOUR + 1_000, { near: true, labels: ['billing'] }),
        newEvent('acme', 'far-plain', HOUR + 2_000),
        newEvent('acme', 'far-labelled', HOUR + 3_000, { labels: ['billing'] }),
      ];
      await store.createMany(events);
      expect((await all('acme', { limit: 10 })).ids).toEqual(['far-plain', 'far-labelled']);
      expect((await all('acme', { label: 'billing', limit: 10 })).ids).toEqual(['near-labelled', 'far-labelled']);
    } finally {
      destroy();
    }
  });

  it('without SCHEDULER_INDEX_QUEUED_EVENTS, lists a near-path event held while its tenant is paused, without a label, in the held state', async () => {
    const { store, all, tableName, destroy } = await setup({ indexQueuedEvents: false });
    try {
      const near = newEvent('acme', 'near-held', HOUR, { near: true });
      await store.createMany([near]);
      await store.createMany([newEvent('acme', 'far-open', HOUR + 1_000)]);
      await new DynamoDbTenantPauses(client, tableName).pause(
        'acme',
        { owner: 'operator', name: 'operator' },
        { pausedAt: NOW, note: undefined },
      );
      const record = (await store.read(['near-held'])).get('near-held') as EventRecord;
      const held = await store.hold(record, 'copy-near-held', {
        payload: near.event.payload,
        heldKey: heldShardKey('acme', shardOf('near-held', { shardCount: SHARDS })),
        now: NOW,
      });
      expect(held).toBe('held');
      expect((await all('acme', { states: [EVENT_STATE.held], limit: 10 })).ids).toEqual(['near-held']);
      expect((await all('acme', { limit: 10 })).ids).toEqual(['near-held', 'far-open']);
      // A resume reads it in the held partitions; cancelled, it leaves them, and is still listed.
      const dueIndex = new DynamoDbDueIndex(client, tableName);
      expect((await dueIndex.page(heldShardKeys('acme', SHARDS), undefined, 10)).map(({ id }) => id)).toEqual(['near-held']);
      const cancel = { by: 'cancel-near-held', publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 3600 };
      expect(await store.cancel('near-held', { tenant: 'acme', cutoffMs: 0 }, cancel)).toEqual({ outcome: 'cancelled' });
      expect(await dueIndex.page(heldShardKeys('acme', SHARDS), undefined, 10)).toEqual([]);
      expect((await all('acme', { states: [EVENT_STATE.cancelled], limit: 10 })).ids).toEqual(['near-held']);
    } finally {
      destroy();
    }
  });

  it('without SCHEDULER_INDEX_QUEUED_EVENTS, lists a near-path event once it fails, by the key its end gives it; not one emitted', async () => {
    const { store, all, destroy } = await setup({ indexQueuedEvents: false });
    try {
      const failing = newEvent('acme', 'near-failed', HOUR, { near: true });
      const emitted = newEvent('acme', 'near-emitted', HOUR + 1_000, { near: true });
      await store.createMany([failing, emitted]);
      expect((await all('acme', { states: [EVENT_STATE.failed, EVENT_STATE.emitted], limit: 10 })).ids).toEqual([]);
      const at = NOW + 1_000;
      const recorded = await store.endEmissions([
        {
          event: failing.event,
          end: { state: 'failed', at, reason: 'TARGET_NOT_FOUND' },
          expiresAt: failing.expiresAt,
          endedBy: 'delivery-1',
          listedUnder: tenantIndexKeyAt('failed', { tenant: 'acme', shard: failing.placement.shard, payloadIn: 'queue' }, false),
        },
        { event: emitted.event, end: { state: 'emitted', at }, expiresAt: emitted.expiresAt, endedBy: 'delivery-2' },
      ]);
      expect(recorded.applied).toHaveLength(2);
      expect((await all('acme', { states: [EVENT_STATE.failed], limit: 10 })).ids).toEqual(['near-failed']);
      expect((await all('acme', { states: [EVENT_STATE.failed, EVENT_STATE.emitted], limit: 10 })).ids).toEqual(['near-failed']);
    } finally {
      destroy();
    }
  });

  it('lists an occurrence of a series with its series, in either setting: under its labels, and once it fails; a one-off near-path event as the setting says', async () => {
    const { store, all, tableName, destroy } = await setup();
    try {
      const ofSeries = (id: string, inMs: number, labels?: string[]): NewEvent => {
        const entry = newEvent('acme', id, inMs, { near: true, ...(labels ? { labels } : {}) });
        const event = { ...entry.event, series: { id: 's-m-daily', occurrence: 1 } };
        return { ...entry, event, requestHash: requestHashOf(event) };
      };
      const failing = ofSeries('o-failing', HOUR);
      await store.createMany([
        newEvent('acme', 'near-one-off', HOUR + 1_000, { near: true }),
        failing,
        ofSeries('o-labelled', HOUR + 2_000, ['reports']),
      ]);
      // Its record has no key of its own: no index entry written for it.
      const item = await client.send(new GetCommand({ TableName: tableName, Key: { id: 'o-labelled' } }));
      expect(item.Item).toBeDefined();
      expect(item.Item?.tenantShard).toBeUndefined();
      expect((await all('acme', { limit: 10 })).ids).toEqual(['near-one-off']);
      expect((await all('acme', { label: 'reports', limit: 10 })).ids).toEqual(['o-labelled']);
      const recorded = await store.endEmissions([
        {
          event: failing.event,
          end: { state: 'failed', at: NOW, reason: 'TARGET_NOT_FOUND' },
          expiresAt: failing.expiresAt,
          endedBy: 'delivery-1',
          listedUnder: tenantIndexKeyAt(
            'failed',
            { tenant: 'acme', shard: failing.placement.shard, payloadIn: 'queue', occurrence: true },
            true,
          ),
        },
      ]);
      expect(recorded.applied).toHaveLength(1);
      expect((await all('acme', { states: [EVENT_STATE.failed], limit: 10 })).ids).toEqual(['o-failing']);
    } finally {
      destroy();
    }
  });

  it('without SCHEDULER_INDEX_QUEUED_EVENTS, lists a near-path event carried into the table after a reschedule, as scheduled', async () => {
    const { store, all, destroy } = await setup({ indexQueuedEvents: false });
    try {
      const near = newEvent('acme', 'near-carried', 60_000, { near: true });
      await store.createMany([near]);
      const shard = near.placement.shard;
      const rescheduled = await store.reschedule(
        'near-carried',
        { tenant: 'acme', cutoffMs: 0 },
        {
          by: 'reschedule-1',
          publishedAt: NOW,
          dueAt: NOW + HOUR,
          placement: { state: EVENT_STATE.scheduled, shard },
          queuedBy: 'copy-2',
          expiresAt: near.expiresAt + 3600,
        },
      );
      expect(rescheduled).toEqual({ outcome: 'rescheduled', event: undefined });
      expect((await all('acme', { limit: 10 })).ids).toEqual([]);
      const record = (await store.read(['near-carried'])).get('near-carried') as EventRecord;
      const carried = await store.carry(
        record,
        'copy-near-carried',
        {
          to: 'table',
          payload: near.event.payload,
          tenantShard: tenantIndexKeyAt('carried', { tenant: 'acme', shard, payloadIn: 'table' }, false),
        },
        NOW,
      );
      expect(carried).toBe(true);
      expect((await all('acme', { states: [EVENT_STATE.scheduled], limit: 10 })).ids).toEqual(['near-carried']);
    } finally {
      destroy();
    }
  });

  it('gives those with a label, by the label’s entries, and none of another tenant’s with the same label', async () => {
    const { store, all, destroy } = await setup();
    try {
      const events = Array.from({ length: 12 }, (_, i) =>
        newEvent('acme', `a-${i}`, HOUR + (12 - i) * 1_000, { near: i % 3 === 0, labels: i % 2 === 0 ? ['billing', `n${i}`] : ['other'] }),
      );
      await store.createMany(events);
      await store.createMany([newEvent('globex', 'g-1', HOUR, { labels: ['billing'] })]);
      const labelled = events.filter(({ event }) => event.labels?.includes('billing'));
      expect((await all('acme', { label: 'billing', limit: 4 })).ids).toEqual(byDue(labelled));
      expect((await all('acme', { label: 'n4', limit: 4 })).ids).toEqual(['a-4']);
      expect((await all('acme', { label: 'none', limit: 4 })).ids).toEqual([]);
      expect((await all('globex', { label: 'billing', limit: 4 })).ids).toEqual(['g-1']);
    } finally {
      destroy();
    }
  });

  it('never gives another tenant’s event, even one whose index entry stands in its partitions', async () => {
    const { store, all, plant, destroy } = await setup();
    try {
      await store.createMany([newEvent('acme', 'a-1', HOUR, { labels: ['billing'] })]);
      await store.createMany([newEvent('globex', 'g-1', HOUR + 1_000, { labels: ['billing'] }), newEvent('globex', 'g-2', HOUR + 2_000)]);
      // Globex's record and its label entry, moved under acme's keys: the records read decide.
      await plant('g-2', `acme#s${shardOf('g-2', { shardCount: SHARDS })}`);
      await plant('l#g-1#billing', `acme#l#billing#${shardOf('g-1', { shardCount: SHARDS })}`);
      expect((await all('acme', { limit: 10 })).ids).toEqual(['a-1']);
      expect((await all('acme', { label: 'billing', limit: 10 })).ids).toEqual(['a-1']);
    } finally {
      destroy();
    }
  });

  it('gives those due in a range, and moves a rescheduled event (and its label entries) to its new due time', async () => {
    const { store, all, destroy } = await setup();
    try {
      const events = Array.from({ length: 10 }, (_, i) => newEvent('acme', `a-${i}`, HOUR + i * 60_000, { labels: ['billing'] }));
      await store.createMany(events);
      const from = NOW + HOUR + 2 * 60_000;
      const to = NOW + HOUR + 6 * 60_000;
      expect((await all('acme', { from, to, limit: 3 })).ids).toEqual(['a-2', 'a-3', 'a-4', 'a-5']);

      const rescheduled = await store.reschedule(
        'a-9',
        { tenant: 'acme', cutoffMs: 5_000 },
        {
          by: 'r-1',
          publishedAt: NOW,
          dueAt: from + 30_000,
          placement: { state: EVENT_STATE.scheduled, shard: shardOf('a-9', { shardCount: SHARDS }) },
          queuedBy: 'unused',
          expiresAt: Math.ceil((from + 30_000) / 1000) + 3600,
        },
      );
      expect(rescheduled.outcome).toBe('rescheduled');
      expect((await all('acme', { from, to, limit: 3 })).ids).toEqual(['a-2', 'a-9', 'a-3', 'a-4', 'a-5']);
      expect((await all('acme', { from, to, label: 'billing', limit: 3 })).ids).toEqual(['a-2', 'a-9', 'a-3', 'a-4', 'a-5']);
    } finally {
      destroy();
    }
  });

  it('gives open events by default, and those of the states asked for', async () => {
    const { store, all, destroy } = await setup();
    try {
      const events = ['open', 'cancelled', 'emitted', 'queued'].map((id, i) =>
        newEvent('acme', id, HOUR + i * 1_000, { near: id !== 'open' }),
      );
      await store.createMany(events);
      const emitted = events[2]?.event as ScheduledEvent;
      await store.cancel(
        'cancelled',
        { tenant: 'acme', cutoffMs: 5_000 },
        { by: 'c-1', publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 60 },
      );
      await store.endEmissions([
        { event: emitted, end: { state: 'emitted', at: NOW }, expiresAt: Math.ceil(NOW / 1000) + 60, endedBy: 'd-1' },
      ]);
      expect((await all('acme', { limit: 10 })).ids).toEqual(['open', 'queued']);
      expect((await all('acme', { states: [EVENT_STATE.cancelled], limit: 10 })).ids).toEqual(['cancelled']);
      expect((await all('acme', { states: [EVENT_STATE.emitted, EVENT_STATE.queued], limit: 10 })).ids).toEqual(['emitted', 'queued']);
    } finally {
      destroy();
    }
  });

  it('reads the records it returns and index entries of at most about twice as many, not the tenant’s whole backlog', async () => {
    const { store, records, reads, destroy } = await setup();
    try {
      const events = Array.from({ length: 400 }, (_, i) => newEvent('acme', `a-${i}`, HOUR + i * 1_000, { near: i % 2 === 0 }));
      await store.createMany(events);
      const page = await records.listEvents('acme', { limit: 50 });
      expect(page.events.map(({ id }) => id)).toEqual(byDue(events).slice(0, 50));
      const read = (request: ListingRead['request']) =>
        reads.filter((each) => each.request === request).reduce((sum, each) => sum + each.items, 0);
      expect(read('BatchGetItem')).toBe(50);
      // Each of the 2 × SHARDS partitions (both families hold events here) is asked for a shard's share of the page, rounded up, and one more.
      expect(read('Query')).toBeLessThanOrEqual(2 * 50 + 4 * SHARDS);
      expect(page.next).toEqual(expect.any(String));
    } finally {
      destroy();
    }
  });
});

describe.concurrent('labels through the service', () => {
  it('delivers an event’s labels in the scheduler-labels attribute, on the near path and the far path, and none without', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    const shared = new SchedulerClient(scheduler);
    try {
      const now = Date.now();
      await shared.publishBatch([
        request(target.topicArn, now + 2_000, 'near', { labels: ['billing', 'eu'] }),
        // Beyond the near-path window: stored, then loaded.
        request(target.topicArn, now + 9_000, 'far', { labels: ['billing'] }),
        request(target.topicArn, now + 2_000, 'plain'),
      ]);
      const attribute = (payload: string) => target.withPayload(payload)[0]?.attributes[EMISSION_ATTRIBUTE.labels];
      await waitFor(() => target.deliveries.length === 3, 'the three deliveries', 30_000);
      expect(attribute('near')).toBe('billing,eu');
      expect(attribute('far')).toBe('billing');
      expect(target.withPayload('plain')[0]?.attributes).not.toHaveProperty(EMISSION_ATTRIBUTE.labels);
    } finally {
      shared.destroy();
      await target.stop();
      await scheduler.stop();
    }
  });
});
