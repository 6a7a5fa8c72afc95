/** What the emitter's tests share: an event, its record in the delay queue, and the emitter with in-memory ports. */
import type { SQSRecord } from 'aws-lambda';
import { PausedTenants, type EmitterDeps } from '../src/app/emitter.js';
import { EndWriter } from '../src/app/end-writer.js';
import { NoticePace } from '../src/app/notice-pace.js';
import { PublishWindow } from '../src/app/publish-window.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import { EVENT_STATE, type EventRecord } from '../src/domain/lifecycle.js';
import { encodeDelayQueueMessage } from '../src/domain/messages.js';
import { registry, sqsRecord, topicArn } from './factories.js';
import { FakeClock, MemoryDelayQueue, RecordingLogger, RecordingMetrics, RecordingPublisher } from './fakes.js';
import { MemoryEventStore, MemoryNoticeMarks, MemoryTenantPauses } from './memory-event-store.js';

export const DUE = 1_900_000_000_000;
/** The account of the topics these tests publish to (see topicArn). */
export const TARGET_ACCOUNT = '123456789012';
/** Tenant "acme" in account 111111111111, which may target the tests' topics. */
export const TENANTS = { tenants: [{ id: 'acme', accounts: ['111111111111'], targetAccounts: [TARGET_ACCOUNT] }] };

export function event(overrides: Partial<ScheduledEvent> = {}): ScheduledEvent {
  return {
    id: 'm-1',
    tenant: 'acme',
    user: 'alice',
    target: topicArn('out'),
    payload: 'hello',
    failureTopic: topicArn('failures'),
    dueAt: DUE,
    version: 1,
    ...overrides,
  };
}

/** The record of an event in the delay queue, as ingest or loading leaves it. */
export function queued(e: ScheduledEvent, overrides: Partial<EventRecord> = {}): EventRecord {
  const { payload: _payload, ...rest } = e;
  return {
    ...rest,
    state: EVENT_STATE.queued,
    payloadKept: 'queue',
    queuedBy: 'copy-1',
    createdAt: DUE - 60_000,
    expiresAt: DUE / 1000 + 3600,
    ...overrides,
  };
}

/** How long after its due time a failing publish is still retried, in these tests. */
export const MAX_AGE_SECONDS = 3600;
/** Events due sooner than this go to the delay queue; later ones to the table, in these tests. */
export const NEAR_PATH_WINDOW_SECONDS = 600;
/** The longest wait between two tries of handed-over ends, in these tests. */
export const ENDS_RETRY_MAX_SECONDS = 30;

export function setup(failWith?: (topic: string) => Error | undefined, unrecordedEndsLimit = 0) {
  const clock = new FakeClock(DUE - 700);
  const store = new MemoryEventStore();
  store.put(queued(event()));
  const publisher = new RecordingPublisher(clock, ({ topic }) => failWith?.(topic));
  const metrics = new RecordingMetrics();
  const delayQueue = new MemoryDelayQueue();
  const logger = new RecordingLogger();
  const deps = {
    config: {
      emitMaxAgeSeconds: MAX_AGE_SECONDS,
      retentionSeconds: 3600,
      endsRetryMaxSeconds: ENDS_RETRY_MAX_SECONDS,
      emitterLeadMs: 1300,
      nearPathWindowSeconds: NEAR_PATH_WINDOW_SECONDS,
      bucketSeconds: 60,
      shardCount: 4,
      // The lean setting: the rule that lists a failed or held event whatever the setting is what runs.
      indexQueuedEvents: false,
    },
    store,
    pausedTenants: new PausedTenants(new MemoryTenantPauses(store), clock),
    notices: new MemoryNoticeMarks(),
    delayQueue,
    publisher,
    endWriter: new EndWriter({ store, delayQueue, logger, metrics }),
    publishWindow: new PublishWindow(unrecordedEndsLimit),
    noticePace: new NoticePace(),
    tenants: registry(TENANTS),
    clock,
    logger,
    metrics,
    random: () => 0.5,
  } satisfies EmitterDeps;
  return { clock, store, publisher, deps, metrics, delayQueue, logger };
}

/** A delay-queue copy of an event; `null`: a copy sent before copies carried tokens. */
export const delayed = (e: ScheduledEvent, queuedBy: string | null = 'copy-1') =>
  encodeDelayQueueMessage({ kind: 'event', event: e, queuedBy: queuedBy ?? undefined });

/** An SQS record of a message sent to its queue at `sentAt`. */
export function sentRecord(body: string, sentAt: number, messageId = 'sqs-1', receiveCount = 1): SQSRecord {
  const record = sqsRecord(body, messageId, receiveCount);
  return { ...record, attributes: { ...record.attributes, SentTimestamp: String(sentAt) } };
}
