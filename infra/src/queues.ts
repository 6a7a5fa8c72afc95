import { deliveriesWithin, SQS_MAX_RETENTION_SECONDS } from '@adhoc-scheduler/shared';

/**
 * The scheduler's SQS queues as both ways of running the functions make and consume them: the
 * CDK app (src/cdk: Lambda's event source mappings, the queues' settings) and the local runtime
 * (src/local: its pollers, the queues it creates on the emulators) read their settings and
 * checks here. Where the two differ, on purpose, it is said here, with the reason.
 */

/**
 * How the functions' SQS event sources batch, so both run the functions alike. Lambda takes
 * more than 10 messages a batch only with a batching window, of at least a second.
 */
export const EVENT_SOURCES = {
  /**
   * Ingest waits up to a second to fill a batch of 100: at moderate traffic it cuts invocations
   * and quota-counter writes (one per batch and tenant) up to a hundredfold. It delays only
   * events due sooner than the ingest path itself takes.
   */
  ingest: { batchSize: 100, batchingWindowSeconds: 1 },
  loading: { batchSize: 10, batchingWindowSeconds: 0 },
  /**
   * The emitter gathers up to 100 events a batch for up to a second: fewer, fuller invocations,
   * one counter write per batch and tenant. Events therefore reach it at least the emitter lead
   * (1.3 s by default) before they are due, the window included.
   */
  emitter: { batchSize: 100, batchingWindowSeconds: 1 },
  /** Each message a page of a job (a bulk cancel's up to 100 events, or a resume's): ten pages, of as many jobs, at a time. */
  changes: { batchSize: 10, batchingWindowSeconds: 0 },
} as const;

export type EventSourceName = keyof typeof EVENT_SOURCES;

/** Most invocations the public tenant's ingest queue runs at once on AWS, unless the stack is given another (see AdhocSchedulerProps). */
export const DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY = 10;

/**
 * How long a message handed out stays hidden before SQS hands it out again. On AWS, Lambda's
 * guidance for SQS event sources: six times the consumer's timeout (plus its batching window), so
 * that the messages of a throttled or retried batch are not handed out twice.
 */
export function visibilityTimeoutSeconds(consumerTimeoutSeconds: number, batchingWindowSeconds = 0): number {
  return consumerTimeoutSeconds * 6 + batchingWindowSeconds;
}

/**
 * Locally no Lambda throttles a batch, and no function times out: the local pollers keep the
 * messages they hold hidden, a buffered message while it waits (see startFairQueuePoller) and a
 * message being handled while its handler works (VisibilityHeartbeat), extending it once less
 * than half is left. So the visibility timeout only says how soon a failed batch comes back, and
 * how soon what a killed service held does: short, so that a kill -9 costs an event at most this
 * much (and the restart) rather than the 30 s it once did. Every local queue has this one unless
 * the runtime is given another (the tests give 3 s). On AWS, Lambda's event source owns the
 * visibility: it never extends it, so the queue's timeout must outlast the function's
 * (visibilityTimeoutSeconds above).
 */
export const LOCAL_VISIBILITY_TIMEOUT_SECONDS = 10;

/**
 * Deliveries of an ingest or loading message before SQS sets it aside in a dead-letter queue:
 * those functions fail a record only for a fault of the infrastructure, which a retry fixes. Ten
 * locally, where a failed batch comes back after seconds (LOCAL_VISIBILITY_TIMEOUT_SECONDS) rather
 * than minutes: a message is set aside after failing for about a minute and a half.
 */
export const MAX_RECEIVE_COUNT = { aws: 5, local: 10 } as const;

/** Deliveries beyond a publish's retries before a delay-queue message is set aside: the emitter reports a failed publish itself, so only one that keeps crashing it gets there. */
const DELAY_QUEUE_DEAD_LETTER_MARGIN = 10;

/**
 * Deliveries of a delay-queue message before SQS sets it aside, the same on AWS and locally: a
 * publish is retried, a little later each time, until its event is `emitMaxAgeSeconds` past due.
 */
export function delayQueueMaxReceiveCount(emitMaxAgeSeconds: number): number {
  return deliveriesWithin(emitMaxAgeSeconds) + DELAY_QUEUE_DEAD_LETTER_MARGIN;
}

/**
 * How long a dead-letter queue keeps what it holds: the most SQS allows, time for an operator to
 * look at it and redrive it. Locally the delay queue keeps its messages as long; the stack leaves
 * it at SQS's default, four days.
 */
export const DEAD_LETTER_RETENTION_SECONDS = SQS_MAX_RETENTION_SECONDS;
export const DEAD_LETTER_RETENTION_DAYS = DEAD_LETTER_RETENTION_SECONDS / (24 * 3600);
