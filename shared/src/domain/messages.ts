import type { ScheduledEvent } from './event.js';

/**
 * Body of a delay-queue message: JSON with every non-ASCII character escaped, so any payload
 * SNS accepts is a valid SQS body (SQS refuses some characters; escaping at most triples a
 * 256 KiB payload, well under the 1 MiB SQS limit).
 */
export function encodeDelayedEvent(event: ScheduledEvent): string {
  return JSON.stringify(event).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function decodeDelayedEvent(body: string): ScheduledEvent {
  const value = JSON.parse(body) as Partial<ScheduledEvent>;
  if (
    typeof value.id !== 'string' ||
    typeof value.user !== 'string' ||
    typeof value.target !== 'string' ||
    typeof value.payload !== 'string' ||
    typeof value.dueAt !== 'number'
  ) {
    throw new TypeError('not a delayed event');
  }
  return {
    id: value.id,
    user: value.user,
    target: value.target,
    payload: value.payload,
    failureTopic: typeof value.failureTopic === 'string' ? value.failureTopic : undefined,
    dueAt: value.dueAt,
  };
}

/** Body of a loading-queue message: stored events for the loading function to move. */
export interface LoadingChunk {
  readonly ids: readonly string[];
}

export function encodeLoadingChunk(chunk: LoadingChunk): string {
  return JSON.stringify(chunk);
}

export function decodeLoadingChunk(body: string): LoadingChunk {
  const value = JSON.parse(body) as Partial<LoadingChunk>;
  if (!Array.isArray(value.ids) || !value.ids.every((id) => typeof id === 'string')) {
    throw new TypeError('not a loading chunk');
  }
  return { ids: value.ids };
}
