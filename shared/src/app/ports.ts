import type { Logger } from 'pino';
import type { ScheduledEvent } from '../domain/event.js';
import type { EventRecord, EventState } from '../domain/lifecycle.js';
import type { ReasonCode } from '../domain/reasons.js';
import type { Quotas, Tenant } from '../domain/tenants.js';
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

/** Where a new or rescheduled event goes: straight to the delay queue, or stored for the loader. */
export type Placement = { readonly state: 'queued' } | { readonly state: 'scheduled'; readonly bucketShard: string };

export interface NewEvent {
  readonly event: ScheduledEvent;
  readonly clientId: string | undefined;
  /** The input message that asked for it: a redelivery of the same message may resend it. */
  readonly inputMessageId: string;
  readonly placement: Placement;
  readonly quotas: Quotas;
  readonly now: number;
  /** TTL of the record while it is open, epoch seconds. */
  readonly expiresAt: number;
}

export type CreateOutcome =
  | { readonly outcome: 'created' }
  | { readonly outcome: 'duplicate'; readonly existing: EventRecord | undefined }
  | { readonly outcome: 'quota-exceeded'; readonly quota: keyof Quotas };

/** A cancel or reschedule that did not apply, with the record as it was (undefined: no such id). */
export interface ChangeRefused {
  readonly outcome: 'refused';
  readonly current: EventRecord | undefined;
}

/** How an emission ended. */
export type EmissionEnd =
  | { readonly state: 'emitted'; readonly at: number }
  | { readonly state: 'failed'; readonly at: number; readonly reason: ReasonCode };

export interface EmissionEnding {
  readonly event: ScheduledEvent;
  readonly end: EmissionEnd;
  /** TTL of the record from now on, epoch seconds. */
  readonly expiresAt: number;
}

export interface EventStore {
  /**
   * Records new events of one tenant and counts them against its quotas: however many ingest
   * functions run at once, no tenant is admitted past a quota. Outcomes are in the order of the
   * entries; when the quotas leave room for only some, the first ones win.
   */
  createMany(entries: readonly NewEvent[]): Promise<CreateOutcome[]>;
  /** Pages of events in one bucket shard with dueAt in [fromMs, untilMs). */
  queryDue(bucketShard: string, fromMs: number, untilMs: number): AsyncIterable<readonly DueEventRef[]>;
  /**
   * Marks a stored event due before `horizonMs` as queued by one loading message and returns
   * it. Undefined when another loading message took it first, or it was cancelled, moved past
   * the horizon, or is gone. The same owner may take it again, so a redelivered loading message resends it.
   */
  takeForLoading(id: string, owner: string, now: number, horizonMs: number): Promise<ScheduledEvent | undefined>;
  /**
   * Claims the emission of one version of an event for one attempt (`owner` is unique to the
   * attempt) until `leaseUntil`. 'ended' when the event is already done; 'stale' when it was
   * cancelled or rescheduled since this version was queued; 'busy' when another attempt holds a
   * live claim (it may still fail, so the caller retries later rather than drop the event).
   */
  claimEmission(event: Pick<ScheduledEvent, 'id' | 'version'>, claim: EmissionClaim): Promise<'claimed' | 'ended' | 'stale' | 'busy'>;
  /** Gives up a claim after a failed attempt, so the retry need not wait for the lease. */
  releaseEmission(id: string, owner: string): Promise<void>;
  /** Ends claimed events (emitted, or failed) and frees their places in their tenants' open events; an event already ended is left as it is. */
  endEmissions(ends: readonly EmissionEnding[]): Promise<void>;
  /** Cancels an open event of this tenant that no emitter holds, freeing its place in the quota. */
  cancel(
    id: string,
    tenant: string,
    change: { readonly by: string; readonly now: number; readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'cancelled' } | ChangeRefused>;
  /** Moves an open event of this tenant that no emitter holds to `dueAt`: a new version, placed anew. */
  reschedule(
    id: string,
    tenant: string,
    change: { readonly dueAt: number; readonly placement: Placement; readonly now: number; readonly expiresAt: number },
  ): Promise<{ readonly outcome: 'rescheduled'; readonly event: ScheduledEvent } | ChangeRefused>;
  /** Claims the publication of a failure notice, keyed like an event so a redelivery publishes it once; its record is kept until `expiresAt` (epoch seconds). */
  claimNotice(noticeId: string, claim: EmissionClaim, expiresAt: number): Promise<'claimed' | 'ended' | 'busy'>;
  markNoticeSent(noticeId: string, sentAt: number): Promise<void>;
  readLoaderCursor(): Promise<number | undefined>;
  /** Moves the loader cursor forward (never back). */
  advanceLoaderCursor(toMs: number): Promise<void>;
}

/** What operators read: one event, and a tenant's events by state. */
export interface EventRecords {
  get(id: string): Promise<EventRecord | undefined>;
  /** A tenant's events in one state, by due time; `after` continues from a previous page's `next`. */
  list(tenant: string, state: EventState, page: { readonly limit: number; readonly after?: string | undefined }): Promise<{
    readonly records: readonly EventRecord[];
    readonly next: string | undefined;
  }>;
}

export interface EmissionClaim {
  readonly owner: string;
  readonly now: number;
  readonly leaseUntil: number;
}

/** Who a message belongs to, by the input topic it arrived on. */
export interface TenantDirectory {
  forTopic(topicArn: string): Tenant | undefined;
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
  sendNotice(noticeId: string, tenant: string, failureTopic: string, notice: FailureNotice): Promise<void>;
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
  | 'EventsCancelled'
  | 'EventsRescheduled'
  | 'DuplicatesSuppressed'
  /** Delay-queue messages of a cancelled or rescheduled version, dropped by the emitter. */
  | 'StaleMessagesDropped';

export const noMetrics: SchedulerMetrics = { count: () => {}, latenessMs: () => {}, loaderBacklogSeconds: () => {}, flush: () => {} };
