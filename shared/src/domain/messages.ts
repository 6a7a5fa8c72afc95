import type { ScheduledEvent } from './event.js';
import type { FailureNotice, NoticeDestination } from './failure.js';
import type { EmissionEnding } from './emission.js';

/**
 * What the delay queue carries: an event to emit, or a failure notice for the emitter to
 * publish (ingest hands its notices over, so the emitter's role is the only one that ever
 * publishes to clients' topics).
 */
export type DelayQueueMessage =
  | {
      readonly kind: 'event';
      readonly event: ScheduledEvent;
      /** This copy's token (see EventRecord.queuedBy); absent on copies sent before tokens existed. */
      readonly queuedBy?: string | undefined;
    }
  | ({
      readonly kind: 'notice';
      /** Identifies the notice like an event id, so a redelivered notice is published once. */
      readonly noticeId: string;
      readonly notice: FailureNotice;
    } & NoticeDestination)
  | {
      /** Ends the emitter published but could not record: recorded by whoever receives this. */
      readonly kind: 'ends';
      readonly ends: readonly EmissionEnding[];
    };

/**
 * JSON with every non-ASCII character escaped, so any payload SNS accepts is a valid SQS body
 * (SQS refuses some characters; escaping at most triples a 256 KiB payload, well under the
 * 1 MiB SQS limit).
 */
export function encodeDelayQueueMessage(message: DelayQueueMessage): string {
  return JSON.stringify(message).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function decodeDelayQueueMessage(body: string): DelayQueueMessage {
  const value = JSON.parse(body) as {
    kind?: unknown;
    event?: Partial<ScheduledEvent>;
    noticeId?: unknown;
    failureTopic?: unknown;
    deadLetterTopic?: unknown;
    notice?: FailureNotice;
    queuedBy?: unknown;
    ends?: unknown;
  };
  if (value.kind === 'ends' && Array.isArray(value.ends) && value.ends.every(isEmissionEnding)) return { kind: 'ends', ends: value.ends };
  const failureTopic = typeof value.failureTopic === 'string' ? value.failureTopic : undefined;
  const deadLetterTopic = typeof value.deadLetterTopic === 'string' ? value.deadLetterTopic : undefined;
  if (
    value.kind === 'notice' &&
    typeof value.noticeId === 'string' &&
    (failureTopic !== undefined || deadLetterTopic !== undefined) &&
    typeof value.notice?.reason === 'string'
  ) {
    return { kind: 'notice', noticeId: value.noticeId, failureTopic, deadLetterTopic, notice: value.notice };
  }
  const event = value.event;
  if (
    value.kind !== 'event' ||
    typeof event?.id !== 'string' ||
    typeof event.tenant !== 'string' ||
    typeof event.user !== 'string' ||
    typeof event.target !== 'string' ||
    typeof event.payload !== 'string' ||
    typeof event.dueAt !== 'number' ||
    typeof event.version !== 'number'
  ) {
    throw new TypeError('not a delay-queue message');
  }
  return {
    kind: 'event',
    event: {
      id: event.id,
      tenant: event.tenant,
      user: event.user,
      target: event.target,
      payload: event.payload,
      failureTopic: typeof event.failureTopic === 'string' ? event.failureTopic : undefined,
      dueAt: event.dueAt,
      version: event.version,
    },
    queuedBy: typeof value.queuedBy === 'string' ? value.queuedBy : undefined,
  };
}

function isEmissionEnding(value: unknown): value is EmissionEnding {
  const end = value as Partial<EmissionEnding> | undefined;
  return (
    typeof end?.event?.id === 'string' &&
    typeof end.event.tenant === 'string' &&
    typeof end.event.version === 'number' &&
    (end.end?.state === 'emitted' || end.end?.state === 'failed') &&
    typeof end.end.at === 'number' &&
    typeof end.expiresAt === 'number' &&
    typeof end.endedBy === 'string'
  );
}

/** Body of a loading-queue message: stored events for the loading function to move. */
export interface LoadingChunk {
  readonly ids: readonly string[];
  /**
   * Names the chunk, and owns the events it takes: a redelivered or redriven message keeps its
   * body, so it takes its own events again. Absent on chunks sent before it existed.
   */
  readonly chunkId?: string | undefined;
  /** Sent by the loader's sweep: events overdue and still open, to send again. */
  readonly repair?: boolean | undefined;
}

export function encodeLoadingChunk(chunk: LoadingChunk): string {
  return JSON.stringify(chunk);
}

export function decodeLoadingChunk(body: string): LoadingChunk {
  const value = JSON.parse(body) as Partial<LoadingChunk>;
  if (!Array.isArray(value.ids) || !value.ids.every((id) => typeof id === 'string')) {
    throw new TypeError('not a loading chunk');
  }
  return {
    ids: value.ids,
    chunkId: typeof value.chunkId === 'string' ? value.chunkId : undefined,
    repair: value.repair === true ? true : undefined,
  };
}
