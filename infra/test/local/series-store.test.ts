import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_QUOTAS, DynamoDbSeriesStore, type NewSeries } from '@adhoc-scheduler/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalResources } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../src/local/runtime.js';
import { specOf } from '../../../shared/test/recurrence-kit.js';
import { capturingLogger, sharedEmulators, uniqueName } from './kit.js';

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
    expect(await store.advance(created.record, { ...step, owed, caughtUp })).toBe(true);
    const behind = (await store.read([series.id])).get(series.id);
    expect(behind).toMatchObject({ version: 2, owed, caughtUp, cursor: step.cursor, dueAt: step.next });

    if (behind === undefined) throw new Error('record missing');
    expect(await store.advance(behind, { ...step, owed: [], caughtUp: undefined })).toBe(true);
    const caughtUpWith = (await store.read([series.id])).get(series.id);
    expect(caughtUpWith).toMatchObject({ version: 3 });
    expect(caughtUpWith?.owed).toBeUndefined();
    expect(caughtUpWith?.caughtUp).toBeUndefined();
  });
});
