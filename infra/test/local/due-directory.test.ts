import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  DEFAULT_QUOTAS,
  DUE_DIRECTORY_PERIOD_MS,
  DynamoDbDueDirectory,
  DynamoDbDueDirectoryBackfill,
  DynamoDbEventStore,
  DynamoDbSeriesStore,
  DynamoDbTenantPauses,
  dueDirectoryEntryId,
  dueDirectoryPeriodOf,
  heldShardKey,
  openEventsCounterId,
  TABLE,
  tenantShardKey,
} from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedEmulators } from './kit.js';
import { newTable as newTableOf, tableClient } from './table-kit.js';
import { CaseEvents, NOW } from '../../../shared/test/contracts/contract-events.js';
import { specOf } from '../../../shared/test/recurrence-kit.js';

/**
 * The due directory and the pause marks on DynamoDB Local: what the loader reads instead of every
 * registered tenant's partitions, the writes that must note them, and the backfill of a table
 * from before them.
 */
const emulators = sharedEmulators();
const client = tableClient(emulators);
afterAll(() => {
  client.destroy();
});
const newTable = () => newTableOf(emulators, 'directory');

const RETENTION_SECONDS = 3600;
const PERIOD = dueDirectoryPeriodOf(NOW);

describe('the due directory', () => {
  it('lists each tenant noted for any period overlapping a span, once, and none of the periods outside it', async () => {
    const tableName = await newTable();
    const directory = new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS);
    await directory.note([
      { tenant: 'acme', dueAt: PERIOD + 1 },
      { tenant: 'acme', dueAt: PERIOD + 2 },
      { tenant: 'globex', dueAt: PERIOD + DUE_DIRECTORY_PERIOD_MS },
      { tenant: 'initech', dueAt: PERIOD + 2 * DUE_DIRECTORY_PERIOD_MS },
    ]);
    expect(await directory.tenantsBetween(PERIOD, PERIOD + DUE_DIRECTORY_PERIOD_MS)).toEqual(new Set(['acme']));
    expect(await directory.tenantsBetween(PERIOD + 10, PERIOD + DUE_DIRECTORY_PERIOD_MS + 1)).toEqual(new Set(['acme', 'globex']));
    expect(await directory.tenantsBetween(PERIOD - DUE_DIRECTORY_PERIOD_MS, PERIOD)).toEqual(new Set());
    // Another process's directory reads what this one noted: it is the table's.
    const reader = new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS);
    expect(await reader.tenantsBetween(PERIOD, PERIOD + 3 * DUE_DIRECTORY_PERIOD_MS)).toEqual(new Set(['acme', 'globex', 'initech']));
  });

  it('keeps an entry as long as an event due at the end of its period is kept', async () => {
    const tableName = await newTable();
    await new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS).note([{ tenant: 'acme', dueAt: PERIOD + 1 }]);
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: dueDirectoryEntryId(PERIOD, 'acme') } }),
    );
    expect(Item?.[TABLE.ttlAttribute]).toBe((PERIOD + DUE_DIRECTORY_PERIOD_MS) / 1000 + RETENTION_SECONDS);
  });

  it('is noted by every write that lists an event or a series among its tenant’s stored ones: a far event, a reschedule, a series', async () => {
    const tableName = await newTable();
    const store = new DynamoDbEventStore(client, tableName, { retentionSeconds: RETENTION_SECONDS });
    const e = new CaseEvents('acme');
    const directory = new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS);
    const notedAt = (dueAt: number) => directory.tenantsBetween(dueAt, dueAt + 1);

    await store.createMany([e.newEvent(e.event('near', { dueAt: NOW + 60_000 }), 'near')]);
    // A near-path event is the delay queue's: nothing for the loader, nothing noted.
    expect(await notedAt(NOW + 60_000)).toEqual(new Set());
    await store.createMany([e.newEvent(e.event('far', { dueAt: NOW + 3_600_000 }), 'far')]);
    expect(await notedAt(NOW + 3_600_000)).toEqual(new Set(['acme']));

    expect((await store.reschedule(e.id('far'), e.changes, e.moveTo(NOW + 7_200_000, 'r-1'))).outcome).toBe('rescheduled');
    expect(await notedAt(NOW + 7_200_000)).toEqual(new Set(['acme']));

    const series = new DynamoDbSeriesStore(client, tableName, { retentionSeconds: RETENTION_SECONDS });
    const created = await series.create({
      series: {
        id: 's-m-every-minute',
        tenant: 'acme',
        target: 'arn:aws:sns:eu-west-1:111111111111:out',
        payload: 'tick',
        spec: specOf('rate(1 minute)', new Date(NOW + 10_800_000).toISOString()),
        catchUpMs: 3_600_000,
        clientId: undefined,
        requestHash: 'hash',
        cursor: { after: NOW + 10_800_000 - 1, fired: 0 },
      },
      dueAt: NOW + 10_800_000,
      inputMessageId: 'msg-1',
      shard: 0,
      quotas: DEFAULT_QUOTAS,
      now: NOW,
      expiresAt: 0,
    });
    expect(created.outcome).toBe('created');
    expect(await notedAt(NOW + 10_800_000)).toEqual(new Set(['acme']));
  });
});

describe('the pause marks', () => {
  const operator = { owner: 'operator', name: 'operator jo' } as const;

  it('list a tenant from its pause, stamped at its last pause or resume, until cleared once no longer paused', async () => {
    const pauses = new DynamoDbTenantPauses(client, await newTable());
    expect(await pauses.pauseMarks()).toEqual([]);
    await pauses.pause('acme', operator, { pausedAt: NOW, note: undefined });
    expect(await pauses.pauseMarks()).toEqual([{ tenant: 'acme', stamp: NOW }]);
    // Paused, it keeps its mark.
    await pauses.clearPauseMark({ tenant: 'acme', stamp: NOW });
    expect(await pauses.pauseMarks()).toEqual([{ tenant: 'acme', stamp: NOW }]);
    await pauses.resume('acme', operator, NOW + 1000);
    // A clear with the stamp read before the resume is refused: the tenant may have been paused again since.
    await pauses.clearPauseMark({ tenant: 'acme', stamp: NOW });
    expect(await pauses.pauseMarks()).toEqual([{ tenant: 'acme', stamp: NOW + 1000 }]);
    await pauses.clearPauseMark({ tenant: 'acme', stamp: NOW + 1000 });
    expect(await pauses.pauseMarks()).toEqual([]);
    // Its counters and its pause state are as they were.
    expect(await pauses.paused(['acme'])).toEqual(new Map());
  });
});

describe('the backfill of a table from before the directory', () => {
  it('notes every stored event and marks each tenant that holds events or is paused, page after page to the end', async () => {
    const tableName = await newTable();
    const put = (item: Record<string, unknown>) => client.send(new PutCommand({ TableName: tableName, Item: item }));
    // As an earlier version wrote them: listed, and nothing noted or marked.
    for (let n = 0; n < 1500; n++)
      await put({
        id: `m-stored-${n}`,
        tenant: 'acme',
        [TABLE.tenantShardKey]: tenantShardKey('acme', 's', n % 8),
        [TABLE.dueAtKey]: NOW + n * 60_000,
      });
    await put({ id: 'm-near', tenant: 'globex', [TABLE.tenantShardKey]: tenantShardKey('globex', 'q', 0), [TABLE.dueAtKey]: NOW });
    await put({ id: 'm-held', tenant: 'initech', [TABLE.tenantShardKey]: heldShardKey('initech', 3), [TABLE.dueAtKey]: NOW - 60_000 });
    await put({ id: openEventsCounterId('umbrella'), openEvents: 0, operatorPausedAt: NOW - 1 });

    const directory = new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS);
    const backfill = new DynamoDbDueDirectoryBackfill(client, tableName, directory, { now: () => NOW });
    let pages = 0;
    for (let from = await backfill.page(undefined); ; from = await backfill.page(from)) {
      pages += 1;
      if (from === undefined) break;
    }
    expect(pages).toBeGreaterThan(1);
    const reader = new DynamoDbDueDirectory(client, tableName, RETENTION_SECONDS);
    expect(await reader.tenantsBetween(NOW, NOW + 1500 * 60_000)).toEqual(new Set(['acme']));
    for (const n of [0, 749, 1499]) expect(await reader.tenantsBetween(NOW + n * 60_000, NOW + n * 60_000 + 1)).toEqual(new Set(['acme']));
    const marks = await new DynamoDbTenantPauses(client, tableName).pauseMarks();
    expect(marks.map(({ tenant }) => tenant).sort()).toEqual(['initech', 'umbrella']);
  });
});
