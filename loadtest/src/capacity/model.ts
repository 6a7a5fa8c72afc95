import { STACK_COUNTS } from '@adhoc-scheduler/infra';
import { DEFAULTS, LOADER_QUERIES_IN_FLIGHT } from '@adhoc-scheduler/shared';
import type { Limits } from './limits.js';
import { MEASURED } from './measured.js';

/**
 * How far one stack goes: each stage of an event's path, its demand under a load profile against
 * the limit it meets, the first stage to bind and the lateness that follows. Pure arithmetic on
 * the profile, the stack's settings and the limits (./limits.ts) and measured costs
 * (./measured.ts); docs/operators/capacity.md explains each stage.
 */

/** The load an operator plans for. */
export interface LoadProfile {
  /** Events coming due each second, steadily (and created at the same rate). */
  readonly ratePerSecond: number;
  /** Events due together on top of the steady load (one tenant's, the worst case), within `spikeWidthSeconds`. */
  readonly spikeEvents: number;
  readonly spikeWidthSeconds: number;
  /** Over how long the spike's events are published, before they are due. */
  readonly spikePublishSeconds: number;
  /** Share of events stored for the loader (due beyond the near-path window when published). */
  readonly farShare: number;
  readonly payloadBytes: number;
  /** Registered tenants (0: every event is the public tenant's, through its capped queue). */
  readonly tenants: number;
  /**
   * Of them, those kept in the CDK app's configuration, whose topics the stack makes (the rest are
   * added at runtime by scripts/admin tenant add, and add nothing to the stack). Undefined: none.
   */
  readonly configuredTenants?: number | undefined;
  /**
   * Tenants with stored events due in a loader tick's range, the public one included: those whose
   * shards a tick reads (the due directory's). Undefined: every registered tenant and the public
   * one whenever events are stored for the loader, the worst case.
   */
  readonly activeTenants?: number | undefined;
  readonly labelsPerEvent: number;
  /** Events stored and waiting at once. */
  readonly openEvents: number;
}

/** DynamoDB write units an event costs, without the quota counters (written per batch). */
export interface WriteUnits {
  readonly nearPath: number;
  readonly farPath: number;
  readonly perLabel: number;
}

/** A near-path event's record and its end: what it writes without its tenant-index entry (SCHEDULER_INDEX_QUEUED_EVENTS=false). */
export const UNINDEXED_NEAR_PATH_WRITE_UNITS = 2;

/**
 * The tenant index (docs/design.md's data model), as the scheduler's defaults write it: a
 * near-path event writes its record, its index entry (SCHEDULER_INDEX_QUEUED_EVENTS, on by
 * default) and its end; a far-path event its record, its index entry, the take and the end; each
 * label an entry and that entry's index.
 */
export const TENANT_INDEX_WRITE_UNITS: WriteUnits = {
  nearPath: UNINDEXED_NEAR_PATH_WRITE_UNITS + (DEFAULTS.indexQueuedEvents ? 1 : 0),
  farPath: 4,
  perLabel: 2,
};

export interface StackSettings {
  readonly shardCount: number;
  readonly nearPathWindowSeconds: number;
  readonly loaderIntervalSeconds: number;
  readonly loaderLookaheadSeconds: number;
  readonly loaderTickBudgetSeconds: number;
  readonly loadingChunkSize: number;
  readonly emitterMaxConcurrency: number | undefined;
  readonly emitterReservedConcurrency: number | undefined;
  readonly publicIngestMaxConcurrency: number;
  /** Write units a second the table takes at once (its warm throughput), when set; a new table's otherwise. */
  readonly tableWarmWritesPerSecond: number | undefined;
  /** Which index the loader reads: one partition family per tenant, or one per due minute. */
  readonly index: 'tenant' | 'bucket';
  readonly writeUnits: WriteUnits;
  readonly tenantMaxIngestPerSecond: number;
  readonly tenantMaxOpenEvents: number;
  /** Events an ingest or emitter invocation takes at most; ids a loading message carries times messages an invocation takes. */
  readonly ingestBatch: number;
  readonly emitterBatch: number;
  readonly loadingMessagesPerBatch: number;
}

export type StageId =
  | 'sns-publish'
  | 'emitter-concurrency'
  | 'emitter-ramp'
  | 'delay-queue-in-flight'
  | 'account-concurrency'
  | 'ingest'
  | 'tenant-ingest-quota'
  | 'tenant-open-quota'
  | 'table-throughput'
  | 'table-quota'
  | 'tenant-counter'
  | 'index-partition'
  | 'loader-tick'
  | 'loading-move'
  | 'stack-resources'
  | 'stack-outputs'
  | 'sns-topics'
  | 'registry-public-reads'
  | 'local-emit'
  | 'local-move';

/** One limit on the path, under the profile. */
export interface Stage {
  readonly id: StageId;
  readonly name: string;
  readonly demand: number;
  readonly limit: number;
  readonly unit: string;
  /** Demand over limit: above 1 it binds. */
  readonly load: number;
  /** What a user sees once it binds: late, throttled or refused. */
  readonly whenBound: string;
  /** The setting or request that lifts it. */
  readonly lift: string;
  /** What warns before it binds. */
  readonly alarm: string;
  readonly source: string;
}

export interface Drain {
  /** Seconds after the first event's due time until the last is out. */
  readonly seconds: number;
  readonly p99LatenessSeconds: number;
  readonly maxLatenessSeconds: number;
}

export interface CapacityReport {
  readonly stages: readonly Stage[];
  /** The stage closest to its limit: the first to bind as the load grows (bound already when its load is above 1). */
  readonly first: Stage;
  /** How the spike leaves the emitter (undefined without a spike). */
  readonly spike: Drain | undefined;
  /** How one loader tick's events reach the delay queue. */
  readonly move: { readonly events: number; readonly seconds: number; readonly slackSeconds: number; readonly latenessSeconds: number };
  /** What the emitter can publish at most, events a second, and the concurrency a steady load keeps. */
  readonly emitPerSecond: number;
  readonly emitterConcurrencyAtRest: number;
}

/** Seconds of simulated time per step: fine for a one-second spike, coarser once it has lasted a minute, and an hour. */
const stepAt = (t: number): number => (t < 60 ? 0.01 : t < 3600 ? 0.1 : 1);
/** A drain longer than a day is reported as such: the load does not fit. */
const MAX_DRAIN_SECONDS = 86_400;

/**
 * How N events due evenly within `widthSeconds` leave a stage whose capacity (events a second,
 * at t seconds after the first due time) may grow, first come first served, while a steady load
 * takes its share first. Lateness of an event: when it leaves minus when it was due.
 */
export function drain(events: number, widthSeconds: number, steadyPerSecond: number, capacityAt: (t: number) => number): Drain {
  if (events <= 0) return { seconds: 0, p99LatenessSeconds: 0, maxLatenessSeconds: 0 };
  const width = Math.max(stepAt(0), widthSeconds);
  const p99Index = events * 0.99;
  let out = 0;
  let p99Out: number | undefined;
  for (let t = 0; t < MAX_DRAIN_SECONDS; ) {
    const step = stepAt(t);
    const now = t + step;
    const arrived = Math.min(events, (events * now) / width);
    const room = Math.max(0, capacityAt(t) - steadyPerSecond) * step;
    out = Math.min(arrived, out + room);
    if (p99Out === undefined && out >= p99Index) p99Out = now;
    if (out >= events) {
      // Event k is due at k/N of the width.
      return {
        seconds: now,
        p99LatenessSeconds: Math.max(0, (p99Out ?? now) - 0.99 * width),
        maxLatenessSeconds: Math.max(0, now - width),
      };
    }
    t = now;
  }
  return { seconds: Number.POSITIVE_INFINITY, p99LatenessSeconds: Number.POSITIVE_INFINITY, maxLatenessSeconds: Number.POSITIVE_INFINITY };
}

/** Seconds to move N events through a stage whose capacity grows with time (all of them ready at once). */
export function moveSeconds(events: number, capacityAt: (t: number) => number): number {
  return drain(events, 0, 0, capacityAt).seconds;
}

/** Concurrency of an SQS event source t seconds after a backlog appears: its start, growing each minute, up to its most. */
export function eventSourceConcurrency(t: number, start: number, rampPerMinute: number, most: number): number {
  return Math.min(most, start + (rampPerMinute / 60) * t);
}

/** Seconds an emitter invocation holds its batch: the lead it waits out, then its publishes and ends. */
function emitterSecondsPerBatch(): number {
  return MEASURED.emitterHoldSeconds + MEASURED.emitterBusySecondsPerBatch;
}

/** The scheduler's own topics in its account: the shared input topic and the alarm topic. */
export const SCHEDULER_OWN_TOPICS = 2;

/**
 * Reads a second of one registry item (a tenant's entry, an account's owners, the public
 * settings) by `instances` function instances that each keep seeing it: each reads it again once
 * it is older than half the cache's bound (shared/src/app/tenant-cache.ts), answered from memory meanwhile.
 */
export function registryItemReadsPerSecond(instances: number): number {
  return instances / (DEFAULTS.registryMaxAgeMs / 2 / 1000);
}

function stage(fields: Omit<Stage, 'load'>): Stage {
  const load = fields.limit === Number.POSITIVE_INFINITY ? 0 : fields.limit <= 0 ? Number.POSITIVE_INFINITY : fields.demand / fields.limit;
  return { ...fields, load };
}

export function capacity(profile: LoadProfile, settings: StackSettings, limits: Limits): CapacityReport {
  const { ratePerSecond: rate, spikeEvents, farShare } = profile;
  const configured = profile.configuredTenants ?? 0;
  const busiestShare = 1 / Math.max(1, profile.tenants);
  const spikeIngestPerSecond = profile.spikePublishSeconds > 0 ? spikeEvents / profile.spikePublishSeconds : 0;
  const ingestPerSecond = rate + spikeIngestPerSecond;
  const busiestIngestPerSecond = rate * busiestShare + spikeIngestPerSecond;
  const peakDuePerSecond = rate + spikeEvents / Math.max(1, profile.spikeWidthSeconds);

  // The emitter: the batches held at once to publish every event on time, against what Lambda gives.
  const batchSeconds = emitterSecondsPerBatch();
  const steadyConcurrency = Math.ceil((rate * batchSeconds) / settings.emitterBatch);
  const heldAtPeak = rate * batchSeconds + spikeEvents * Math.min(1, batchSeconds / Math.max(1, profile.spikeWidthSeconds));
  const emitterNeeded = Math.ceil(heldAtPeak / settings.emitterBatch);
  const atRest = Math.max(limits.eventSourceStart.value, steadyConcurrency);
  const ingestConcurrency = Math.ceil((ingestPerSecond * MEASURED.ingestSecondsPerBatch) / settings.ingestBatch);

  // The loader's tick, and the loading batches that move what it finds into the delay queue.
  const tickEvents = farShare * (rate * settings.loaderIntervalSeconds + spikeEvents);
  const slackSeconds = settings.loaderLookaheadSeconds - settings.loaderIntervalSeconds;
  const eventsPerLoadingBatch = settings.loadingChunkSize * settings.loadingMessagesPerBatch;
  const loadingBatchSeconds = eventsPerLoadingBatch * MEASURED.loadingSecondsPerEvent;
  const loadingNeeded = Math.ceil((tickEvents * MEASURED.loadingSecondsPerEvent) / Math.max(1, slackSeconds));
  const otherConcurrency = ingestConcurrency + Math.min(limits.eventSourceMax.value, loadingNeeded);
  const emitterMost = Math.min(
    settings.emitterMaxConcurrency ?? limits.eventSourceMax.value,
    settings.emitterReservedConcurrency ?? Math.max(0, limits.lambdaAccountConcurrency.value - otherConcurrency),
    Math.floor(limits.sqsInFlightPerQueue.value / settings.emitterBatch),
  );
  // What the event source reaches by the time the spike's last events are due: it scales from when the first become visible.
  const reachedBySpikeEnd = Math.min(
    emitterMost,
    atRest + (limits.eventSourceRampPerMinute.value / 60) * (batchSeconds + profile.spikeWidthSeconds),
  );

  const tableWrites = Math.min(
    settings.tableWarmWritesPerSecond ?? limits.newTableWritesPerSecond.value,
    limits.tableWritesPerSecond.value,
  );
  const local = limits.localEmitPerSecond !== undefined;
  // The event source sees the spike's messages when they become visible, the hold time before they are due, and scales from then.
  const emitCapacityAt = (t: number): number =>
    local
      ? (limits.localEmitPerSecond?.value ?? 0)
      : Math.min(
          limits.snsPublishPerSecond.value,
          (eventSourceConcurrency(t + MEASURED.emitterHoldSeconds, atRest, limits.eventSourceRampPerMinute.value, emitterMost) *
            settings.emitterBatch) /
            MEASURED.emitterBusySecondsPerBatch,
        );
  const emitPerSecond = local
    ? (limits.localEmitPerSecond?.value ?? 0)
    : Math.min(limits.snsPublishPerSecond.value, (emitterMost * settings.emitterBatch) / MEASURED.emitterBusySecondsPerBatch);
  const spike = spikeEvents > 0 ? drain(spikeEvents, profile.spikeWidthSeconds, rate, emitCapacityAt) : undefined;

  const moveCapacityAt = (t: number): number =>
    local
      ? (limits.localMovePerSecond?.value ?? 0)
      : Math.min(
          tableWrites,
          (eventSourceConcurrency(t, limits.eventSourceStart.value, limits.eventSourceRampPerMinute.value, limits.eventSourceMax.value) *
            eventsPerLoadingBatch) /
            loadingBatchSeconds,
        );
  const tickSeconds = loaderTickSeconds(profile, settings, tickEvents);
  const moved = Math.max(tickSeconds, moveSeconds(tickEvents, moveCapacityAt));
  const move = { events: tickEvents, seconds: moved, slackSeconds, latenessSeconds: Math.max(0, moved - slackSeconds) };

  // DynamoDB: what the busiest phase writes a second, the spike's ends or its move.
  const units = settings.writeUnits;
  const ingestWrites =
    ingestPerSecond * ((1 - farShare) * (units.nearPath - 1) + farShare * (units.farPath - 2)) +
    ingestPerSecond * profile.labelsPerEvent * units.perLabel * (settings.index === 'tenant' ? 1 : 0) +
    ingestPerSecond / settings.ingestBatch;
  const emitRate = Math.min(peakDuePerSecond, emitPerSecond);
  const endWrites = emitRate * (1 + 1 / settings.emitterBatch);
  const takeWrites = tickEvents > 0 ? tickEvents / moved : 0;
  const peakWrites = ingestWrites + Math.max(endWrites + rate * farShare, takeWrites + rate);

  const busiestEmitPerSecond = rate * busiestShare + (spikeEvents > 0 ? Math.max(0, emitRate - rate) : 0);
  const counterWrites = busiestIngestPerSecond / settings.ingestBatch + busiestEmitPerSecond / settings.emitterBatch;
  // A near-path event is in the tenant index when its path writes a unit more than its record and
  // its end (`--near-write-units 3`, the default: SCHEDULER_INDEX_QUEUED_EVENTS on); stored events always.
  const nearIndexed = units.nearPath > UNINDEXED_NEAR_PATH_WRITE_UNITS;
  const indexPartitionWrites =
    settings.index === 'tenant'
      ? Math.max(
          busiestIngestPerSecond * Math.max(farShare, nearIndexed ? 1 - farShare : 0),
          profile.labelsPerEvent > 0 ? busiestIngestPerSecond : 0,
        ) / settings.shardCount
      : (farShare * ingestPerSecond) / settings.shardCount;

  const busiestOpen = profile.openEvents * busiestShare + spikeEvents;
  const ingestMost = profile.tenants === 0 ? settings.publicIngestMaxConcurrency : limits.eventSourceMax.value;

  const stages: Stage[] = [];
  if (local) {
    stages.push(
      stage({
        id: 'local-emit',
        name: 'emitter publishes through fauxqs (one machine)',
        demand: peakDuePerSecond,
        limit: limits.localEmitPerSecond?.value ?? 0,
        unit: 'events/s',
        whenBound: 'late: publishes queue behind the emulator',
        lift: 'a faster machine, or AWS',
        alarm: 'lateness in the load test report',
        source: limits.localEmitPerSecond?.source ?? '',
      }),
      stage({
        id: 'local-move',
        name: 'loading moves a tick’s events (one machine)',
        demand: move.seconds,
        limit: slackSeconds,
        unit: 's',
        whenBound: 'late: the tick’s first events are due before they are moved',
        lift: 'SCHEDULER_LOADER_LOOKAHEAD_SECONDS (with the near-path window)',
        alarm: 'loader ticks in the load test report',
        source: limits.localMovePerSecond?.source ?? '',
      }),
    );
    return report(stages, spike, move, emitPerSecond, atRest);
  }

  stages.push(
    stage({
      id: 'sns-publish',
      name: 'SNS publishes to targets (account, region)',
      demand: peakDuePerSecond,
      limit: limits.snsPublishPerSecond.value,
      unit: 'messages/s',
      whenBound: 'late: throttled publishes are put back with a growing delay',
      lift: 'a higher SNS Publish quota for the region (Service Quotas)',
      alarm: 'EmitLatenessAlarm; PublishRetries on the dashboard',
      source: limits.snsPublishPerSecond.source,
    }),
    stage({
      id: 'emitter-concurrency',
      name: 'emitter batches held at once',
      demand: emitterNeeded,
      limit: emitterMost,
      unit: 'invocations',
      whenBound: 'late: batches wait for a free invocation',
      lift: 'emitterMaxConcurrency, emitterReservedConcurrency, the account’s concurrency quota',
      alarm: 'EmitterThrottlesAlarm, AccountConcurrencyAlarm, DelayQueueInFlightAlarm',
      source: `${limits.eventSourceMax.source}; ${MEASURED.emitterHoldSeconds} s held + ${MEASURED.emitterBusySecondsPerBatch} s busy a batch`,
    }),
    stage({
      id: 'emitter-ramp',
      name: 'emitter event source scaling up (300 a minute) in time',
      demand: emitterNeeded,
      limit: Math.floor(reachedBySpikeEnd),
      unit: 'invocations',
      whenBound: 'late: the event source scales up while the spike waits',
      lift: 'a steady load that keeps pollers up; provisioned mode (minimum pollers) on the event source',
      alarm: 'EmitLatenessAlarm',
      source: `${limits.eventSourceStart.source}; ${limits.eventSourceRampPerMinute.source}`,
    }),
    stage({
      id: 'delay-queue-in-flight',
      name: 'delay queue: messages received, not yet deleted',
      demand: heldAtPeak,
      limit: limits.sqsInFlightPerQueue.value,
      unit: 'messages',
      whenBound: 'late: receives return nothing until emitters delete',
      lift: 'a support request for the queue’s in-flight quota',
      alarm: 'DelayQueueInFlightAlarm',
      source: limits.sqsInFlightPerQueue.source,
    }),
    stage({
      id: 'account-concurrency',
      name: 'Lambda concurrency of the account (all functions)',
      demand: emitterNeeded + otherConcurrency,
      limit: limits.lambdaAccountConcurrency.value,
      unit: 'invocations',
      whenBound: 'late: throttled invocations are retried by their event sources',
      lift: 'a higher concurrency quota (Service Quotas)',
      alarm: 'AccountConcurrencyAlarm; each function’s ThrottlesAlarm',
      source: limits.lambdaAccountConcurrency.source,
    }),
    stage({
      id: 'ingest',
      name: profile.tenants === 0 ? 'ingest of the public tenant’s queue' : 'ingest of the tenants’ queue',
      demand: ingestPerSecond,
      limit: (ingestMost * settings.ingestBatch) / MEASURED.ingestSecondsPerBatch,
      unit: 'events/s',
      whenBound: 'late: requests wait in the ingest queue; near-path events due sooner than the wait are late',
      lift: profile.tenants === 0 ? 'publicIngestMaxConcurrency' : 'the account’s concurrency quota',
      alarm: 'the dashboard’s ingest queues: requests waiting and the oldest one’s age',
      source: `${MEASURED.ingestSecondsPerBatch.toFixed(2)} s an ingest batch of ${settings.ingestBatch} (BENCHMARKS.md, Lambda ingest duration)`,
    }),
    stage({
      id: 'tenant-ingest-quota',
      name: 'one tenant’s new events a second (its quota)',
      demand: busiestIngestPerSecond,
      limit: settings.tenantMaxIngestPerSecond,
      unit: 'events/s',
      whenBound: 'refused: QUOTA_EXCEEDED on the failure topic',
      lift: 'the tenant’s maxIngestPerSecond in the registry',
      alarm: 'the dashboard’s refused requests by reason',
      source: 'shared/src/domain/tenants.ts DEFAULT_QUOTAS',
    }),
    stage({
      id: 'tenant-open-quota',
      name: 'one tenant’s open events (its quota)',
      demand: busiestOpen,
      limit: settings.tenantMaxOpenEvents,
      unit: 'events',
      whenBound: 'refused: QUOTA_EXCEEDED on the failure topic',
      lift: 'the tenant’s maxOpenEvents in the registry',
      alarm: 'the dashboard’s refused requests by reason',
      source: 'shared/src/domain/tenants.ts DEFAULT_QUOTAS',
    }),
    stage({
      id: 'table-throughput',
      name:
        settings.tableWarmWritesPerSecond === undefined ? 'table writes: a new table’s throughput' : 'table writes: its warm throughput',
      demand: peakWrites,
      limit: Math.min(settings.tableWarmWritesPerSecond ?? limits.newTableWritesPerSecond.value, limits.tableWritesPerSecond.value),
      unit: 'write units/s',
      whenBound: 'throttled: the SDK retries; ends are handed over and recorded later; ingest slows',
      lift: 'the table’s warm throughput (update-table --warm-throughput), or a previous peak this high',
      alarm: 'TableWriteThrottlesAlarm',
      source: limits.newTableWritesPerSecond.source,
    }),
    stage({
      id: 'table-quota',
      name: 'table writes: the per-table quota',
      demand: peakWrites,
      limit: limits.tableWritesPerSecond.value,
      unit: 'write units/s',
      whenBound: 'throttled, as above',
      lift: 'a higher table-level quota (Service Quotas)',
      alarm: 'TableWriteThrottlesAlarm',
      source: limits.tableWritesPerSecond.source,
    }),
    stage({
      id: 'tenant-counter',
      name: 'one tenant’s quota counter (one item)',
      demand: counterWrites,
      limit: limits.partitionWritesPerSecond.value,
      unit: 'writes/s',
      whenBound: 'throttled: the batches that count retry',
      lift: 'fuller batches (the event sources’ batching windows); not adjustable',
      alarm: 'TableWriteThrottlesAlarm',
      source: limits.partitionWritesPerSecond.source,
    }),
    stage({
      id: 'index-partition',
      name:
        settings.index === 'tenant'
          ? 'index: one tenant’s busiest partition (of SCHEDULER_SHARD_COUNT per family)'
          : 'index: one due minute’s busiest shard',
      demand: indexPartitionWrites,
      limit: limits.partitionWritesPerSecond.value,
      unit: 'write units/s',
      whenBound: 'throttled: the index holds back writes to the table, so ingest slows',
      lift: 'shardCount',
      alarm: 'TableWriteThrottlesAlarm (the index’s throttles count there)',
      source: limits.partitionWritesPerSecond.source,
    }),
    stage({
      id: 'loader-tick',
      name: 'loader tick: queries and chunks',
      demand: tickSeconds,
      limit: settings.loaderTickBudgetSeconds,
      unit: 's',
      whenBound: 'late: the next tick goes on from the cursor',
      lift: 'loaderTickBudgetSeconds; shardCount (queries per tenant); fewer tenants per stack',
      alarm: 'LoaderBacklogAlarm',
      source: `${MEASURED.loaderQuerySeconds * 1000} ms a query, ${LOADER_QUERIES_IN_FLIGHT} in flight; 3.7 s a tick per 100,000 events (BENCHMARKS.md, far path)`,
    }),
    stage({
      id: 'loading-move',
      name: 'loading: a tick’s events into the delay queue',
      demand: move.seconds,
      limit: slackSeconds,
      unit: 's',
      whenBound: 'late: the tick’s first events come due before they are moved',
      lift: 'loaderLookaheadSeconds (with nearPathWindowSeconds); the table’s warm throughput',
      alarm: 'EmitLatenessAlarm; LoaderBacklogAlarm',
      source: `${(MEASURED.loadingSecondsPerEvent * 1000).toFixed(1)} ms a loading invocation per event (BENCHMARKS.md, far, memory); ${limits.eventSourceRampPerMinute.source}`,
    }),
    stage({
      id: 'stack-resources',
      name: 'stack resources (a topic, policy and subscription per tenant in the CDK configuration)',
      demand: STACK_COUNTS.resources + STACK_COUNTS.resourcesPerTenant * configured,
      limit: limits.stackResources.value,
      unit: 'resources',
      whenBound: 'refused: cdk deploy fails',
      lift: 'add tenants at runtime (scripts/admin tenant add), which adds nothing to the stack',
      alarm: 'cdk deploy',
      source: limits.stackResources.source,
    }),
    stage({
      id: 'stack-outputs',
      name: 'stack outputs (one per tenant in the CDK configuration)',
      demand: STACK_COUNTS.outputs + STACK_COUNTS.outputsPerTenant * configured,
      limit: limits.stackOutputs.value,
      unit: 'outputs',
      whenBound: 'refused: cdk deploy fails',
      lift: 'add tenants at runtime (scripts/admin tenant add), which adds nothing to the stack',
      alarm: 'cdk deploy',
      source: limits.stackOutputs.source,
    }),
    stage({
      id: 'sns-topics',
      name: 'SNS topics in the account (an input topic per tenant, and the scheduler’s own)',
      demand: profile.tenants + SCHEDULER_OWN_TOPICS,
      limit: limits.snsTopicsPerAccount.value,
      unit: 'topics',
      whenBound: 'refused: tenant add fails (TopicLimitExceeded) and writes nothing',
      lift: 'an increase of the quota (Service Quotas, Amazon SNS, Topics per account); or a stack in another account',
      alarm: 'tenant add refuses, naming the quota (SNS publishes no count of topics to alarm on)',
      source: limits.snsTopicsPerAccount.source,
    }),
    stage({
      id: 'registry-public-reads',
      name: 'registry: the public settings’ item, read by every function instance every half of the cache’s bound',
      demand: registryItemReadsPerSecond(Math.min(limits.lambdaAccountConcurrency.value, ingestConcurrency + emitterMost)),
      limit: limits.partitionReadsPerSecond.value,
      unit: 'read units/s',
      whenBound: 'throttled: a batch whose registry read fails keeps the last value read, or is retried',
      lift: 'SCHEDULER_REGISTRY_MAX_AGE_MS (a longer bound, read less often)',
      alarm: 'TableReadThrottlesAlarm',
      source: `${limits.partitionReadsPerSecond.source}; strongly consistent reads of one item, 1 unit each; the bound ${DEFAULTS.registryMaxAgeMs / 1000} s`,
    }),
  );
  return report(stages, spike, move, emitPerSecond, atRest);
}

function report(
  stages: readonly Stage[],
  spike: Drain | undefined,
  move: CapacityReport['move'],
  emitPerSecond: number,
  emitterConcurrencyAtRest: number,
): CapacityReport {
  const first = stages.reduce((worst, candidate) => (candidate.load > worst.load ? candidate : worst));
  return { stages, first, spike, move, emitPerSecond, emitterConcurrencyAtRest };
}

/** Seconds of one tick: its queries, a round of them at a time, and the chunks it sends for what it finds. */
export function loaderTickSeconds(
  profile: Pick<LoadProfile, 'tenants' | 'activeTenants' | 'farShare' | 'ratePerSecond'>,
  settings: Pick<StackSettings, 'index' | 'shardCount' | 'loaderIntervalSeconds'>,
  events: number,
): number {
  return (
    (loaderQueriesPerTick(profile, settings) * MEASURED.loaderQuerySeconds) / LOADER_QUERIES_IN_FLIGHT +
    events * MEASURED.loaderSecondsPerEvent
  );
}

/** The due directory's partitions a pass reads: the periods its range overlaps (a minute's range, at most two). */
export const DUE_DIRECTORY_QUERIES_PER_PASS = 2;

/**
 * Tenants whose shards a tick reads (see LoadProfile.activeTenants): by default every registered
 * tenant and the public one while events are stored for the loader, but no more than the events
 * due within one tick's interval, since a tenant is noted only for an event of its own.
 */
export function activeTenantsOf(
  profile: Pick<LoadProfile, 'tenants' | 'activeTenants' | 'farShare' | 'ratePerSecond'>,
  settings: Pick<StackSettings, 'loaderIntervalSeconds'>,
): number {
  if (profile.activeTenants !== undefined) return Math.min(profile.activeTenants, profile.tenants + 1);
  const storedPerTick = Math.ceil(profile.farShare * profile.ratePerSecond * settings.loaderIntervalSeconds);
  return Math.min(profile.tenants + 1, storedPerTick);
}

/**
 * Queries one tick makes, its sweep included (the sweep queries the same partitions a few
 * minutes behind). The tenant index: the due directory's periods, then every shard of each
 * tenant the directory notes (see activeTenantsOf); the bucket index: the minute's shards.
 */
export function loaderQueriesPerTick(
  profile: Pick<LoadProfile, 'tenants' | 'activeTenants' | 'farShare' | 'ratePerSecond'>,
  settings: Pick<StackSettings, 'index' | 'shardCount' | 'loaderIntervalSeconds'>,
): number {
  const perPass =
    settings.index === 'tenant'
      ? activeTenantsOf(profile, settings) * settings.shardCount + DUE_DIRECTORY_QUERIES_PER_PASS
      : settings.shardCount;
  return 2 * perPass;
}
