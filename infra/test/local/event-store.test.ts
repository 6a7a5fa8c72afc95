import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, type BatchExecuteStatementCommandOutput } from '@aws-sdk/lib-dynamodb';
import {
  cursorAfter,
  DynamoDbBulkCancelJobs,
  DynamoDbEventListing,
  DynamoDbEventStore,
  DynamoDbLoaderCursors,
  DynamoDbTenantPauses,
  reconcileOpenEvents,
  EVENT_STATE,
  JOB_CURSOR,
  labelEntryId,
  openEventsCounterId,
  payloadItemId,
  requestHashOf,
  systemClock,
  TABLE,
  type BatchWriteMode,
  type EmissionEnding,
  type EventRecord,
  type NewEvent,
  type ScheduledEvent,
} from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { newTable as newTableOf, tableClient } from './table-kit.js';
import { CaseEvents, NOW, type RescheduleChange } from '../../../shared/test/contracts/contract-events.js';

/**
 * The event store on DynamoDB Local, in both ways it writes batches: PartiQL statements (as the
 * stack on AWS does) and transactions (as the local service does). Every outcome must be the same.
 */
const emulators = sharedEmulators();
const client = tableClient(emulators);
afterAll(() => {
  client.destroy();
});

function newTable(): Promise<string> {
  return newTableOf(emulators, 'store');
}

async function storeFor(mode: BatchWriteMode, through: DynamoDBDocumentClient = client): Promise<DynamoDbEventStore> {
  return new DynamoDbEventStore(through, await newTable(), { batchWrites: mode });
}

/** A client of its own, whose requests the test may break. */
function faultyClient(): DynamoDBDocumentClient {
  return tableClient(emulators);
}

/**
 * Throttles the requests of `faulty` that `when` picks (told each request's command and input), as
 * DynamoDB does under load. Ahead of the SDK's retries (the store sees the throttle) unless
 * `insideRetries`: then each attempt is judged, as the SDK's retries see one.
 */
function throttle(
  faulty: DynamoDBDocumentClient,
  name: string,
  when: (commandName: string | undefined, input: Record<string, unknown>) => boolean,
  { insideRetries = false } = {},
): void {
  const throttling =
    <A extends { input: unknown }, R>(next: (args: A) => Promise<R>, context: { commandName?: string }) =>
    async (args: A): Promise<R> => {
      if (!when(context.commandName, args.input as Record<string, unknown>)) return next(args);
      throw Object.assign(new Error('throttled by the test'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    };
  if (insideRetries) faulty.middlewareStack.add(throttling, { step: 'finalizeRequest', priority: 'low', name });
  else faulty.middlewareStack.add(throttling, { step: 'initialize', name });
}

/** Every write of `id` is throttled, in either way of writing batches; the other writes of its requests go through. */
function throttleWritesOf(faulty: DynamoDBDocumentClient, id: string): void {
  faulty.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Statements?: { Parameters?: unknown[] }[];
        TransactItems?: { Update?: { Key?: Record<string, unknown> } }[];
      };
      if (context.commandName === 'BatchExecuteStatementCommand' && input.Statements) {
        const poisoned = input.Statements.findIndex((statement) => statement.Parameters?.includes(id));
        if (poisoned < 0) return next(args);
        const rest = input.Statements.filter((_, index) => index !== poisoned);
        const result =
          rest.length > 0
            ? await next({ ...args, input: { ...input, Statements: rest } })
            : { output: { Responses: [], $metadata: {} }, response: {} };
        const output = result.output as BatchExecuteStatementCommandOutput;
        const responses = [...(output.Responses ?? [])];
        responses.splice(poisoned, 0, { Error: { Code: 'ThrottlingError', Message: 'throttled by the test' } });
        return { ...result, output: { ...output, Responses: responses } };
      }
      if (context.commandName === 'TransactWriteItemsCommand' && input.TransactItems?.some((item) => item.Update?.Key?.id === id)) {
        const reasons = input.TransactItems.map((item) => ({ Code: item.Update?.Key?.id === id ? 'ThrottlingError' : 'None' }));
        throw Object.assign(new Error('Transaction cancelled by the test'), {
          name: 'TransactionCanceledException',
          CancellationReasons: reasons,
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'throttleWritesOf' },
  );
}

/** The first request of a command is applied, but its answer is lost on the way back. */
function loseFirstAnswerOf(faulty: DynamoDBDocumentClient, commandName: string): void {
  let lost = false;
  faulty.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === commandName && !lost) {
        lost = true;
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      }
      return result;
    },
    { step: 'initialize', name: 'loseFirstAnswerOf' },
  );
}

/**
 * Two stores on one new table: `store`, and `racing`, through a client of its own that runs
 * `between` (with `store`) once, after its first read of records has answered and before it writes.
 */
async function racingStore(
  mode: BatchWriteMode,
  between: (store: DynamoDbEventStore) => Promise<unknown>,
): Promise<{ store: DynamoDbEventStore; racing: DynamoDbEventStore; tableName: string; done: () => void }> {
  const tableName = await newTable();
  const store = new DynamoDbEventStore(client, tableName, { batchWrites: mode });
  const faulty = faultyClient();
  let ran = false;
  faulty.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'BatchGetItemCommand' && !ran) {
        ran = true;
        await between(store);
      }
      return result;
    },
    { step: 'initialize', name: 'writeBetweenReadAndTake' },
  );
  return { store, racing: new DynamoDbEventStore(faulty, tableName, { batchWrites: mode }), tableName, done: () => faulty.destroy() };
}

/** Counts the writes to quota counter items (UpdateItem on `#tenant#<id>`) through a client. */
function countCounterWrites(counting: DynamoDBDocumentClient): () => number {
  let writes = 0;
  counting.middlewareStack.add(
    (next, context) => async (args) => {
      if (
        context.commandName === 'UpdateItemCommand' &&
        JSON.stringify((args.input as { Key?: unknown }).Key).includes(openEventsCounterId(''))
      )
        writes += 1;
      return next(args);
    },
    { step: 'initialize', name: 'countCounterWrites' },
  );
  return () => writes;
}

/** Acme's events: each test has a table of its own, so ids are the names given. */
const acme = new CaseEvents('acme', (name) => name);
const event = (id: string, overrides: Partial<ScheduledEvent> = {}): ScheduledEvent => acme.event(id, overrides);
/** A new event as one create attempt asks for it: each call is an attempt of its own. */
const newEvent = (e: ScheduledEvent, stored: boolean, extra: Partial<NewEvent> = {}): NewEvent =>
  acme.newEvent(e, stored ? 'far' : 'near', extra);
const ACME_CHANGES = acme.changes;
const moveTo = (dueAt: number, by: string, overrides: Partial<RescheduleChange> = {}): RescheduleChange =>
  acme.moveTo(dueAt, by, overrides);
const ending = (e: ScheduledEvent, endedBy: string): EmissionEnding => acme.ending(e, endedBy);

async function openEvents(store: DynamoDbEventStore): Promise<number> {
  return store.counters.openEvents('acme');
}

describe.each<BatchWriteMode>(['statements', 'transactions'])('the event store, writing batches as %s', (mode) => {
  it('keeps the payload item of the first request with an id, and leaves none of a later one with other content', async () => {
    const tableName = await newTable();
    const store = new DynamoDbEventStore(client, tableName, { batchWrites: mode });
    // Payloads over 1 KB: each goes in an item of its own, written before the record's insert.
    const first = event('a', { payload: 'first '.repeat(400) });
    const second = event('a', { payload: 'second '.repeat(400) });
    const payloadItem = async (e: ScheduledEvent) =>
      (
        await client.send(
          new GetCommand({
            TableName: tableName,
            Key: { [TABLE.partitionKey]: payloadItemId({ id: e.id, requestHash: requestHashOf(e) }) },
            ConsistentRead: true,
          }),
        )
      ).Item;
    await store.createMany([newEvent(first, true)]);
    expect(await store.createMany([newEvent(second, true)])).toMatchObject([
      { outcome: 'duplicate', existing: { requestHash: requestHashOf(first) } },
    ]);
    expect(await payloadItem(first)).toMatchObject({ payload: first.payload });
    expect(await payloadItem(second)).toBeUndefined();
    const [taken] = await store.takeForLoading(['a'], { now: NOW, horizonMs: NOW + 7_200_000, owner: 'chunk-1', queuedBy: 'copy-1' });
    expect(taken?.payload).toBe(first.payload);
    expect(await openEvents(store)).toBe(1);
  });

  it('says when the place a duplicate took could not be given back: the count stays that much high, to reconcile', async () => {
    const faulty = faultyClient();
    let failing = false;
    throttle(faulty, 'failGivingBack', (commandName, request) => {
      // A counter update without a condition that subtracts: what gives places back.
      const input = request as { ConditionExpression?: string; ExpressionAttributeValues?: Record<string, { N?: string } | number> };
      const delta = input.ExpressionAttributeValues?.[':c0'];
      const givesBack =
        commandName === 'UpdateItemCommand' &&
        input.ConditionExpression === undefined &&
        Number(typeof delta === 'object' ? delta.N : delta) < 0;
      return failing && givesBack;
    });
    try {
      const store = await storeFor(mode, faulty);
      await store.createMany([newEvent(event('a'), false), newEvent(event('b'), false)]);
      failing = true;
      // Taken together, then one by one.
      expect(await store.createMany([newEvent(event('a'), false), newEvent(event('b'), false)])).toMatchObject([
        { outcome: 'duplicate', placeKept: true },
        { outcome: 'duplicate', placeKept: true },
      ]);
      expect(await store.createMany([newEvent(event('a'), false)])).toMatchObject([{ outcome: 'duplicate', placeKept: true }]);
      expect(await openEvents(store)).toBe(5);
    } finally {
      faulty.destroy();
    }
  });

  it.each([
    ['a batch', ['a', 'b']],
    ['a single event', ['a']],
  ])(
    'counts %s once when the answer to its insert is lost: the retried insert finds the attempt’s own record, not a duplicate',
    async (_case, ids) => {
      const faulty = faultyClient();
      try {
        const store = await storeFor(mode, faulty);
        loseFirstAnswerOf(faulty, mode === 'statements' ? 'BatchExecuteStatementCommand' : 'TransactWriteItemsCommand');
        const outcomes = await store.createMany(ids.map((id) => newEvent(event(id), id === 'b')));
        expect(outcomes).toEqual(ids.map(() => ({ outcome: 'created' })));
        expect(await openEvents(store)).toBe(ids.length);
      } finally {
        faulty.destroy();
      }
    },
  );

  it('gives nothing back for a refused insert whose record cannot be read: the count errs high', async () => {
    const faulty = faultyClient();
    let failingReads = false;
    throttle(faulty, 'failReads', (commandName) => failingReads && commandName === 'BatchGetItemCommand');
    try {
      const store = await storeFor(mode, faulty);
      await store.createMany([newEvent(event('a'), false), newEvent(event('b'), false)]);
      failingReads = true;
      expect(await store.createMany([newEvent(event('a'), false), newEvent(event('b'), false)])).toEqual([
        { outcome: 'unknown' },
        { outcome: 'unknown' },
      ]);
      expect(await store.createMany([newEvent(event('a'), false)])).toEqual([{ outcome: 'unknown' }]);
      expect(await openEvents(store)).toBe(5);
    } finally {
      faulty.destroy();
    }
  });

  it('refuses past a quota: the first ones that fit are created, the others refused, and a redelivered request is a duplicate, not refused', async () => {
    const counting = faultyClient();
    const writes = countCounterWrites(counting);
    try {
      const store = await storeFor(mode, counting);
      const quotas = { maxOpenEvents: 2, maxIngestPerSecond: 100, maxControlPerSecond: 100 };
      const outcomes = await store.createMany(['a', 'b', 'c'].map((id) => newEvent(event(id), false, { quotas })));
      expect(outcomes.map(({ outcome }) => outcome)).toEqual(['created', 'created', 'quota-exceeded']);
      expect(outcomes[2]).toMatchObject({ quota: 'maxOpenEvents' });
      // One write, for no more than the quota.
      expect(writes()).toBe(1);
      const again = await store.createMany(['a', 'd'].map((id) => newEvent(event(id), false, { quotas })));
      expect(again).toMatchObject([
        { outcome: 'duplicate', existing: { id: 'a' } },
        { outcome: 'quota-exceeded', quota: 'maxOpenEvents' },
      ]);
      // The quota was known full: no write at all.
      expect(writes()).toBe(1);
      expect(await openEvents(store)).toBe(2);
    } finally {
      counting.destroy();
    }
  });

  it('frees the places of the ends it recorded when another end of the same batch keeps failing', async () => {
    const faulty = faultyClient();
    try {
      const store = await storeFor(mode, faulty);
      await store.createMany([newEvent(event('a'), false), newEvent(event('b'), false), newEvent(event('throttled'), false)]);
      throttleWritesOf(faulty, 'throttled');
      const result = await store.endEmissions(['a', 'b', 'throttled'].map((id) => ending(event(id), 'delivery-1')));
      expect(result.recorded.map(({ event: { id } }) => id)).toEqual(['a', 'b']);
      expect(result.unknown.map(({ event: { id } }) => id)).toEqual(['throttled']);
      expect(result.applied.map(({ event: { id } }) => id)).toEqual(['a', 'b']);
      expect(await store.releasePlaces(new Map([['acme', result.applied.length]]))).toEqual([]);
      expect(await openEvents(store)).toBe(1);
    } finally {
      faulty.destroy();
    }
  });

  it('cancels and frees the place exactly once, even when the answer to the first attempt is lost', async () => {
    const faulty = faultyClient();
    try {
      const store = await storeFor(mode, faulty);
      await store.createMany([newEvent(event('a'), true)]);
      loseFirstAnswerOf(faulty, 'TransactWriteItemsCommand');
      const change = { by: 'cancel-1', publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 60 };
      // The next attempt finds the record cancelled by this very change: the caller knows its work done.
      expect(await store.cancel('a', ACME_CHANGES, change)).toMatchObject({
        outcome: 'refused',
        current: { state: EVENT_STATE.cancelled, cancelledBy: 'cancel-1' },
      });
      expect(await store.cancel('a', ACME_CHANGES, change)).toMatchObject({
        outcome: 'refused',
        current: { state: EVENT_STATE.cancelled, cancelledBy: 'cancel-1' },
      });
      expect(await openEvents(store)).toBe(0);
    } finally {
      faulty.destroy();
    }
  });

  it('keeps a payload kept apart as long as its record: a reschedule moves the payload item’s expiry with the record’s, only later', async () => {
    const faulty = faultyClient();
    let payloadWrites = 0;
    let failingPayloadWrites = false;
    throttle(faulty, 'countPayloadWrites', (commandName, input) => {
      if (commandName !== 'UpdateItemCommand' || !JSON.stringify(input.Key).includes('p#')) return false;
      payloadWrites += 1;
      return failingPayloadWrites;
    });
    try {
      const tableName = await newTable();
      const store = new DynamoDbEventStore(faulty, tableName, { batchWrites: mode });
      const large = event('a', { payload: 'x'.repeat(2_000) });
      await store.createMany([newEvent(large, true)]);
      const record = (await store.read(['a'])).get('a');
      if (!record) throw new Error('event a not stored');
      expect(record).toMatchObject({ payloadKept: 'item' });
      const payloadExpiry = async () =>
        (
          await client.send(
            new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: payloadItemId(record) }, ConsistentRead: true }),
          )
        ).Item?.[TABLE.ttlAttribute];
      const to = (days: number, by: string, publishedAt: number) => {
        const dueAt = NOW + days * 86_400_000;
        return moveTo(dueAt, by, {
          publishedAt,
          placement: { state: EVENT_STATE.scheduled, shard: 1 },
          expiresAt: Math.ceil(dueAt / 1000) + 604_800,
        });
      };

      // Ten days later than the retention period: the payload item must outlive its first expiry.
      const later = to(10, 'r-1', NOW - 3);
      expect(await store.reschedule('a', ACME_CHANGES, later)).toMatchObject({
        outcome: 'rescheduled',
        event: { payload: large.payload, version: 2 },
      });
      expect(await payloadExpiry()).toBe(later.expiresAt);
      expect(payloadWrites).toBe(1);

      // Earlier again: the payload item keeps the later expiry, unwritten.
      expect((await store.reschedule('a', ACME_CHANGES, to(1, 'r-2', NOW - 2))).outcome).toBe('rescheduled');
      expect(await payloadExpiry()).toBe(later.expiresAt);
      expect(payloadWrites).toBe(1);

      // Later still, with the payload item's write failing: its redelivery moves it.
      const latest = to(20, 'r-3', NOW - 1);
      failingPayloadWrites = true;
      await expect(store.reschedule('a', ACME_CHANGES, latest)).rejects.toThrow();
      failingPayloadWrites = false;
      expect((await store.reschedule('a', ACME_CHANGES, latest)).outcome).toBe('refused');
      expect(await payloadExpiry()).toBe(latest.expiresAt);
      expect((await store.read(['a'])).get('a')).toMatchObject({ version: 4, expiresAt: latest.expiresAt });
    } finally {
      faulty.destroy();
    }
  });

  describe('checks a change’s cutoff as each attempt to write it is made', () => {
    const change = { by: 'cancel-1', publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 60 };
    const isCancel = (input: unknown) => JSON.stringify(input).includes('cancelledBy');

    /** A store whose clock the test moves, and an event due 10 s after its start: changeable for 5 s. */
    async function setup(faulty: DynamoDBDocumentClient, changeWriteTimeoutMs = 1_000) {
      const clock = { at: NOW, now: () => clock.at, sleep: systemClock.sleep };
      const store = new DynamoDbEventStore(faulty, await newTable(), { batchWrites: mode, clock, changeWriteTimeoutMs });
      await store.createMany([newEvent(event('a', { dueAt: NOW + 10_000 }), true)]);
      return { store, clock };
    }

    it('not by the SDK’s retry of a failed attempt, which would resend the cutoff of its first', async () => {
      const faulty = faultyClient();
      try {
        const { store, clock } = await setup(faulty);
        let throttled = false;
        throttle(
          faulty,
          'throttleFirstCancel',
          (commandName, input) => {
            if (commandName !== 'TransactWriteItemsCommand' || throttled || !isCancel(input)) return false;
            // The first attempt is throttled, and the time passes into the cutoff meanwhile.
            throttled = true;
            clock.at = NOW + 6_000;
            return true;
          },
          { insideRetries: true },
        );
        expect(await store.cancel('a', ACME_CHANGES, change)).toMatchObject({
          outcome: 'refused',
          current: { state: EVENT_STATE.scheduled },
        });
        expect(throttled).toBe(true);
      } finally {
        faulty.destroy();
      }
    });

    it('giving up an attempt that has not answered within its timeout, and making another with the cutoff anew', async () => {
      const faulty = faultyClient();
      try {
        // A timeout well above what an attempt takes on a loaded machine: only the held one passes it.
        const { store, clock } = await setup(faulty, 1_500);
        let held = false;
        faulty.middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName !== 'TransactWriteItemsCommand' || held || !isCancel(args.input)) return next(args);
            // Its body is built: held on the way past its timeout, while the time passes into the cutoff.
            held = true;
            await new Promise((resolve) => setTimeout(resolve, 3_000));
            clock.at = NOW + 6_000;
            return next(args);
          },
          { step: 'build', name: 'holdFirstCancel' },
        );
        expect(await store.cancel('a', ACME_CHANGES, change)).toMatchObject({
          outcome: 'refused',
          current: { state: EVENT_STATE.scheduled },
        });
        expect(held).toBe(true);
        expect((await store.read(['a'])).get('a')?.state).toBe(EVENT_STATE.scheduled);
      } finally {
        faulty.destroy();
      }
    });
  });

  it("writes a labelled event's label entries with its record, and none for another request with the same id", async () => {
    const counting = faultyClient();
    let labelWrites = 0;
    counting.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchWriteItemCommand' && JSON.stringify(args.input).includes('l#')) labelWrites += 1;
        return next(args);
      },
      { step: 'initialize', name: 'countLabelWrites' },
    );
    try {
      const tableName = await newTable();
      const store = new DynamoDbEventStore(counting, tableName, { batchWrites: mode });
      const labelled = event('a', { labels: ['billing', 'eu'] });
      expect(await store.createMany([newEvent(labelled, true)])).toMatchObject([{ outcome: 'created' }]);
      expect(await labelEntry(tableName, 'a', 'billing')).toMatchObject({
        eventId: 'a',
        [TABLE.tenantShardKey]: 'acme#l#billing#0',
        [TABLE.dueAtKey]: labelled.dueAt,
        [TABLE.ttlAttribute]: Math.ceil(NOW / 1000) + 3600,
      });
      expect(await labelEntry(tableName, 'a', 'eu')).toBeDefined();
      expect((await store.read(['a'])).get('a')).toMatchObject({ labels: ['billing', 'eu'] });
      const record = await client.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: 'a' }, ConsistentRead: true }));
      expect(record.Item).toMatchObject({ [TABLE.tenantShardKey]: 'acme#s0' });

      // The same id, other labels: another request, which changes nothing, nor writes anything.
      expect(labelWrites).toBe(1);
      expect(await store.createMany([newEvent(event('a', { labels: ['other'] }), true)])).toMatchObject([{ outcome: 'duplicate' }]);
      expect(await labelEntry(tableName, 'a', 'other')).toBeUndefined();
      expect(labelWrites).toBe(1);
      // Refused over quota: no record, so no entry.
      const full = { maxOpenEvents: 1, maxIngestPerSecond: 100, maxControlPerSecond: 100 };
      expect(await store.createMany([newEvent(event('b', { labels: ['billing'] }), true, { quotas: full })])).toMatchObject([
        { outcome: 'quota-exceeded' },
      ]);
      expect(await labelEntry(tableName, 'b', 'billing')).toBeUndefined();
      expect(labelWrites).toBe(1);
    } finally {
      counting.destroy();
    }
  });

  it('leaves a labelled event unknown when its label entries cannot be written, and its request delivered again writes them', async () => {
    const faulty = faultyClient();
    let failing = true;
    throttle(
      faulty,
      'failLabelEntries',
      (commandName, input) => failing && commandName === 'BatchWriteItemCommand' && JSON.stringify(input).includes('l#'),
    );
    try {
      const tableName = await newTable();
      const store = new DynamoDbEventStore(faulty, tableName, { batchWrites: mode });
      const labelled = event('a', { labels: ['billing'] });
      // Ingest retries an unknown outcome: the input message comes again, as a new attempt.
      expect(await store.createMany([newEvent(labelled, false)])).toMatchObject([{ outcome: 'unknown' }]);
      expect(await labelEntry(tableName, 'a', 'billing')).toBeUndefined();
      failing = false;
      expect(await store.createMany([newEvent(labelled, false)])).toMatchObject([{ outcome: 'duplicate' }]);
      expect(await labelEntry(tableName, 'a', 'billing')).toMatchObject({ eventId: 'a', [TABLE.dueAtKey]: labelled.dueAt });
    } finally {
      faulty.destroy();
    }
  });

  it("moves a rescheduled event's label entries with it, and its redelivery moves them when that write failed", async () => {
    const faulty = faultyClient();
    let failing = false;
    // Only the label entries' writes: the due directory's note, made before the record's, is a batch write too.
    const writesLabelEntries = (input: Record<string, unknown>) => JSON.stringify(input).includes('"l#');
    throttle(
      faulty,
      'failLabelEntries',
      (commandName, input) => failing && commandName === 'BatchWriteItemCommand' && writesLabelEntries(input),
    );
    try {
      const tableName = await newTable();
      const store = new DynamoDbEventStore(faulty, tableName, { batchWrites: mode });
      await store.createMany([newEvent(event('a', { labels: ['billing'] }), true)]);
      expect((await store.reschedule('a', ACME_CHANGES, moveTo(NOW + 7_200_000, 'r-1'))).outcome).toBe('rescheduled');
      expect(await labelEntry(tableName, 'a', 'billing')).toMatchObject({ [TABLE.dueAtKey]: NOW + 7_200_000 });

      failing = true;
      await expect(store.reschedule('a', ACME_CHANGES, moveTo(NOW + 9_000_000, 'r-2', { publishedAt: NOW + 1 }))).rejects.toThrow();
      expect(await labelEntry(tableName, 'a', 'billing')).toMatchObject({ [TABLE.dueAtKey]: NOW + 7_200_000 });
      failing = false;
      expect((await store.reschedule('a', ACME_CHANGES, moveTo(NOW + 9_000_000, 'r-2', { publishedAt: NOW + 1 }))).outcome).toBe('refused');
      expect(await labelEntry(tableName, 'a', 'billing')).toMatchObject({
        [TABLE.dueAtKey]: NOW + 9_000_000,
        [TABLE.ttlAttribute]: Math.ceil((NOW + 9_000_000) / 1000) + 60,
      });
    } finally {
      faulty.destroy();
    }
  });
  describe('takes an event for loading only as it read it: a write that lands between the read and the take wins', () => {
    const take = { now: NOW, horizonMs: NOW + 7_200_000 };

    it('another chunk’s take', async () => {
      const { store, racing, done } = await racingStore(mode, (plain) =>
        plain.takeForLoading(['far'], { ...take, owner: 'chunk-1', queuedBy: 'copy-1' }),
      );
      try {
        await store.createMany([newEvent(event('far'), true)]);
        expect(await racing.takeForLoading(['far'], { ...take, owner: 'chunk-2', queuedBy: 'copy-2' })).toEqual([]);
        expect((await store.read(['far'])).get('far')).toMatchObject({ loadedBy: 'chunk-1', queuedBy: 'copy-1' });
      } finally {
        done();
      }
    });

    it('a reschedule', async () => {
      const { store, racing, done } = await racingStore(mode, (plain) =>
        plain.reschedule('far', ACME_CHANGES, moveTo(NOW + 9_000_000, 'r-1', { expiresAt: Math.ceil(NOW / 1000) + 12_000 })),
      );
      try {
        await store.createMany([newEvent(event('far'), true)]);
        expect(await racing.takeForLoading(['far'], { ...take, owner: 'chunk-1', queuedBy: 'copy-1' })).toEqual([]);
        expect((await store.read(['far'])).get('far')).toMatchObject({ state: EVENT_STATE.scheduled, version: 2 });
      } finally {
        done();
      }
    });

    it('an end, before a repair', async () => {
      const { store, racing, done } = await racingStore(mode, (plain) => plain.endEmissions([ending(event('late'), 'delivery-1')]));
      try {
        await store.createMany([newEvent(event('late', { dueAt: NOW - 600_000 }), true)]);
        await store.takeForLoading(['late'], { now: NOW, horizonMs: NOW, owner: 'lost-chunk', queuedBy: 'lost-copy' });
        const repair = { now: NOW, horizonMs: NOW, owner: 'sweep', queuedBy: 'copy-2', overdueBefore: NOW - 300_000 };
        expect(await racing.takeForLoading(['late'], repair)).toEqual([]);
        expect((await store.read(['late'])).get('late')).toMatchObject({ state: EVENT_STATE.emitted, queuedBy: 'lost-copy' });
      } finally {
        done();
      }
    });

    it('a cancel, before a resume', async () => {
      const { store, racing, tableName, done } = await racingStore(mode, (plain) =>
        plain.cancel('a', ACME_CHANGES, { by: 'cancel-1', publishedAt: NOW, expiresAt: Math.ceil(NOW / 1000) + 60 }),
      );
      try {
        await new DynamoDbTenantPauses(client, tableName).pause(
          'acme',
          { owner: 'operator', name: 'operator' },
          { pausedAt: NOW, note: undefined },
        );
        await store.createMany([newEvent(event('a'), false)]);
        const held = await store.hold((await store.read(['a'])).get('a') as EventRecord, 'token-a', {
          payload: 'payload of a',
          heldKey: 'acme#h0',
          now: NOW,
        });
        expect(held).toBe('held');
        const resume = { ...take, owner: 'resume-1', queuedBy: 'copy-2', resume: { expiresAt: Math.ceil(NOW / 1000) + 3600 } };
        expect(await racing.takeForLoading(['a'], resume)).toEqual([]);
        expect((await store.read(['a'])).get('a')).toMatchObject({ state: EVENT_STATE.cancelled });
      } finally {
        done();
      }
    });
  });
});

/** The item listing event `eventId` under `label`, if there is one. */
async function labelEntry(tableName: string, eventId: string, label: string): Promise<Record<string, unknown> | undefined> {
  return (
    await client.send(
      new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: labelEntryId(eventId, label) }, ConsistentRead: true }),
    )
  ).Item;
}

describe('the quota counters', () => {
  it('count both quotas in one item, dropping the per-second counts of seconds gone by', async () => {
    const tableName = await newTable();
    const store = new DynamoDbEventStore(client, tableName);
    const quotas = { maxOpenEvents: 100, maxIngestPerSecond: 3, maxControlPerSecond: 100 };
    expect(await store.counters.reserve('acme', quotas, NOW, 2)).toMatchObject({ taken: 2 });
    expect(await store.counters.reserve('acme', quotas, NOW, 2)).toEqual({ taken: 1, quota: 'maxIngestPerSecond' });
    expect(await store.counters.reserve('acme', quotas, NOW + 1_000, 3)).toMatchObject({ taken: 3 });
    expect(await store.counters.reserve('acme', quotas, NOW + 2_000, 1)).toMatchObject({ taken: 1 });
    expect(await store.counters.reserve('acme', quotas, NOW + 12_000, 1)).toMatchObject({ taken: 1 });
    expect(await store.counters.reserve('acme', quotas, NOW + 13_000, 1)).toMatchObject({ taken: 1 });
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: openEventsCounterId('acme') } }),
    );
    const second = (offset: number) => `r${Math.floor((NOW + offset) / 1000)}`;
    // The seconds more than ten seconds before the last are gone; the later ones stay until then.
    expect(Item).toEqual({ [TABLE.partitionKey]: openEventsCounterId('acme'), openEvents: 9, [second(12_000)]: 1, [second(13_000)]: 1 });
  });

  it('take the room left in one more write, then refuse without writing while the quota is known full', async () => {
    const counting = faultyClient();
    const writes = countCounterWrites(counting);
    try {
      const store = new DynamoDbEventStore(counting, await newTable());
      const quotas = { maxOpenEvents: 5, maxIngestPerSecond: 4, maxControlPerSecond: 100 };
      // More than a quota at once: asks for what a quota allows, and no more.
      expect(await store.counters.reserve('acme', quotas, NOW, 10)).toEqual({ taken: 4, quota: 'maxIngestPerSecond' });
      expect(writes()).toBe(1);
      // This second's rate is used up: refused without a write until the next second.
      expect(await store.counters.reserve('acme', quotas, NOW, 1)).toEqual({ taken: 0, quota: 'maxIngestPerSecond' });
      expect(writes()).toBe(1);
      // The next second: the write for 3 is refused, and its counts say 1 fits.
      const next = (Math.floor(NOW / 1000) + 1) * 1000;
      expect(await store.counters.reserve('acme', quotas, next, 3)).toEqual({ taken: 1, quota: 'maxOpenEvents' });
      expect(writes()).toBe(3);
      // The open events are at the quota: refused without a write for a second, then asked again.
      expect(await store.counters.reserve('acme', quotas, next + 500, 1)).toEqual({ taken: 0, quota: 'maxOpenEvents' });
      expect(writes()).toBe(3);
      expect(await store.counters.reserve('acme', quotas, next + 1_000, 1)).toEqual({ taken: 0, quota: 'maxOpenEvents' });
      expect(writes()).toBe(4);
      // A place this process gives back is taken at once.
      await store.counters.releaseOpenEvents('acme', 1);
      expect(await store.counters.reserve('acme', quotas, next + 1_001, 1)).toMatchObject({ taken: 1 });
      expect(await store.counters.openEvents('acme')).toBe(5);
    } finally {
      counting.destroy();
    }
  });

  it("read many tenants' open events at once, in the order asked, 0 for a tenant without a counter yet", async () => {
    const store = new DynamoDbEventStore(client, await newTable());
    const quotas = { maxOpenEvents: 1000, maxIngestPerSecond: 1000, maxControlPerSecond: 1000 };
    // More tenants than one BatchGetItem takes.
    const tenants = Array.from({ length: 130 }, (_, index) => `tenant-${index}`);
    for (const [index, tenant] of tenants.entries()) if (index % 2 === 1) await store.counters.reserve(tenant, quotas, NOW, index % 7);
    expect(await store.counters.openEventsOf([...tenants, 'tenant-1'])).toEqual(
      [...tenants, 'tenant-1'].map((tenant) => {
        const index = Number(tenant.slice('tenant-'.length));
        return index % 2 === 1 ? index % 7 : 0;
      }),
    );
    expect(await store.counters.openEventsOf([])).toEqual([]);
  });
});

describe('the control requests counted with the new events', () => {
  it('are taken in the same write, each kind against its own quotas, and refused without a write while their rate is used up', async () => {
    const counting = faultyClient();
    const writes = countCounterWrites(counting);
    try {
      const tableName = await newTable();
      const store = new DynamoDbEventStore(counting, tableName);
      const quotas = { maxOpenEvents: 2, maxIngestPerSecond: 100, maxControlPerSecond: 3 };
      expect(await store.counters.admit('acme', quotas, NOW, { events: 1, controls: 2 })).toEqual({
        taken: 1,
        quota: 'maxOpenEvents',
        controls: 2,
      });
      expect(writes()).toBe(1);
      // Neither fits whole: the counts of the refused write say one of each does, taken in one more.
      expect(await store.counters.admit('acme', quotas, NOW, { events: 3, controls: 3 })).toEqual({
        taken: 1,
        quota: 'maxOpenEvents',
        controls: 1,
      });
      expect(writes()).toBe(3);
      // Both used up this second: refused without a write.
      expect(await store.counters.admit('acme', quotas, NOW, { events: 1, controls: 1 })).toEqual({
        taken: 0,
        quota: 'maxOpenEvents',
        controls: 0,
      });
      expect(writes()).toBe(3);
      // Seconds later the open events are still at their quota; the control rate is whole again, and taken.
      expect(await store.counters.admit('acme', quotas, NOW + 2_000, { events: 1, controls: 5 })).toEqual({
        taken: 0,
        quota: 'maxOpenEvents',
        controls: 3,
      });
      expect(writes()).toBe(5);
      // The control counts of seconds gone by are dropped as the new events' are.
      await store.counters.admit('acme', quotas, NOW + 14_000, { events: 0, controls: 1 });
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: openEventsCounterId('acme') }, ConsistentRead: true }),
      );
      expect(Item).toEqual({
        [TABLE.partitionKey]: openEventsCounterId('acme'),
        openEvents: 2,
        [`c${Math.floor((NOW + 14_000) / 1000)}`]: 1,
      });
    } finally {
      counting.destroy();
    }
  });

  it('are counted by an admission with the events of a batch, and alone when it holds none', async () => {
    const counting = faultyClient();
    const writes = countCounterWrites(counting);
    try {
      const store = new DynamoDbEventStore(counting, await newTable());
      const quotas = { maxOpenEvents: 100, maxIngestPerSecond: 100, maxControlPerSecond: 2 };
      const entries = ['a', 'b'].map((id) => newEvent(event(id), false, { quotas }));
      const admitted = await store.admit({ tenant: 'acme', quotas, now: NOW, entries, controls: 3 });
      // One write for both: never more than a quota asked for at once.
      expect(admitted).toEqual({ outcomes: [{ outcome: 'created' }, { outcome: 'created' }], controls: 2 });
      expect(writes()).toBe(1);
      expect(await store.admit({ tenant: 'acme', quotas, now: NOW + 1_000, entries: [], controls: 1 })).toEqual({
        outcomes: [],
        controls: 1,
      });
      expect(writes()).toBe(2);
    } finally {
      counting.destroy();
    }
  });
});

describe('reconciling a quota counter', () => {
  it('recounts the open events and corrects a count left too high, by an event deleted without its end', async () => {
    const tableName = await newTable();
    const store = new DynamoDbEventStore(client, tableName);
    const records = new DynamoDbEventListing(client, tableName);
    await store.createMany(['a', 'b', 'c', 'd'].map((id) => newEvent(event(id), id !== 'a')));
    const { applied } = await store.endEmissions([ending(event('a'), 'delivery-1')]);
    await store.releasePlaces(new Map([['acme', applied.length]]));
    // Its retention period over while it was still open, as DynamoDB's TTL would.
    await client.send(new DeleteCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: 'd' } }));
    expect(await store.counters.openEvents('acme')).toBe(3);

    const first = await reconcileOpenEvents({ counter: store.counters, census: records }, 'acme');
    expect(first).toEqual({ tenant: 'acme', counted: 2, counterBefore: 3, counterAfter: 3, correction: -1, exact: true });
    expect(await store.counters.openEvents('acme')).toBe(2);
    expect((await reconcileOpenEvents({ counter: store.counters, census: records }, 'acme')).correction).toBe(0);
  });
});

describe('the loader cursors', () => {
  it('only move forward, each on its own', async () => {
    const cursors = new DynamoDbLoaderCursors(client, await newTable());
    await cursors.advance('loadedThroughMs', NOW);
    await cursors.advance('loadedThroughMs', NOW - 1_000);
    await cursors.advance('repairedThroughMs', NOW - 5_000);
    expect(await cursors.read()).toMatchObject({ loadedThroughMs: NOW, repairedThroughMs: NOW - 5_000 });
    await cursors.advance('loadedThroughMs', NOW + 1_000);
    expect(await cursors.read()).toMatchObject({ loadedThroughMs: NOW + 1_000, repairedThroughMs: NOW - 5_000 });
  });

  it("keep the due directory's backfill where it stands; a table the local service creates is complete from the start", async () => {
    const cursors = new DynamoDbLoaderCursors(client, await newTable());
    expect(await cursors.read()).toEqual({
      loadedThroughMs: undefined,
      repairedThroughMs: undefined,
      dueDirectoryComplete: true,
      backfill: { startsAt: undefined, from: undefined },
    });
    await cursors.saveBackfill({ startsAt: NOW, from: 'm-42' });
    expect((await cursors.read()).backfill).toEqual({ startsAt: NOW, from: 'm-42' });
    await cursors.saveBackfill({ startsAt: NOW, from: undefined });
    expect((await cursors.read()).backfill).toEqual({ startsAt: NOW, from: undefined });
  });
});

describe('the bulk cancel jobs', () => {
  it('are created once: the same job asked for again is the one already moving, its cursor and counts kept', async () => {
    const jobs = new DynamoDbBulkCancelJobs(client, await newTable());
    const job = {
      jobId: 'b-1',
      tenant: 'acme',
      label: 'spring',
      fromMs: NOW,
      dueBefore: undefined,
      failureTopic: undefined,
      dryRun: false,
      createdAt: NOW,
      expiresAt: Math.ceil(NOW / 1000) + 3600,
    };
    expect((await jobs.create(job)).created).toBe(true);
    const counts = { cancelled: 100, refused: { ended: 0, emitting: 0 } };
    const to = cursorAfter({ dueAt: NOW + 100, id: 'e-100' });
    const step = { from: JOB_CURSOR.start, to, counts, movedBy: 'page-1', done: false, now: NOW, expiresAt: job.expiresAt };
    expect(await jobs.advance('b-1', step)).toBe(true);
    expect(await jobs.create({ ...job, createdAt: NOW + 1 })).toMatchObject({ created: false, job: { cursor: to, counts } });
  });
});

describe("the tenants' pauses", () => {
  const tenantAsks = (by: string, publishedAt: number) => ({ owner: 'tenant', request: { by, publishedAt } }) as const;
  const operatorAsks = { owner: 'operator', name: 'operator jo' } as const;

  it("apply a tenant's pause and resume in the order its client published them, each once, whatever order they arrive in", async () => {
    const pauses = new DynamoDbTenantPauses(client, await newTable());
    const since = { pausedAt: NOW, note: undefined };
    // The resume published last arrives first: the earlier pause, arriving after it, changes nothing.
    expect(await pauses.resume('acme', tenantAsks('resume-2', NOW + 2), NOW + 2)).toMatchObject({ applied: true });
    expect(await pauses.pause('acme', tenantAsks('pause-1', NOW + 1), since)).toBe(false);
    expect((await pauses.paused(['acme'])).has('acme')).toBe(false);
    // A pause published later applies; the resume delivered again finds it superseded, and says so.
    expect(await pauses.pause('acme', tenantAsks('pause-3', NOW + 3), since)).toBe(true);
    expect(await pauses.resume('acme', tenantAsks('resume-2', NOW + 2), NOW + 2)).toEqual({
      applied: false,
      ended: undefined,
      stillPaused: undefined,
    });
    expect((await pauses.paused(['acme'])).get('acme')).toMatchObject({ owner: 'tenant', pausedBy: 'pause-3' });
    // Delivered again, a pause changes nothing; a resume finds its own change, to finish it again.
    expect(await pauses.pause('acme', tenantAsks('pause-3', NOW + 3), since)).toBe(false);
    expect(await pauses.resume('acme', tenantAsks('resume-4', NOW + 4), NOW + 4)).toMatchObject({
      applied: true,
      ended: { pausedBy: 'pause-3' },
    });
    expect(await pauses.resume('acme', tenantAsks('resume-4', NOW + 4), NOW + 4)).toEqual({
      applied: true,
      ended: undefined,
      stillPaused: undefined,
    });
  });

  it("keep the operator's pause apart: the tenant's resume neither lifts nor shortens it, and the operator's resume ends only its own", async () => {
    const pauses = new DynamoDbTenantPauses(client, await newTable());
    await pauses.pause('acme', operatorAsks, { pausedAt: NOW, note: 'flood under investigation' });
    expect(await pauses.pause('acme', tenantAsks('pause-1', NOW + 1), { pausedAt: NOW + 1, note: 'ours' })).toBe(true);
    const operators = { pausedAt: NOW, note: 'flood under investigation', pausedBy: 'operator jo', owner: 'operator' };
    expect((await pauses.paused(['acme'])).get('acme')).toEqual(operators);
    expect(await pauses.resume('acme', tenantAsks('resume-2', NOW + 2), NOW + 2)).toMatchObject({ applied: true, stillPaused: operators });
    expect((await pauses.paused(['acme'])).get('acme')).toEqual(operators);
    await pauses.pause('acme', tenantAsks('pause-3', NOW + 3), { pausedAt: NOW + 3, note: 'ours again' });
    expect(await pauses.resume('acme', operatorAsks, NOW + 3)).toMatchObject({
      applied: true,
      ended: operators,
      stillPaused: { owner: 'tenant', note: 'ours again' },
    });
    expect((await pauses.paused(['acme'])).get('acme')).toMatchObject({ owner: 'tenant', pausedBy: 'pause-3' });
  });
});
