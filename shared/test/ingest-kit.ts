/** What ingest's tests share: the messages SNS puts on the ingest queue, and ingest with in-memory ports. */
import type { IngestDeps } from '../src/app/ingest.js';
import { inputMessageId, REGION, registry, SCHEDULER_TOPICS, sqsRecord, topicArn } from './factories.js';
import {
  FakeClock,
  MemoryDelayQueue,
  MemoryLastErrors,
  MemoryRefusalLog,
  RecordingChangesQueue,
  RecordingLogger,
  RecordingMetrics,
} from './fakes.js';
import { MemoryBulkCancelJobs, MemoryEventStore, MemoryTenantPauses } from './memory-event-store.js';
import { MemorySeriesStore } from './memory-series-store.js';

export const NOW = 1_900_000_000_000;
export const CONFIG = {
  region: REGION,
  nearPathWindowSeconds: 600,
  loaderLookaheadSeconds: 540,
  emitterLeadMs: 300,
  bucketSeconds: 60,
  shardCount: 8,
  retentionSeconds: 3600,
  changeCutoffSeconds: 5,
  ...SCHEDULER_TOPICS,
  maxScheduleAheadSeconds: 365 * 24 * 3600,
  emitMaxAgeSeconds: 86_400,
};
export const ACME_TOPIC = `arn:aws:sns:${REGION}:000000000000:scheduler-tenant-acme`;
export const acmeTarget = topicArn('out', 'eu-west-1', '111111111111');
/** Where the series requests below have their failures told. */
export const seriesFailureTopic = topicArn('failures', REGION, '111111111111');

/** A series request of acme's firing every minute, with `fields` over the defaults. */
export function minuteSeries(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { schedule: 'rate(1 minute)', target: acmeTarget, user: 'alice', payload: 'tick', failure_topic: seriesFailureTopic, ...fields };
}

/** What SNS puts on the ingest queue for one publish to a tenant's input topic. */
export function published(message: unknown, messageId = inputMessageId(), topic = ACME_TOPIC, publishedAt = NOW) {
  const body = JSON.stringify({
    Type: 'Notification',
    MessageId: messageId,
    TopicArn: topic,
    Timestamp: new Date(publishedAt).toISOString(),
    Message: typeof message === 'string' ? message : JSON.stringify(message),
  });
  return sqsRecord(body, `sqs-${messageId}`);
}

export function setup() {
  const clock = new FakeClock(NOW);
  const store = new MemoryEventStore(clock);
  const series = new MemorySeriesStore(store);
  const delayQueue = new MemoryDelayQueue(clock);
  const jobs = new MemoryBulkCancelJobs();
  const changesQueue = new RecordingChangesQueue();
  const lastErrors = new MemoryLastErrors();
  const logger = new RecordingLogger();
  const metrics = new RecordingMetrics();
  const refusals = new MemoryRefusalLog();
  let tokens = 0;
  const deps = {
    config: CONFIG,
    tenants: registry(),
    store,
    series,
    delayQueue,
    jobs,
    pauses: new MemoryTenantPauses(store),
    changesQueue,
    refusals,
    clock,
    logger,
    metrics,
    failureLog: { lastErrors, fn: 'ingest', clock },
    newToken: () => `token-${++tokens}`,
  } satisfies IngestDeps;
  return { store, series, delayQueue, jobs, changesQueue, deps, clock, logger, metrics, lastErrors, refusals };
}

export const soon = new Date(NOW + 30_000).toISOString();
export const later = new Date(NOW + 3_600_000).toISOString();
