import { DYNAMODB_WRITE_UNIT_BYTES, SNS_MAX_MESSAGE_BYTES, SNS_PUBLISH_BATCH_ENTRIES, SQS_BATCH_ENTRIES } from '@adhoc-scheduler/shared';
import { estimateCost, LAMBDA_MEMORY_MB, type CostEstimate } from '../cost/estimate.js';
import { PRICES } from '../cost/prices.js';
import { BILLING_CHUNK_BYTES, type UsageSnapshot } from '../cost/usage-meter.js';
import type { Limits } from './limits.js';
import { MEASURED, MESSAGE_OVERHEAD_BYTES, RECORD_BYTES } from './measured.js';
import { loaderQueriesPerTick, registryItemReadsPerSecond, type LoadProfile, type StackSettings } from './model.js';

/**
 * What a million events cost under a load profile: the requests each event causes, counted by
 * the same rules the load test's usage meter bills a run by (64 KiB chunks, batches, write units),
 * priced by the load test's own estimate (loadtest/src/cost). Batches fill with the load: an
 * event source gathers for its one-second window over the pollers it keeps at rest.
 */

const MILLION = 1e6;

const chunks = (bytes: number): number => Math.max(1, Math.ceil(bytes / BILLING_CHUNK_BYTES));

/** Events a batch holds at a steady rate: what one second's window gathers over the pollers at rest, at most the batch size. */
export function batchFill(ratePerSecond: number, pollers: number, most: number): number {
  return Math.min(most, Math.max(1, ratePerSecond / Math.max(1, pollers)));
}

/** A million events' usage: requests and units as AWS bills them. */
export function usagePerMillion(profile: LoadProfile, settings: StackSettings, limits: Limits): UsageSnapshot {
  const far = profile.farShare;
  const pollers = Number.isFinite(limits.eventSourceStart.value) ? limits.eventSourceStart.value : 5;
  const ingestBatch = batchFill(profile.ratePerSecond, pollers, settings.ingestBatch);
  const emitterBatch = batchFill(profile.ratePerSecond, pollers, settings.emitterBatch);
  const messageBytes = profile.payloadBytes + MESSAGE_OVERHEAD_BYTES;

  // SNS: a PublishBatch of the emitter's batch's events for one target, billed per 64 KiB of the whole.
  const publishEntries = Math.max(
    1,
    Math.min(SNS_PUBLISH_BATCH_ENTRIES, Math.floor(emitterBatch), Math.floor(SNS_MAX_MESSAGE_BYTES / messageBytes)),
  );
  const snsBilled = (MILLION / publishEntries) * chunks(publishEntries * messageBytes);

  // SQS: each event's input message is received and deleted; its delay-queue copy sent, received, deleted.
  const sqsEntries = Math.max(1, Math.min(SQS_BATCH_ENTRIES, Math.floor(ingestBatch)));
  const perBatchOfMessages = (count: number) => (MILLION / sqsEntries) * chunks(sqsEntries * messageBytes) * count;
  const loadingMessages = (far * MILLION) / settings.loadingChunkSize;
  const send = perBatchOfMessages(1) + loadingMessages / SQS_BATCH_ENTRIES;
  const receive = perBatchOfMessages(2) + loadingMessages / SQS_BATCH_ENTRIES;
  const remove = (2 * MILLION) / sqsEntries + loadingMessages / SQS_BATCH_ENTRIES;

  // DynamoDB: the path's writes, a larger stored payload's extra units, labels, and the counters per batch and tenant.
  const units = settings.writeUnits;
  const storedPayloadUnits = Math.max(0, Math.ceil((profile.payloadBytes + RECORD_BYTES) / DYNAMODB_WRITE_UNIT_BYTES) - 1);
  const writeUnits =
    MILLION *
    ((1 - far) * units.nearPath +
      far * (units.farPath + storedPayloadUnits) +
      (settings.index === 'tenant' ? profile.labelsPerEvent * units.perLabel : 0) +
      1 / ingestBatch +
      1 / emitterBatch);
  // Eventually consistent reads of up to 4 KB are half a unit: the emitter's read of the record, and loading's of a stored one.
  const readUnits =
    MILLION * (0.5 + far * 0.5 * Math.ceil((profile.payloadBytes + RECORD_BYTES) / 4096)) +
    registryReadsPerMillion(profile, [ingestBatch, emitterBatch], 2 * pollers);

  const invocation = (count: number, durationMs: number, records: number) => ({
    invocations: count,
    durationMs,
    billedDurationMs: durationMs,
    records,
  });
  const ingestInvocations = MILLION / ingestBatch;
  const emitterInvocations = MILLION / emitterBatch;
  const loadingEvents = far * MILLION;
  return {
    sns: { publishes: 0, publishBatches: MILLION / publishEntries, publishBatchEntries: MILLION, billedRequests: snsBilled },
    sqs: {
      requests: send + receive + remove,
      billedRequests: send + receive + remove,
      emptyReceives: 0,
      byOperation: {
        SendMessageBatch: { requests: send, billedRequests: send, messages: MILLION + loadingMessages },
        ReceiveMessage: { requests: receive, billedRequests: receive, messages: 2 * MILLION + loadingMessages },
        DeleteMessageBatch: { requests: remove, billedRequests: remove, messages: 2 * MILLION + loadingMessages },
      },
      sentByQueue: {},
    },
    dynamodb: {
      requests: 0,
      readUnits,
      writeUnits,
      estimatedWriteUnits: writeUnits,
      requestsWithoutCapacity: 0,
      readsRaisedToMinimum: 0,
      byOperation: {},
      writeUnitsByItemKind: {},
    },
    lambda: {
      // Ingest's time grows with the events it takes (measured per event); the emitter's is its wait, per batch.
      ingest: invocation(ingestInvocations, (MILLION / settings.ingestBatch) * MEASURED.ingestSecondsPerBatch * 1000, MILLION),
      // The loader's ticks cost the same whatever the load: priced at rest (restPerMonth), not per event.
      loader: invocation(0, 0, 0),
      loading: invocation(
        loadingEvents / (settings.loadingChunkSize * settings.loadingMessagesPerBatch),
        loadingEvents * MEASURED.loadingSecondsPerEvent * 1000,
        loadingEvents,
      ),
      emitter: invocation(
        emitterInvocations,
        emitterInvocations * (MEASURED.emitterHoldSeconds + MEASURED.emitterBusySecondsPerBatch) * 1000,
        MILLION,
      ),
      // Bulk changes are an operator's or a tenant's occasional job, not a step of an event's path.
      changes: invocation(0, 0, 0),
    },
  };
}

/**
 * The registry's reads for a million events (strongly consistent, a unit each): ingest and the
 * emitter read, for each tenant a batch names, its entry and the owners of its target's account,
 * and the public settings; an instance that keeps seeing a tenant reads its items again once per
 * half the cache's bound (registryItemReadsPerSecond), not per batch. So at most what the
 * batches name, and at most what the instances' caches read again: a million events cost the
 * same reads with 100,000 tenants registered as with 10, when as many send them.
 */
export function registryReadsPerMillion(
  profile: Pick<LoadProfile, 'ratePerSecond' | 'tenants' | 'activeTenants'>,
  batchFills: readonly number[],
  instances: number,
): number {
  if (profile.ratePerSecond <= 0) return 0;
  const sending = Math.max(1, profile.activeTenants ?? profile.tenants + 1);
  const itemsOf = (tenants: number) => 2 * tenants + 1;
  const byBatches = batchFills.reduce((sum, fill) => sum + (profile.ratePerSecond / fill) * itemsOf(Math.min(sending, fill)), 0);
  const byCaches = registryItemReadsPerSecond(instances) * itemsOf(sending);
  return (Math.min(byBatches, byCaches) / profile.ratePerSecond) * MILLION;
}

/** The price of a million events under the profile. */
export function costPerMillion(profile: LoadProfile, settings: StackSettings, limits: Limits): CostEstimate {
  return estimateCost(usagePerMillion(profile, settings, limits), MILLION, LAMBDA_MEMORY_MB);
}

export interface MonthlyCost {
  /** Events a month at the profile's steady rate, and what they cost. */
  readonly events: number;
  readonly events$: number;
  /** The loader's queries, every tick whatever the load: they grow with tenants times shards. */
  readonly loaderQueries$: number;
  /** The open events' storage and point-in-time recovery. */
  readonly storage$: number;
  readonly total$: number;
}

const SECONDS_PER_MONTH = 30 * 24 * 3600;

/** A month at the profile's steady rate, with what does not scale with events: the loader's queries and the stored events. */
export function monthlyCost(profile: LoadProfile, settings: StackSettings, limits: Limits): MonthlyCost {
  const events = profile.ratePerSecond * SECONDS_PER_MONTH;
  const events$ = (costPerMillion(profile, settings, limits).perMillionEvents * events) / MILLION;
  const ticks = SECONDS_PER_MONTH / settings.loaderIntervalSeconds;
  // A query that finds nothing bills the minimum, half a read unit.
  const loaderQueries$ = (ticks * loaderQueriesPerTick(profile, settings) * 0.5 * PRICES.dynamodb.perMillionReadUnits) / MILLION;
  const storedGb = (profile.openEvents * (RECORD_BYTES + profile.payloadBytes)) / 1024 ** 3;
  const storage$ = storedGb * (PRICES.dynamodb.perGbMonthStorage + PRICES.dynamodb.perGbMonthPointInTimeRecovery);
  return { events, events$, loaderQueries$, storage$, total$: events$ + loaderQueries$ + storage$ };
}
