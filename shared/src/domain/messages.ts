import type { ScheduledEvent } from './event.js';

/** Body of a delay-queue message. */
export function encodeDelayedEvent(event: ScheduledEvent): string {
  return JSON.stringify(event);
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
