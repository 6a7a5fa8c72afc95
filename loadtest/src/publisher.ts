import { setTimeout as sleep } from 'node:timers/promises';
import { PublishBatchCommand, type PublishBatchRequestEntry, type SNSClient } from '@aws-sdk/client-sns';
import type { PlannedEvent } from './plan.js';

/** SNS takes at most 10 messages per PublishBatch. */
const BATCH_SIZE = 10;
const ATTEMPTS = 4;
/** Longest pause between two attempts of a batch published until accepted. */
const MAX_RETRY_PAUSE_MS = 2000;
/** How often the pacing loop looks for events whose publish time has come. */
const PACING_TICK_MS = 20;

export interface PublishOptions {
  readonly sns: SNSClient;
  readonly inputTopicArn: string;
  /** The input message of an event. */
  readonly render: (event: PlannedEvent) => string;
  /** PublishBatch requests in flight at once. */
  readonly concurrency: number;
  readonly onPublished: (event: PlannedEvent) => void;
  readonly onFailed: (event: PlannedEvent, reason: string) => void;
  readonly signal?: AbortSignal | undefined;
  /** Retry a batch until every entry is accepted (or `signal` aborts), as a client riding out an outage of the service would. */
  readonly untilAccepted?: boolean;
}

export interface PublishStats {
  readonly published: number;
  readonly failed: number;
  /** PublishBatch requests made, retries included: the client's side of the cost. */
  readonly requests: number;
  /** Requests that failed, or had entries refused, and were retried or given up. */
  readonly failedRequests: number;
  /** When the first request started and the last one ended, epoch ms. */
  readonly startedAt: number;
  readonly finishedAt: number;
}

/**
 * Publishes events to the input topic, each at its publish time (events are ordered by it),
 * in batches of 10 with several requests in flight. Failed entries are retried; what still
 * fails is reported, never thrown.
 */
export async function publishEvents(events: readonly PlannedEvent[], options: PublishOptions): Promise<PublishStats> {
  let published = 0;
  let failed = 0;
  let requests = 0;
  let failedRequests = 0;
  let startedAt = 0;
  let next = 0;
  const inFlight = new Set<Promise<void>>();

  const publishBatch = async (batch: readonly PlannedEvent[]): Promise<void> => {
    let pending = batch.map((event, index) => ({
      event,
      // Its tenant as the group, as docs/clients.md asks of a client: the ingest queue takes tenants in turns.
      entry: { Id: `m${index}`, Message: options.render(event), MessageGroupId: event.tenant } as PublishBatchRequestEntry,
    }));
    let lastError = '';
    for (let attempt = 1; (options.untilAccepted || attempt <= ATTEMPTS) && pending.length > 0 && !options.signal?.aborted; attempt += 1) {
      if (attempt > 1) await sleep(Math.min(MAX_RETRY_PAUSE_MS, 100 * 2 ** attempt));
      requests += 1;
      try {
        const result = await options.sns.send(
          new PublishBatchCommand({ TopicArn: options.inputTopicArn, PublishBatchRequestEntries: pending.map((p) => p.entry) }),
          { abortSignal: options.signal },
        );
        const failedIds = new Set((result.Failed ?? []).map((entry) => entry.Id));
        for (const p of pending) if (!failedIds.has(p.entry.Id)) options.onPublished(p.event);
        published += pending.length - failedIds.size;
        lastError = (result.Failed ?? []).map((entry) => `${entry.Code}: ${entry.Message}`).join('; ');
        if (failedIds.size > 0) failedRequests += 1;
        pending = pending.filter((p) => failedIds.has(p.entry.Id));
      } catch (error) {
        if (options.signal?.aborted) break;
        failedRequests += 1;
        lastError = String(error);
      }
    }
    for (const p of pending) options.onFailed(p.event, lastError);
    failed += pending.length;
  };

  const dispatch = (batch: readonly PlannedEvent[]): void => {
    const promise = publishBatch(batch).finally(() => inFlight.delete(promise));
    inFlight.add(promise);
  };

  while (next < events.length && !options.signal?.aborted) {
    const now = Date.now();
    const first = events[next] as PlannedEvent;
    if (first.publishAt > now) {
      await sleep(Math.min(PACING_TICK_MS, first.publishAt - now));
      continue;
    }
    if (inFlight.size >= options.concurrency) {
      await Promise.race(inFlight);
      continue;
    }
    startedAt ||= now;
    const batch: PlannedEvent[] = [];
    while (batch.length < BATCH_SIZE && next < events.length && (events[next] as PlannedEvent).publishAt <= now) {
      batch.push(events[next] as PlannedEvent);
      next += 1;
    }
    dispatch(batch);
  }
  await Promise.all(inFlight);
  for (const event of events.slice(next)) options.onFailed(event, 'the run was stopped before it was published');
  failed += events.length - next;
  return { published, failed, requests, failedRequests, startedAt: startedAt || Date.now(), finishedAt: Date.now() };
}
