import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ListSubscriptionsByTopicCommand, SNSClient, SubscribeCommand, UnsubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  bucketOf,
  DynamoDbDueIndex,
  DynamoDbEventListing,
  DynamoDbTenantPauses,
  DynamoDbTenantRegistry,
  EVENT_STATE,
  heldShardKey,
  heldShardKeys,
  LEGACY_BUCKET_INDEX,
  LEGACY_REGISTRY_INDEX,
  LOADER_CURSOR_ID,
  REGISTRY_KEY,
  REGISTRY_LISTING,
  registryEntryId,
  shardOf,
  SqsDelayQueue,
  systemClock,
  TABLE,
  tenantShardKey,
  type ScheduledEvent,
} from '@adhoc-scheduler/shared';
import { startEmulators, type Emulators } from '../../src/local/emulators.js';
import { resourceNames } from '../../src/local/resources.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, type LocalScheduler } from '../../src/local/runtime.js';
import { admin } from './admin-run.js';
import { expectNotEarly, FAST_TIMINGS, sharedEmulators, startTestScheduler, TopicConsumer, uniqueName, waitFor } from './kit.js';

const emulators = sharedEmulators();

/**
 * An event's record exactly as the version before small records wrote it: the payload inline
 * whatever the path, the operators' index key, no copy token, and a lapsed emission claim.
 */
function recordOfEarlierVersion(
  event: ScheduledEvent,
  state: 'scheduled' | 'queued',
  indexKeys: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  const now = Date.now();
  return {
    ...event,
    clientId: undefined,
    inputMessageId: `input-${event.id}`,
    state,
    tenantState: `${event.tenant}#open`,
    createdAt: now - 60_000,
    ...(state === 'queued' ? { queuedAt: now - 1_000, emitClaim: 'an older attempt', emitClaimUntil: now - 30_000 } : indexKeys),
    expiresAt: Math.ceil(event.dueAt / 1000) + 3600,
  };
}

/** An index by due time, keys only, as every version created them. */
function keysOnly(name: string, partitionKey: string) {
  return {
    IndexName: name,
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE.dueAtKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' as const },
  };
}

/**
 * A table with the indexes an earlier version created: the time-bucket index and the tenant
 * index, the tenant index alone (once deployed without the other), or the tenant index and the
 * index the registry was listed in (the version before the listing table).
 */
async function createTableOfEarlierVersion(
  dynamodb: DynamoDBDocumentClient,
  tableName: string,
  indexes: 'with-bucket-index' | 'without' | 'with-registry-index',
): Promise<void> {
  const withBucketIndex = indexes === 'with-bucket-index';
  const withRegistryIndex = indexes === 'with-registry-index';
  await dynamodb.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
        ...(withBucketIndex ? [{ AttributeName: LEGACY_BUCKET_INDEX.partitionKey, AttributeType: 'S' as const }] : []),
        { AttributeName: TABLE.tenantShardKey, AttributeType: 'S' },
        { AttributeName: TABLE.dueAtKey, AttributeType: 'N' },
        ...(withRegistryIndex
          ? [
              { AttributeName: REGISTRY_LISTING.partitionKey, AttributeType: 'S' as const },
              { AttributeName: REGISTRY_LISTING.sortKey, AttributeType: 'S' as const },
            ]
          : []),
      ],
      KeySchema: [{ AttributeName: TABLE.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        ...(withBucketIndex ? [keysOnly(LEGACY_BUCKET_INDEX.name, LEGACY_BUCKET_INDEX.partitionKey)] : []),
        keysOnly(TABLE.tenantIndex, TABLE.tenantShardKey),
        ...(withRegistryIndex
          ? [
              {
                IndexName: LEGACY_REGISTRY_INDEX,
                KeySchema: [
                  { AttributeName: REGISTRY_LISTING.partitionKey, KeyType: 'HASH' as const },
                  { AttributeName: REGISTRY_LISTING.sortKey, KeyType: 'RANGE' as const },
                ],
                Projection: { ProjectionType: 'KEYS_ONLY' as const },
              },
            ]
          : []),
      ],
    }),
  );
}

/** An item's key in the tenant index, and in the time-bucket index, read consistently. */
async function indexKeysOf(dynamodb: DynamoDBDocumentClient, tableName: string, id: string): Promise<unknown[]> {
  const { Item } = await dynamodb.send(new GetCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: id }, ConsistentRead: true }));
  return [Item?.[TABLE.tenantShardKey], Item?.[LEGACY_BUCKET_INDEX.partitionKey]];
}

/** Emulators of a test's own, and a document client of their DynamoDB Local (see why above the tests that use them). */
async function emulatorsOfItsOwn(): Promise<{ readonly emulators: Emulators; readonly dynamodb: DynamoDBDocumentClient }> {
  const emulators = await startEmulators({});
  const dynamodb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
  );
  return { emulators, dynamodb };
}

describe.concurrent('an upgrade', () => {
  it('emits, once, events stored by the earlier version: one waiting in the table, one already in the delay queue', async () => {
    const scheduler = await startTestScheduler(emulators, { env: FAST_TIMINGS });
    const target = await TopicConsumer.create(scheduler.outputs.endpoint, 'target');
    try {
      const { dynamodb, sqs } = scheduler.clients;
      const event = (id: string, inMs: number): ScheduledEvent => ({
        id,
        tenant: 'public',
        user: 'tests',
        target: target.topicArn,
        payload: `payload of ${id}`,
        dueAt: Date.now() + inMs,
        version: 1,
      });
      const stored = event('m-earlier-stored', 9_000);
      const queued = event('m-earlier-queued', 3_000);
      const put = (item: Record<string, unknown>) => dynamodb.send(new PutCommand({ TableName: scheduler.outputs.tableName, Item: item }));
      // The table as that version left it: no due directory, so not marked complete.
      await dynamodb.send(
        new UpdateCommand({
          TableName: scheduler.outputs.tableName,
          Key: { [TABLE.partitionKey]: LOADER_CURSOR_ID },
          UpdateExpression: 'REMOVE dueDirectoryComplete',
        }),
      );
      await put(
        recordOfEarlierVersion(stored, 'scheduled', {
          [TABLE.tenantShardKey]: tenantShardKey(stored.tenant, 's', shardOf(stored.id, scheduler.config)),
        }),
      );
      await put(recordOfEarlierVersion(queued, 'queued'));
      // Its delay-queue copy, as that version sent it: no token.
      const failed = await new SqsDelayQueue(sqs, scheduler.outputs.delayQueueUrl).send([
        { event: queued, delaySeconds: 2, queuedBy: undefined },
      ]);
      expect(failed).toEqual([]);

      const records = new DynamoDbEventListing(dynamodb, scheduler.outputs.tableName);
      for (const { id, dueAt, payload } of [queued, stored]) {
        const [delivery] = await waitFor(
          () => target.withPayload(payload).length > 0 && target.withPayload(payload),
          `${id} delivered`,
          30_000,
        );
        expectNotEarly(delivery, dueAt);
        await waitFor(async () => (await records.get(id))?.state === EVENT_STATE.emitted, `${id} recorded as emitted`);
      }
      expect(target.deliveries).toHaveLength(2);
    } finally {
      await target.stop();
      await scheduler.stop();
    }
  });

  // On emulators of its own: changing the indexes of a table of the shared DynamoDB Local, while other files
  // write to it, waited past two minutes in whole runs (alone it takes about ten seconds).
  it('takes a table an earlier version created off its time-bucket index: the loader finds the events stored there, a resume the held ones', async () => {
    const { emulators, dynamodb } = await emulatorsOfItsOwn();
    const prefix = uniqueName('before-one-index');
    const tableName = resourceNames(prefix).table;
    // The table as the version before created it: the time-bucket index and the tenant index.
    await createTableOfEarlierVersion(dynamodb, tableName, 'with-bucket-index');
    const target = await TopicConsumer.create(emulators.messagingEndpoint, 'target');
    const event = (id: string, payload: string, dueAt: number): ScheduledEvent => ({
      id,
      tenant: 'public',
      user: 'tests',
      target: target.topicArn,
      payload,
      dueAt,
      version: 1,
    });
    const dueAt = Date.now() + 9_000;
    const stored = event('m-stored-before-the-index', 'stored before', dueAt);
    const held = event('m-held-before', 'held before', Date.now() - 60_000);
    const put = (item: Record<string, unknown>) => dynamodb.send(new PutCommand({ TableName: tableName, Item: item }));
    // A stored event as the versions before the tenant index wrote it: under its due bucket (shard 0).
    await put(
      recordOfEarlierVersion(stored, 'scheduled', {
        [LEGACY_BUCKET_INDEX.partitionKey]: `${bucketOf(dueAt, { bucketSeconds: 60, shardCount: 1 })}#0`,
      }),
    );
    // A held event as the version before held it: in the time-bucket index, listed under its stored family, no expiry.
    const { expiresAt: _, ...heldRecord } = recordOfEarlierVersion(held, 'scheduled', {
      [LEGACY_BUCKET_INDEX.partitionKey]: 'held#public#0',
      [TABLE.tenantShardKey]: tenantShardKey('public', 's', 0),
    });
    await put({ ...heldRecord, state: EVENT_STATE.held, heldAt: Date.now() - 30_000, payloadKept: 'record' });
    // Paused, so that its held event stays held until the resume below.
    const pauses = new DynamoDbTenantPauses(dynamodb, tableName);
    await pauses.pause('public', { owner: 'operator', name: 'tests' }, { pausedAt: Date.now(), note: undefined });

    const scheduler = await startTestScheduler(emulators, { namePrefix: prefix, env: FAST_TIMINGS });
    try {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
      // The time-bucket index gone.
      expect((Table?.GlobalSecondaryIndexes ?? []).map(({ IndexName, IndexStatus }) => [IndexName, IndexStatus])).toEqual([
        [TABLE.tenantIndex, 'ACTIVE'],
      ]);
      const keys = (id: string) => indexKeysOf(dynamodb, tableName, id);
      expect(await keys(held.id)).toEqual([heldShardKey('public', 0), undefined]);
      // What a resume reads: the tenant's held partitions.
      const heldPage = await new DynamoDbDueIndex(dynamodb, tableName).page(
        heldShardKeys('public', scheduler.config.shardCount),
        undefined,
        100,
      );
      expect(heldPage.map(({ id }) => id)).toEqual([held.id]);
      // Under its tenant's stored partition, where the loader reads (a take leaves the key as it is).
      expect(await keys(stored.id)).toEqual([tenantShardKey('public', 's', 0), undefined]);

      await pauses.resume('public', { owner: 'operator', name: 'tests' }, Date.now());
      for (const { payload } of [held, stored]) {
        const [delivery] = await waitFor(() => target.withPayload(payload).length > 0 && target.withPayload(payload), payload, 30_000);
        expect(delivery?.receivedAt).toBeGreaterThanOrEqual(payload === stored.payload ? dueAt : held.dueAt);
      }
      expect(target.deliveries).toHaveLength(2);
      // Out of its held partition once sent, into its stored one.
      expect(await keys(held.id)).toEqual([tenantShardKey('public', 's', shardOf(held.id, scheduler.config)), undefined]);
    } finally {
      await target.stop();
      await scheduler.stop();
      dynamodb.destroy();
      await emulators.stop();
    }
  }, 120_000);

  it('takes a table of the version before the listing table off its registry index, and lists there every tenant it had', async () => {
    const { emulators, dynamodb } = await emulatorsOfItsOwn();
    const prefix = uniqueName('before-listing');
    const tableName = resourceNames(prefix).table;
    await createTableOfEarlierVersion(dynamodb, tableName, 'with-registry-index');
    const tenants = [
      { id: 'acme', accounts: ['111111111111'] },
      { id: 'globex', accounts: ['222222222222'] },
    ];
    // The registry as that version wrote it: entries with the index's keys, the index marked complete.
    for (const entry of tenants)
      await dynamodb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            [TABLE.partitionKey]: registryEntryId(entry.id),
            entry,
            [TABLE.tenantShardKey]: REGISTRY_KEY,
            [TABLE.dueAtKey]: 1,
            [REGISTRY_LISTING.partitionKey]: REGISTRY_KEY,
            [REGISTRY_LISTING.sortKey]: entry.id,
          },
        }),
      );
    await dynamodb.send(new PutCommand({ TableName: tableName, Item: { [TABLE.partitionKey]: '#registry-listed' } }));

    const scheduler = await startTestScheduler(emulators, { namePrefix: prefix, env: FAST_TIMINGS, tenants: { tenants } });
    try {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
      expect((Table?.GlobalSecondaryIndexes ?? []).map(({ IndexName }) => IndexName)).toEqual([TABLE.tenantIndex]);
      const registry = new DynamoDbTenantRegistry(dynamodb, tableName, systemClock);
      expect((await registry.page({ limit: 10 })).entries.map(({ id }) => id)).toEqual(['acme', 'globex']);
      expect((await registry.page({ prefix: 'g', limit: 10 })).entries.map(({ id }) => id)).toEqual(['globex']);
    } finally {
      await scheduler.stop();
      dynamodb.destroy();
      await emulators.stop();
    }
  }, 120_000);

  it('scripts/admin table migrate moves stored events while the old index stands, held ones once it is gone, and nothing more when run again', async () => {
    const dynamodb = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.dynamodbEndpoint }),
    );
    const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint });
    const directory = await mkdtemp(join(tmpdir(), 'table-migrate-'));
    /** The table as a version had it: with the time-bucket index (before the deploy), or without (after it). */
    const tableAt = async (stage: 'before-deploy' | 'after-deploy') => {
      const tableName = uniqueName(`migrate-${stage}`);
      await createTableOfEarlierVersion(dynamodb, tableName, stage === 'before-deploy' ? 'with-bucket-index' : 'without');
      const items = [
        { id: 'm-stored', tenant: 'acme', state: EVENT_STATE.scheduled, dueAt: 1, [LEGACY_BUCKET_INDEX.partitionKey]: '1780000020#3' },
        {
          id: 'm-held',
          tenant: 'acme',
          state: EVENT_STATE.held,
          dueAt: 2,
          [LEGACY_BUCKET_INDEX.partitionKey]: 'held#acme#5',
          tenantShard: 'acme#s5',
        },
        // Sent by a resume of this version, which no longer removes the old key.
        {
          id: 'm-sent',
          tenant: 'acme',
          state: EVENT_STATE.queued,
          dueAt: 3,
          [LEGACY_BUCKET_INDEX.partitionKey]: 'held#acme#1',
          tenantShard: 'acme#s1',
        },
      ];
      for (const Item of items) await dynamodb.send(new PutCommand({ TableName: tableName, Item }));
      const outputsFile = join(directory, `${tableName}.json`);
      const outputs = {
        region: LOCAL_REGION,
        endpoint: emulators.messagingEndpoint,
        dynamodbEndpoint: emulators.dynamodbEndpoint,
        tableName,
        // Read to tell that the local service runs: a queue of its own.
        ingestQueueUrl: (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('migrate-ingest') }))).QueueUrl,
        inputTopicArn: 'unused',
      };
      await writeFile(outputsFile, JSON.stringify(outputs));
      const migrate = async () => {
        const run = await admin('table', 'migrate', '--json', '--outputs', outputsFile);
        expect(run.stderr).toBe('');
        return JSON.parse(run.stdout) as Record<string, unknown>;
      };
      const keys = (id: string) => indexKeysOf(dynamodb, tableName, id);
      return { migrate, keys };
    };
    try {
      const before = await tableAt('before-deploy');
      expect(await before.migrate()).toMatchObject({
        scope: 'stored-events',
        found: 3,
        stored: 1,
        held: 0,
        cleared: 1,
        left: 1,
        skipped: 0,
      });
      expect(await before.keys('m-stored')).toEqual(['acme#s3', undefined]);
      // Where the version before, still deployed, resumes it.
      expect(await before.keys('m-held')).toEqual(['acme#s5', 'held#acme#5']);
      expect(await before.keys('m-sent')).toEqual(['acme#s1', undefined]);

      const after = await tableAt('after-deploy');
      expect(await after.migrate()).toMatchObject({ scope: 'all', found: 3, stored: 1, held: 1, cleared: 1, left: 0, skipped: 0 });
      expect(await after.keys('m-held')).toEqual([heldShardKey('acme', 5), undefined]);
      expect(await after.keys('m-sent')).toEqual(['acme#s1', undefined]);
      expect(await after.migrate()).toMatchObject({ found: 0 });
    } finally {
      dynamodb.destroy();
      sqs.destroy();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("moves the shared topic's subscription, on emulators an earlier version set up, from the tenants' ingest queue to its own", async () => {
    const prefix = uniqueName('upgraded');
    const access = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: emulators.messagingEndpoint };
    const sns = new SNSClient(access);
    const queueArn = async (scheduler: LocalScheduler, queueUrl: string) =>
      (await scheduler.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes
        ?.QueueArn ?? '';
    const subscriptions = async (topicArn: string) =>
      ((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }))).Subscriptions ?? []).map(({ Endpoint }) => Endpoint);
    try {
      const first = await startTestScheduler(emulators, { namePrefix: prefix });
      const { inputTopicArn } = first.outputs;
      const publicQueue = await queueArn(first, first.outputs.publicIngestQueueUrl);
      const tenantsQueue = await queueArn(first, first.outputs.ingestQueueUrl);
      await first.stop();
      // The earlier version's layout: the shared topic delivering to the one ingest queue.
      const [own] = ((await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: inputTopicArn }))).Subscriptions ?? []).filter(
        ({ Endpoint }) => Endpoint === publicQueue,
      );
      await sns.send(new UnsubscribeCommand({ SubscriptionArn: own?.SubscriptionArn }));
      await sns.send(new SubscribeCommand({ TopicArn: inputTopicArn, Protocol: 'sqs', Endpoint: tenantsQueue }));
      expect(await subscriptions(inputTopicArn)).toEqual([tenantsQueue]);

      const upgraded = await startTestScheduler(emulators, { namePrefix: prefix });
      await upgraded.stop();
      expect(await subscriptions(inputTopicArn)).toEqual([publicQueue]);
    } finally {
      sns.destroy();
    }
  });
});
