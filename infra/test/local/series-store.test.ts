import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  DEFAULT_QUOTAS,
  DynamoDbQuotaCounters,
  DynamoDbSeriesStore,
  type NewSeries,
  openEventsCounterId,
  type SeriesRecord,
  TABLE,
} from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalResources } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { specOf } from '../../../shared/test/recurrence-kit.js';
import { capturingLogger, sharedEmulators, uniqueName } from './kit.js';
import { tableClient } from './table-kit.js';

/** The series store's record of a catch-up on DynamoDB Local: what a take leaves owed, and the minute's count. */
const emulators = sharedEmulators();
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
  { marshallOptions: { removeUndefinedValues: true } },
);
afterAll(() => {
  client.destroy();
});

const MINUTE = 60_000;
const START = Date.parse('2030-03-17T00:00:00Z');

describe('a series record while it catches up', () => {
  it('keeps what a take left owed and the late ones sent this minute, in the write that moves its cursor, and drops both once caught up', async () => {
    const resources = await createLocalResources(
      { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
      { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
      uniqueName('series'),
      { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
    );
    const store = new DynamoDbSeriesStore(client, resources.tableName);
    const series: NewSeries = {
      id: 's-m-catch-up',
      tenant: 'acme',
      target: 'arn:aws:sns:eu-west-1:111111111111:out',
      payload: 'tick',
      spec: specOf('rate(1 minute)', new Date(START).toISOString()),
      catchUpMs: 3_600_000,
      clientId: undefined,
      requestHash: 'hash',
      cursor: { after: START - 1, fired: 0 },
    };
    const created = await store.create({
      series,
      dueAt: START,
      inputMessageId: 'msg-1',
      shard: 0,
      quotas: DEFAULT_QUOTAS,
      now: START,
      expiresAt: 0,
    });
    if (created.outcome !== 'created') throw new Error(`not created: ${created.outcome}`);
    expect(created.record.owed).toBeUndefined();

    const owed = [
      { after: START + 9 * MINUTE, fired: 10, through: START + 20 * MINUTE },
      { after: START + 30 * MINUTE, fired: 31, through: START + 40 * MINUTE },
    ];
    const caughtUp = { minute: START + 41 * MINUTE, sent: 7 };
    const now = START + 41 * MINUTE + 5_000;
    const step = { cursor: { after: START + 50 * MINUTE, fired: 51 }, next: now + 600_000, now, expiresAt: 0 };
    expect(await store.advance(created.record, { ...step, owed, caughtUp })).toEqual({ advanced: true });
    const behind = (await store.read([series.id])).get(series.id);
    expect(behind).toMatchObject({ version: 2, owed, caughtUp, cursor: step.cursor, dueAt: step.next });

    if (behind === undefined) throw new Error('record missing');
    expect(await store.advance(behind, { ...step, owed: [], caughtUp: undefined })).toEqual({ advanced: true });
    const caughtUpWith = (await store.read([series.id])).get(series.id);
    expect(caughtUpWith).toMatchObject({ version: 3 });
    expect(caughtUpWith?.owed).toBeUndefined();
    expect(caughtUpWith?.caughtUp).toBeUndefined();
  });
});

/** A new table of the scheduler's on the shared emulators. */
async function newTable(): Promise<string> {
  const resources = await createLocalResources(
    { messaging: emulators.messagingEndpoint, dynamodb: emulators.dynamodbEndpoint },
    { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS },
    uniqueName('series'),
    { visibilityTimeoutSeconds: 30, emitMaxAgeSeconds: 3600, tenantIds: [], logger: capturingLogger().logger },
  );
  return resources.tableName;
}

/** A series of `count` occurrences a minute apart from START, as ingest gives it to the store. */
function seriesOf(id: string, count: number): NewSeries {
  return {
    id,
    tenant: 'acme',
    target: 'arn:aws:sns:eu-west-1:111111111111:out',
    payload: 'tick',
    spec: specOf('rate(1 minute)', new Date(START).toISOString(), { count }),
    catchUpMs: 3_600_000,
    clientId: undefined,
    requestHash: 'hash',
    cursor: { after: START - 1, fired: 0 },
  };
}

async function created(store: DynamoDbSeriesStore, series: NewSeries): Promise<SeriesRecord> {
  const outcome = await store.create({
    series,
    dueAt: START,
    inputMessageId: 'msg-1',
    shard: 0,
    quotas: DEFAULT_QUOTAS,
    now: START,
    expiresAt: 0,
  });
  if (outcome.outcome !== 'created') throw new Error(`not created: ${outcome.outcome}`);
  return outcome.record;
}

/** The step that completes a series of `count` occurrences: its cursor past the last one, no next. */
function completion(count: number) {
  return {
    cursor: { after: START + (count - 1) * MINUTE, fired: count },
    owed: [],
    caughtUp: undefined,
    next: undefined,
    now: START,
    expiresAt: 0,
  };
}

/** The write units a client's writes consumed, as DynamoDB reports them, counted until read. */
function countingWriteUnits(client: DynamoDBDocumentClient): { units: () => number; writes: () => string[] } {
  let units = 0;
  const writes: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      if (/Put|Update|Delete|Write/.test(context.commandName ?? '')) {
        writes.push(String(context.commandName));
        for (const entry of [consumed ?? []].flat()) units += entry.CapacityUnits ?? 0;
      }
      return result;
    },
    { step: 'initialize', name: 'countingWriteUnits' },
  );
  return { units: () => units, writes: () => writes };
}

describe("a series' completion", () => {
  it('writes its record and frees its place with a write of the counter alone, not a transaction: 3 write units', async () => {
    const tableName = await newTable();
    const counting = tableClient(emulators);
    const counted = countingWriteUnits(counting);
    const store = new DynamoDbSeriesStore(counting, tableName);
    const counters = new DynamoDbQuotaCounters(client, tableName);
    const record = await created(store, seriesOf('s-m-completed', 3));
    expect(await counters.openEvents('acme')).toBe(1);

    const before = { units: counted.units(), writes: counted.writes().length };
    expect(await store.advance(record, completion(3))).toEqual({ advanced: true });
    // The record (one unit), its index entry's removal (one), the counter (one); a transaction of the two bills 12 on DynamoDB Local.
    expect(counted.units() - before.units).toBe(3);
    expect(counted.writes().slice(before.writes)).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
    expect(await counters.openEvents('acme')).toBe(0);
    expect((await store.read([record.id])).get(record.id)).toMatchObject({ state: 'completed', dueAt: undefined });
    counting.destroy();
  });

  it('frees its place when the write that completed it was applied and its answer lost, the retry refused', async () => {
    const tableName = await newTable();
    const faulty = tableClient(emulators);
    let lost = false;
    // Inside the SDK's retries: the completion applies, its answer is lost, and the SDK sends it again.
    faulty.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const input = args.input as { UpdateExpression?: string };
        if (context.commandName === 'UpdateItemCommand' && input.UpdateExpression?.includes('seriesState = :completed') && !lost) {
          lost = true;
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });
        }
        return result;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'loseCompletionAnswer' },
    );
    const store = new DynamoDbSeriesStore(faulty, tableName);
    const counters = new DynamoDbQuotaCounters(client, tableName);
    const record = await created(store, seriesOf('s-m-lost-answer', 2));

    expect(await store.advance(record, completion(2))).toEqual({ advanced: true });
    expect(lost).toBe(true);
    expect(await counters.openEvents('acme')).toBe(0);
    // Another take at the same version, which lost the race, frees nothing.
    expect(await store.advance(record, completion(2))).toEqual({ advanced: false });
    expect(await counters.openEvents('acme')).toBe(0);
    expect((await client.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: record.id } }))).Item).toMatchObject({
      seriesState: 'completed',
    });
    faulty.destroy();
  });

  it("leaves the counter to the holder of the series' place: created on a place held, completed without freeing it", async () => {
    const tableName = await newTable();
    const counting = tableClient(emulators);
    const counted = countingWriteUnits(counting);
    const store = new DynamoDbSeriesStore(counting, tableName);
    const outcome = await store.create({
      series: seriesOf('s-m-held', 2),
      dueAt: START,
      inputMessageId: 'msg-1',
      shard: 0,
      quotas: DEFAULT_QUOTAS,
      now: START,
      expiresAt: 0,
      placeHeld: true,
    });
    if (outcome.outcome !== 'created') throw new Error(`not created: ${outcome.outcome}`);
    // The same id again, on a place held: a duplicate, and nothing given back (its holder settles it).
    const again = await store.create({
      series: seriesOf('s-m-held', 2),
      dueAt: START,
      inputMessageId: 'msg-1',
      shard: 0,
      quotas: DEFAULT_QUOTAS,
      now: START,
      expiresAt: 0,
      placeHeld: true,
    });
    expect(again.outcome).toBe('duplicate');
    const before = counted.writes().length;
    expect(await store.advance(outcome.record, { ...completion(2), placeFreedByCaller: true })).toEqual({ advanced: true });
    expect(counted.writes().slice(before)).toEqual(['UpdateItemCommand']);
    // No write of the tenant's counter item at all: it does not exist.
    const counter = await client.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: openEventsCounterId('acme') } }));
    expect(counter.Item).toBeUndefined();
    expect((await store.read([outcome.record.id])).get(outcome.record.id)).toMatchObject({ state: 'completed' });
    counting.destroy();
  });
});
