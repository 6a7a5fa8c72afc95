import { describe, expect, it } from 'vitest';
import {
  END_COUNTS,
  LEGACY_BUCKET_INDEX,
  LEGACY_REGISTRY_INDEX,
  REGISTRY_LISTING,
  registryListingTableName,
  TABLE,
  TABLE_LAYOUT,
} from '../src/adapters/dynamodb-table.js';
import { eventIdFor } from '../src/domain/event.js';
import { shardOf } from '../src/domain/sharding.js';
import {
  bulkCancelJobId,
  dueDirectoryKey,
  PAUSE_MARKS_KEY,
  storedOrHeldPartition,
  clientEventId,
  endCountsItemId,
  eventIdOfLabelEntry,
  heldShardKey,
  heldShardKeys,
  isMessageEventId,
  isMessageSeriesId,
  isSeriesId,
  jobItemId,
  LAST_ERROR_ID_PREFIX,
  labelEntryId,
  labelShardKey,
  legacyBucketEntry,
  labelShardKeys,
  lastErrorItemId,
  listingPartitions,
  LOADER_CURSOR_ID,
  messageEventId,
  noticeId,
  occurrenceId,
  openEventsCounterId,
  payloadItemId,
  refusalCounterId,
  refusalSlotId,
  resumeJobId,
  seriesId,
  tenantShardKey,
  tenantShardKeys,
} from '../src/domain/table-keys.js';

// Deployed tables hold these: each shape is pinned to a literal, so that a change to one is seen here.

describe('the ids the scheduler makes', () => {
  it('names events, jobs and notices by their prefixes', () => {
    expect(messageEventId('4f1c')).toBe('m-4f1c');
    expect(clientEventId('ab12')).toBe('c-ab12');
    expect(bulkCancelJobId('4f1c')).toBe('b-4f1c');
    expect(resumeJobId('4f1c')).toBe('r-4f1c');
    expect(noticeId('4f1c')).toBe('n-4f1c');
    expect(noticeId(bulkCancelJobId('4f1c'))).toBe('n-b-4f1c');
  });

  it('derives an event id from the input message, or from the tenant (and the public tenant user) and the client id', () => {
    expect(eventIdFor('acme', 'alice', undefined, '4f1c')).toBe('m-4f1c');
    expect(eventIdFor('acme', 'alice', 'order-1', '4f1c')).toBe('c-af5f4f1841e88ebcae502028d51c062c1259dc62');
    expect(eventIdFor('public', 'alice', 'order-1', '4f1c')).toBe('c-5a69b6b78df7782b0f7ca59494c4ff133fd80953');
  });

  it('names a series after the event id its request would have, and each occurrence after the series and its due time', () => {
    expect(seriesId('m-4f1c')).toBe('s-m-4f1c');
    expect(seriesId(eventIdFor('acme', 'alice', 'order-1', '4f1c'))).toBe('s-c-af5f4f1841e88ebcae502028d51c062c1259dc62');
    expect(occurrenceId('s-m-4f1c', 1_767_225_600_250)).toBe('o-00f630a1a44ada61695af239dde2249f-1767225600250');
    expect(isSeriesId('s-m-4f1c')).toBe(true);
    expect(isSeriesId('m-4f1c')).toBe(false);
    expect(isMessageSeriesId('s-m-4f1c')).toBe(true);
    expect(isMessageSeriesId('s-c-ab12')).toBe(false);
  });

  it('tells an event named by its input message', () => {
    expect(isMessageEventId('m-4f1c')).toBe(true);
    expect(isMessageEventId('c-ab12')).toBe(false);
  });
});

describe('the items of the table', () => {
  it('keys each kind of item by its shape', () => {
    expect(payloadItemId({ id: 'm-1', requestHash: 'h1' })).toBe('p#m-1#h1');
    expect(payloadItemId({ id: 'm-1', requestHash: undefined })).toBe('p#m-1');
    expect(labelEntryId('m-1', 'billing')).toBe('l#m-1#billing');
    expect(eventIdOfLabelEntry('l#m-1#billing')).toBe('m-1');
    expect(jobItemId('b-4f1c')).toBe('j#b-4f1c');
    expect(LAST_ERROR_ID_PREFIX).toBe('e#');
    expect(lastErrorItemId('9a7e')).toBe('e#9a7e');
    expect(openEventsCounterId('acme')).toBe('#tenant#acme');
    expect(endCountsItemId('acme', 1_780_000_059_999)).toBe('#ends#acme#1780000059');
    expect(LOADER_CURSOR_ID).toBe('#loader-cursor');
    expect(refusalCounterId('acme')).toBe('r#acme');
    expect(refusalSlotId('acme', 7)).toBe('r#acme#7');
  });
});

describe('the partitions of the indexes', () => {
  it('keys each partition by its shape', () => {
    expect(tenantShardKey('acme', 's', 3)).toBe('acme#s3');
    expect(tenantShardKey('acme', 'q', 3)).toBe('acme#q3');
    expect(labelShardKey('acme', 'billing', 3)).toBe('acme#l#billing#3');
    expect(heldShardKey('acme', 3)).toBe('acme#h3');
  });

  it("reads the tenant and family of a tenant's stored or held partition, and no other key's, for the due directory's backfill", () => {
    expect(storedOrHeldPartition(tenantShardKey('acme', 's', 3))).toEqual({ tenant: 'acme', family: 's' });
    expect(storedOrHeldPartition(heldShardKey('acme', 12))).toEqual({ tenant: 'acme', family: 'h' });
    expect(storedOrHeldPartition(tenantShardKey('acme', 'q', 3))).toBeUndefined();
    expect(storedOrHeldPartition(labelShardKey('acme', 'billing', 3))).toBeUndefined();
    expect(storedOrHeldPartition(dueDirectoryKey(1_900_000_000_000))).toBeUndefined();
    expect(storedOrHeldPartition(PAUSE_MARKS_KEY)).toBeUndefined();
  });

  it('reads the shard of the keys of the time-bucket index earlier versions kept, for the migration', () => {
    expect(legacyBucketEntry('held#acme#3')).toEqual({ held: true, shard: 3 });
    expect(legacyBucketEntry('1780000020#3')).toEqual({ held: false, shard: 3 });
    for (const other of ['acme#s3', 'acme#h3', 'held#acme', '1780000020#', 'held#a#b#3']) expect(legacyBucketEntry(other)).toBeUndefined();
  });

  it('places an event in the shard its id hashes to', () => {
    expect(shardOf('m-1', { shardCount: 8 })).toBe(2);
  });

  it('lists every shard of a family, in shard order', () => {
    expect(tenantShardKeys('acme', 's', 2)).toEqual(['acme#s0', 'acme#s1']);
    expect(labelShardKeys('acme', 'billing', 2)).toEqual(['acme#l#billing#0', 'acme#l#billing#1']);
    expect(heldShardKeys('acme', 2)).toEqual(['acme#h0', 'acme#h1']);
    expect(listingPartitions('acme', undefined, 2)).toEqual(['acme#s0', 'acme#q0', 'acme#h0', 'acme#s1', 'acme#q1', 'acme#h1']);
    expect(listingPartitions('acme', 'billing', 2)).toEqual(['acme#l#billing#0', 'acme#l#billing#1']);
  });
});

describe('the attributes and indexes', () => {
  it('names them as deployed tables have them', () => {
    expect(TABLE).toEqual({
      partitionKey: 'id',
      tenantIndex: 'byTenantDue',
      tenantShardKey: 'tenantShard',
      dueAtKey: 'dueAt',
      ttlAttribute: 'expiresAt',
    });
    expect(TABLE_LAYOUT.indexes.map((index) => [index.name, index.partitionKey.name, index.sortKey.name])).toEqual([
      ['byTenantDue', 'tenantShard', 'dueAt'],
    ]);
    expect(REGISTRY_LISTING).toEqual({ partitionKey: 'registryList', sortKey: 'registryId', tableSuffix: '-registry' });
    expect(registryListingTableName('scheduler-events')).toBe('scheduler-events-registry');
    expect(LEGACY_BUCKET_INDEX).toEqual({ name: 'byDueBucket', partitionKey: 'bucketShard' });
    expect(LEGACY_REGISTRY_INDEX).toBe('byRegistryId');
    expect([END_COUNTS.emitted, END_COUNTS.failed, END_COUNTS.lateness(3)]).toEqual(['emitted', 'failed', 'late3']);
  });
});
