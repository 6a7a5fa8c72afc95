import type { Logger } from 'pino';
import type { ScheduledEvent } from '../domain/event.js';
import type { FailureNotice } from '../domain/failure.js';
import type { LoadingChunk } from '../domain/messages.js';

export type { Logger };

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A stored event's key as the loader sees it through the GSI. */
export interface DueEventRef {
  readonly id: string;
  readonly dueAt: number;
}

export interface EventStore {
  /** Stores a far-path event under its bucket shard; 'duplicate' when the id is already known. */
  storePending(event: ScheduledEvent, bucketShard: string, expiresAt: number): Promise<'stored' | 'duplicate'>;
  /** Pages of events in one bucket shard with dueAt in [fromMs, untilMs). */
  queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]>;
  /**
   * Marks a stored event as taken by one loading message and returns it. Undefined when
   * another loading message took it first (or it is gone). The same owner may take it again,
   * so a redelivered loading message resends what it had taken.
   */
  takeForLoading(id: string, owner: string, now: number): Promise<ScheduledEvent | undefined>;
  /**
   * Claims the emission of an event for one attempt (`owner` is unique to the attempt) until
   * `leaseUntil`. 'emitted' when the event is already done; 'busy' when another attempt holds
   * a live claim (it may still fail, so the caller retries later rather than drop the event).
   */
  claimEmission(id: string, claim: EmissionClaim): Promise<'claimed' | 'emitted' | 'busy'>;
  /** Gives up a claim after a failed attempt, so the retry need not wait for the lease. */
  releaseEmission(id: string, owner: string): Promise<void>;
  /** Records that the event is done (emitted, or reported as failed), so no redelivery repeats it. */
  markEmitted(id: string, emittedAt: number): Promise<void>;
  readLoaderCursor(): Promise<number | undefined>;
  /** Moves the loader cursor forward (never back). */
  advanceLoaderCursor(toMs: number): Promise<void>;
}

export interface EmissionClaim {
  readonly owner: string;
  readonly now: number;
  readonly leaseUntil: number;
  /** TTL of the record, epoch seconds. */
  readonly expiresAt: number;
}

export interface DelayedSend {
  readonly event: ScheduledEvent;
  readonly delaySeconds: number;
}

export interface DelayedSendFailure {
  readonly eventId: string;
  readonly reason: string;
}

export interface DelayQueue {
  /** Sends in batches of 10; returns the events that could not be sent, and why. */
  send(items: readonly DelayedSend[]): Promise<readonly DelayedSendFailure[]>;
  /** Hands a failure notice to the emitter, which publishes it once (TransientError when SQS refuses). */
  sendNotice(noticeId: string, failureTopic: string, notice: FailureNotice): Promise<void>;
}

export interface LoadingQueue {
  send(chunks: readonly LoadingChunk[]): Promise<void>;
}

export interface TopicPublisher {
  /**
   * Publishes a message with string attributes. Throws EventRejectedError when the topic
   * cannot take it (missing, access denied) and TransientError when a retry may succeed.
   */
  publish(topicArn: string, message: string, attributes?: Readonly<Record<string, string>>): Promise<void>;
}

/** Counters and timings, published without extra API calls (EMF on Lambda). */
export interface SchedulerMetrics {
  count(name: MetricName, value?: number, reason?: string): void;
  latenessMs(value: number): void;
  /** How far behind the loader's cursor is at the start of a tick (0 when on time). */
  loaderBacklogSeconds(value: number): void;
  flush(): void;
}

export type MetricName =
  | 'EventsIngested'
  | 'EventsRejected'
  | 'EventsStored'
  | 'EventsDelayed'
  | 'EventsLoaded'
  | 'EventsEmitted'
  | 'EventsFailed'
  | 'DuplicatesSuppressed';

export const noMetrics: SchedulerMetrics = { count: () => {}, latenessMs: () => {}, loaderBacklogSeconds: () => {}, flush: () => {} };
