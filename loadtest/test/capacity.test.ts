import { DEFAULTS, LOADER_QUERIES_IN_FLIGHT, SETTING_RANGES, SNS_MAX_MESSAGE_BYTES } from '@adhoc-scheduler/shared';
import { LOADING_CONCURRENCY } from '@adhoc-scheduler/infra';
import { describe, expect, it } from 'vitest';
import { CAPACITY_USAGE, capacityLimits, parseCapacityCli, runCapacity } from '../src/capacity/command.js';
import { batchFill, costPerMillion, monthlyCost, registryReadsPerMillion, usagePerMillion } from '../src/capacity/cost.js';
import { limitsFor, type LimitsName } from '../src/capacity/limits.js';
import { MEASURED } from '../src/capacity/measured.js';
import {
  capacity,
  drain,
  eventSourceConcurrency,
  loaderQueriesPerTick,
  moveSeconds,
  TENANT_INDEX_WRITE_UNITS,
  type LoadProfile,
  type StageId,
} from '../src/capacity/model.js';
import { stackSettings } from '../src/capacity/settings.js';
import { PRICES } from '../src/cost/prices.js';

const QUIET: LoadProfile = {
  ratePerSecond: 0,
  spikeEvents: 0,
  spikeWidthSeconds: 1,
  spikePublishSeconds: 3600,
  farShare: 0,
  payloadBytes: 200,
  tenants: 0,
  labelsPerEvent: 0,
  openEvents: 0,
};
const SETTINGS = stackSettings({});
const AWS = limitsFor('aws', LOADING_CONCURRENCY, 256);
const stageOf = (profile: Partial<LoadProfile>, id: StageId, settings = SETTINGS) => {
  const found = capacity({ ...QUIET, ...profile }, settings, AWS).stages.find((stage) => stage.id === id);
  if (!found) throw new Error(`no stage ${id}`);
  return found;
};

describe('drain', () => {
  it('lets a spike out at the stage’s rate, each event late by when it leaves minus when it was due', () => {
    // 10,000 due evenly within a second, 2,000 out a second: the last leaves at 5 s, 4 s after it was due.
    const result = drain(10_000, 1, 0, () => 2000);
    expect(result.seconds).toBeCloseTo(5, 1);
    expect(result.maxLatenessSeconds).toBeCloseTo(4, 1);
    // The 9,900th leaves at 4.95 s and was due at 0.99 s.
    expect(result.p99LatenessSeconds).toBeCloseTo(3.96, 1);
  });

  it('makes nothing late when the stage takes more than arrives', () => {
    expect(drain(1000, 1, 0, () => 5000).maxLatenessSeconds).toBeLessThan(0.02);
  });

  it('gives the steady load its share first', () => {
    expect(drain(1000, 1, 1000, () => 2000).seconds).toBeCloseTo(1, 1);
    expect(drain(1000, 1, 1500, () => 2000).seconds).toBeCloseTo(2, 1);
  });

  it('follows a capacity that grows, and says when it never catches up', () => {
    // Capacity 1,000 + 1,000 t: out by T where 1,000 T + 500 T² = 4,000, T = 2.
    expect(moveSeconds(4000, (t) => 1000 + 1000 * t)).toBeCloseTo(2, 1);
    expect(drain(10, 1, 100, () => 100).seconds).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('an SQS event source', () => {
  it('starts with five batches, adds 300 a minute, and stops at its most', () => {
    expect(eventSourceConcurrency(0, 5, 300, 1000)).toBe(5);
    expect(eventSourceConcurrency(60, 5, 300, 1000)).toBe(305);
    expect(eventSourceConcurrency(600, 5, 300, 1000)).toBe(1000);
  });
});

describe('the stages', () => {
  it('ask SNS for the steady rate plus the spike spread over its width', () => {
    const sns = stageOf({ ratePerSecond: 100, spikeEvents: 60_000, spikeWidthSeconds: 2 }, 'sns-publish');
    expect(sns.demand).toBe(30_100);
    expect(sns.limit).toBe(30_000);
    expect(sns.load).toBeGreaterThan(1);
  });

  it('need a batch of 100 held for the lead and the publish per 100 events due within that time', () => {
    const held = MEASURED.emitterHoldSeconds + MEASURED.emitterBusySecondsPerBatch;
    // A spike narrower than the hold is held all at once: 100,000 events, 1,000 batches.
    expect(stageOf({ spikeEvents: 100_000 }, 'emitter-concurrency').demand).toBe(1000);
    // A steady 10,000 a second holds 10,000 × the hold time.
    expect(stageOf({ ratePerSecond: 10_000 }, 'emitter-concurrency').demand).toBe(Math.ceil((10_000 * held) / 100));
    expect(stageOf({ spikeEvents: 100_000 }, 'delay-queue-in-flight')).toMatchObject({ demand: 100_000, limit: 120_000 });
  });

  it('cap the emitter at emitterMaxConcurrency, its reservation, or what the account leaves', () => {
    expect(stageOf({}, 'emitter-concurrency').limit).toBe(1000);
    expect(stageOf({}, 'emitter-concurrency', stackSettings({ emitterMaxConcurrency: 50 })).limit).toBe(50);
    expect(stageOf({}, 'emitter-concurrency', stackSettings({}, { emitterReservedConcurrency: 300 })).limit).toBe(300);
  });

  it('cap the public tenant’s ingest at publicIngestMaxConcurrency batches of 100 taking a fifth of a second', () => {
    const ingest = stageOf({ ratePerSecond: 1000 }, 'ingest');
    expect(ingest.limit).toBeCloseTo((10 * 100) / MEASURED.ingestSecondsPerBatch);
    expect(MEASURED.ingestSecondsPerBatch).toBeCloseTo(0.21, 2);
  });

  it('write 3 units a near-path event (2 in the lean setting) and 4 a far one, 2 a label, and the counters per batch', () => {
    // At rest the writes are the ingest and the ends: 1,000 near events a second, 2 units at ingest (the record, its index entry) and 1 at the end.
    const near = stageOf({ ratePerSecond: 1000 }, 'table-throughput');
    expect(near.demand).toBeCloseTo(1000 * 2 + 1000 / 100 + 1000 * (1 + 1 / 100), 0);
    const labelled = stageOf({ ratePerSecond: 1000, labelsPerEvent: 2 }, 'table-throughput');
    expect(labelled.demand - near.demand).toBeCloseTo(1000 * 2 * 2, 0);
    expect(near.limit).toBe(4000);
    expect(stageOf({ ratePerSecond: 1000 }, 'table-throughput', stackSettings({}, { tableWarmWritesPerSecond: 20_000 })).limit).toBe(
      20_000,
    );
  });

  it('spread one tenant’s index writes over SCHEDULER_SHARD_COUNT partitions per family', () => {
    // 16,000 new stored events a second of one tenant, over 8 shards: 2,000 a partition.
    const stored = { ratePerSecond: 16_000, tenants: 1, farShare: 1 };
    const index = stageOf(stored, 'index-partition');
    expect(index.demand).toBe(2000);
    expect(index.load).toBe(2);
    expect(stageOf(stored, 'index-partition', stackSettings({ shardCount: 32 })).load).toBe(0.5);
    // Near-path events are in the index with SCHEDULER_INDEX_QUEUED_EVENTS (the default), modelled as a third write unit.
    expect(TENANT_INDEX_WRITE_UNITS.nearPath).toBe(3);
    expect(stageOf({ ratePerSecond: 16_000, tenants: 1 }, 'index-partition').demand).toBe(2000);
    const lean = stackSettings({}, { writeUnits: { nearPath: 2, farPath: 4, perLabel: 2 } });
    expect(stageOf({ ratePerSecond: 16_000, tenants: 1 }, 'index-partition', lean).demand).toBe(0);
  });

  it('query, each tick, the due directory and every shard of the tenants with events due under the tenant index, and the minute’s shards under the bucket index', () => {
    const busy = { tenants: 10_000, farShare: 0.5, ratePerSecond: 400 };
    // Every tenant with events stored for the loader, the worst case, unless told how many are active.
    expect(loaderQueriesPerTick(busy, { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 })).toBe(2 * (10_001 * 8 + 2));
    expect(loaderQueriesPerTick({ ...busy, activeTenants: 10 }, { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 })).toBe(
      2 * (10 * 8 + 2),
    );
    // With 10 active, 10,000 registered cost what 10 do; an idle stack reads its directory alone.
    expect(loaderQueriesPerTick({ ...busy, activeTenants: 10 }, { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 })).toBe(
      loaderQueriesPerTick({ ...busy, tenants: 10, activeTenants: 10 }, { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 }),
    );
    expect(
      loaderQueriesPerTick(
        { tenants: 100_000, farShare: 0, ratePerSecond: 0 },
        { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 },
      ),
    ).toBe(4);
    expect(loaderQueriesPerTick(busy, { index: 'bucket', shardCount: 8, loaderIntervalSeconds: 60 })).toBe(16);
    // No more tenants noted than events due in a tick: 100,000 registered, 12,000 stored events a minute.
    expect(loaderQueriesPerTick({ ...busy, tenants: 100_000 }, { index: 'tenant', shardCount: 8, loaderIntervalSeconds: 60 })).toBe(
      2 * (12_000 * 8 + 2),
    );
    const tick = stageOf(busy, 'loader-tick');
    expect(tick.demand).toBeGreaterThanOrEqual((2 * (10_001 * 8 + 2) * MEASURED.loaderQuerySeconds) / LOADER_QUERIES_IN_FLIGHT);
    expect(tick.limit).toBe(DEFAULTS.loaderTickBudgetSeconds);
  });

  it('count against the stack only the tenants of its CDK configuration: those added at runtime add nothing to it', () => {
    expect(stageOf({ tenants: 100_000 }, 'stack-resources').demand).toBe(stageOf({ tenants: 0 }, 'stack-resources').demand);
    expect(stageOf({ tenants: 100_000 }, 'stack-outputs').load).toBeLessThan(1);
    expect(stageOf({ tenants: 100, configuredTenants: 100 }, 'stack-resources').load).toBeLessThan(1);
    expect(stageOf({ tenants: 10_000, configuredTenants: 10_000 }, 'stack-resources').load).toBeGreaterThan(1);
  });

  it('count an input topic per tenant, and the scheduler’s own two, against the account’s SNS topics', () => {
    expect(stageOf({ tenants: 99_998 }, 'sns-topics').load).toBe(1);
    expect(stageOf({ tenants: 99_999 }, 'sns-topics').load).toBeGreaterThan(1);
  });

  it('read the public settings’ item once per half of the registry cache’s bound per function instance, far below one item’s reads', () => {
    const reads = stageOf({ ratePerSecond: 100_000, tenants: 100_000 }, 'registry-public-reads');
    // At most the account's 1,000 instances, each every 2.5 s.
    expect(reads.demand).toBe(400);
    expect(reads.load).toBeLessThan(0.2);
  });

  it('price the registry’s reads per event by what the batches name, and no more than the caches read again, whatever the tenants registered', () => {
    const few = usagePerMillion({ ...QUIET, ratePerSecond: 400, tenants: 10 }, SETTINGS, AWS).dynamodb.readUnits;
    const many = usagePerMillion({ ...QUIET, ratePerSecond: 400, tenants: 100_000, activeTenants: 11 }, SETTINGS, AWS).dynamodb.readUnits;
    expect(many).toBe(few);
    // 10 pollers, 23 items each, every 2.5 s, over 400 events a second: 0.23 reads an event.
    expect(registryReadsPerMillion({ ratePerSecond: 400, tenants: 10 }, [10, 10], 10)).toBeCloseTo(230_000);
    // Each event from a tenant of its own: every batch reads its tenants' items.
    expect(registryReadsPerMillion({ ratePerSecond: 400, tenants: 100_000 }, [10, 10], 10)).toBeCloseTo(4_200_000);
    expect(registryReadsPerMillion({ ratePerSecond: 0, tenants: 100_000 }, [10, 10], 10)).toBe(0);
  });

  it('name as first the stage nearest its limit', () => {
    const report = capacity({ ...QUIET, ratePerSecond: 100, spikeEvents: 1_000_000 }, SETTINGS, AWS);
    expect(report.first.load).toBe(Math.max(...report.stages.map((stage) => stage.load)));
    expect(report.first.id).toBe('emitter-ramp');
    // SNS's 30,000 a second then sets the pace: a million take over half a minute.
    expect(report.spike?.seconds).toBeGreaterThan(1_000_000 / 30_000);
    expect(report.spike?.seconds).toBeLessThan(60);
  });

  it('move a tick’s stored events through loading batches as the event source grows', () => {
    const report = capacity({ ...QUIET, spikeEvents: 100_000, spikeWidthSeconds: 60, farShare: 1 }, SETTINGS, AWS);
    expect(report.move.events).toBe(100_000);
    expect(report.move.slackSeconds).toBe(DEFAULTS.nearPathWindowSeconds - 2 * DEFAULTS.loaderIntervalSeconds);
    expect(report.move.latenessSeconds).toBe(0);
  });
});

describe('the stack’s settings', () => {
  it('are the config’s defaults, then the CDK context, then the command line', () => {
    expect(stackSettings({})).toMatchObject({ shardCount: 8, loaderLookaheadSeconds: 540, publicIngestMaxConcurrency: 10 });
    expect(stackSettings({ shardCount: 16, nearPathWindowSeconds: 300, emitterMaxConcurrency: '200' })).toMatchObject({
      shardCount: 16,
      loaderLookaheadSeconds: 240,
      emitterMaxConcurrency: 200,
    });
    expect(stackSettings({ shardCount: 16 }, { shardCount: 4 }).shardCount).toBe(4);
  });
});

describe('the cost per million events', () => {
  it('fills batches with the rate: a second’s window over the five pollers at rest', () => {
    expect(batchFill(100, 5, 100)).toBe(20);
    expect(batchFill(10_000, 5, 100)).toBe(100);
    expect(batchFill(1, 5, 100)).toBe(1);
  });

  it('prices the path’s write units and the counters per batch at the load test’s prices', () => {
    const usage = usagePerMillion({ ...QUIET, ratePerSecond: 10_000 }, SETTINGS, AWS);
    expect(usage.dynamodb.writeUnits).toBeCloseTo(1e6 * (3 + 2 / 100));
    // Full batches: a PublishBatch of 10 small events is one request.
    expect(usage.sns.billedRequests).toBeCloseTo(1e5);
    const cost = costPerMillion({ ...QUIET, ratePerSecond: 10_000 }, SETTINGS, AWS);
    expect(cost.lines.find((line) => line.item === 'DynamoDB writes')?.perMillionEvents).toBeCloseTo(
      3.02 * PRICES.dynamodb.perMillionWriteUnits,
    );
    // The far path writes one more unit than the near path, whose index entry it also writes: its take.
    const far = usagePerMillion({ ...QUIET, ratePerSecond: 10_000, farShare: 1 }, SETTINGS, AWS);
    expect(far.dynamodb.writeUnits - usage.dynamodb.writeUnits).toBeCloseTo(1e6);
  });

  it('bills 100 KB payloads by the 64 KiB chunk', () => {
    const small = usagePerMillion({ ...QUIET, ratePerSecond: 10_000 }, SETTINGS, AWS);
    const large = usagePerMillion({ ...QUIET, ratePerSecond: 10_000, payloadBytes: 102_400 }, SETTINGS, AWS);
    // Two entries fit a PublishBatch of 256 KiB, four chunks of 64 KiB: 2 requests an event, as measured (BENCHMARKS.md, $1.000).
    expect(large.sns.billedRequests / 1e6).toBeCloseTo(2);
    // Ten 100 KB messages in a SendMessageBatch are 16 chunks: 1.6 sends an event (measured: $0.651 per million, 1.63).
    expect(large.sqs.byOperation.SendMessageBatch?.billedRequests).toBeCloseTo(1.6e6);
    expect(small.sqs.byOperation.SendMessageBatch?.billedRequests).toBeCloseTo(1e5);
  });

  it('adds, a month, the loader’s queries, which grow with the tenants with events due times shards, not with those registered, and the open events’ storage', () => {
    const quiet = monthlyCost({ ...QUIET }, SETTINGS, AWS);
    const ticks = (30 * 24 * 3600) / 60;
    // An idle stack reads its due directory alone, however many tenants are registered.
    expect(monthlyCost({ ...QUIET, tenants: 100_000 }, SETTINGS, AWS).loaderQueries$).toBe(quiet.loaderQueries$);
    expect(quiet.loaderQueries$).toBeCloseTo((ticks * 2 * 2 * 0.5 * PRICES.dynamodb.perMillionReadUnits) / 1e6);
    const busy = monthlyCost({ ...QUIET, tenants: 10_000, ratePerSecond: 400, farShare: 0.5 }, SETTINGS, AWS);
    expect(busy.loaderQueries$).toBeCloseTo((ticks * 2 * (10_001 * 8 + 2) * 0.5 * PRICES.dynamodb.perMillionReadUnits) / 1e6);
    expect(monthlyCost({ ...QUIET, openEvents: 100_000_000 }, SETTINGS, AWS).storage$).toBeGreaterThan(20);
  });
});

/**
 * The check against this machine: the model with the local limits predicts what the load test
 * measured (BENCHMARKS.md, Results against the targets) within 30%.
 */
describe('the local limits', () => {
  const local = (name: LimitsName, profile: Partial<LoadProfile>, settings = SETTINGS) =>
    capacity({ ...QUIET, ...profile }, settings, limitsFor(name, LOADING_CONCURRENCY, 256));
  const within30 = (predicted: number, measured: number) => expect(Math.abs(predicted - measured) / measured).toBeLessThanOrEqual(0.3);

  it('predict the hotspot’s p99 lateness, 10,000 events due in one second (6.1 s in memory, 5.2 s on disk)', () => {
    const hotspot = { spikeEvents: 10_000, spikeWidthSeconds: 1 };
    within30(local('local-memory', hotspot).spike?.p99LatenessSeconds ?? 0, 6.1);
    within30(local('local-disk', hotspot).spike?.p99LatenessSeconds ?? 0, 5.2);
  });

  it('predict how long the far path moves 100,000 events due within a minute (64.6 s in memory, 81.2 s on disk)', () => {
    const far = { spikeEvents: 100_000, spikeWidthSeconds: 60, farShare: 1 };
    const settings = stackSettings({}, { nearPathWindowSeconds: 240, loaderIntervalSeconds: 90 });
    within30(local('local-memory', far, settings).move.seconds, 64.6);
    within30(local('local-disk', far, settings).move.seconds, 81.2);
  });
});

describe('loadtest capacity', () => {
  it('takes a load profile and the stack’s settings, and documents them', () => {
    const options = parseCapacityCli([
      '--spike',
      '1000000',
      '--rate',
      '50',
      '--far-share',
      '0.5',
      '--shards',
      '16',
      '--limits',
      'local-disk',
    ]);
    expect(options?.profile).toMatchObject({ spikeEvents: 1_000_000, ratePerSecond: 50, farShare: 0.5 });
    expect(options?.overrides.shardCount).toBe(16);
    expect(options?.limits).toBe('local-disk');
    expect(parseCapacityCli(['--help'])).toBeUndefined();
    for (const flag of [
      '--rate',
      '--spike',
      '--spike-width',
      '--far-share',
      '--payload-bytes',
      '--tenants',
      '--shards',
      '--emitter-max-concurrency',
      '--limits',
    ])
      expect(CAPACITY_USAGE).toContain(flag);
    expect(() => parseCapacityCli(['--limits', 'mars'])).toThrow(/--limits must be one of aws, local-memory, local-disk/);
    expect(() => parseCapacityCli(['--far-share', '2'])).toThrow(/--far-share/);
  });

  it('accepts the settings the service accepts, and no more', () => {
    const { shardCount, nearPathWindowSeconds } = SETTING_RANGES;
    expect(parseCapacityCli(['--shards', String(shardCount.max)])?.overrides.shardCount).toBe(shardCount.max);
    expect(() => parseCapacityCli(['--shards', String(shardCount.max + 1)])).toThrow(/--shards/);
    expect(() => parseCapacityCli(['--window', String(nearPathWindowSeconds.max + 1)])).toThrow(/--window/);
    expect(parseCapacityCli(['--payload-bytes', String(SNS_MAX_MESSAGE_BYTES)])?.profile.payloadBytes).toBe(SNS_MAX_MESSAGE_BYTES);
    expect(() => parseCapacityCli(['--payload-bytes', String(SNS_MAX_MESSAGE_BYTES + 1)])).toThrow(/--payload-bytes/);
  });

  it('prints the binding stage with the settings it ran with, and the cost', () => {
    const options = parseCapacityCli(['--spike', '1000000']);
    if (!options) throw new Error('no options');
    const output = runCapacity(options, { shardCount: 12 }, LOADING_CONCURRENCY);
    expect(output).toContain('Binds first: emitter event source scaling up (300 a minute) in time');
    expect(output).toContain('shardCount 12');
    expect(output).toMatch(/Spike: the last event out .* lateness p99/);
    expect(output).toMatch(/Cost: \$\d+\.\d\d per million events/);
  });

  it('takes the account’s raised quotas', () => {
    const limits = capacityLimits({ limits: 'aws', accountConcurrency: 10_000, snsPublishRate: 100_000 }, LOADING_CONCURRENCY);
    expect(limits.lambdaAccountConcurrency.value).toBe(10_000);
    expect(limits.snsPublishPerSecond.value).toBe(100_000);
  });
});
