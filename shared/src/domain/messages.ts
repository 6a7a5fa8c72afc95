import type { ScheduledEvent } from './event.js';
import type { FailureNotice, NoticeDestination } from './failure.js';
import type { EmissionEnding } from './emission.js';
import { SQS_MAX_MESSAGE_BYTES } from './limits.js';

/** A failure notice for the emitter to publish. */
export type NoticeMessage = {
  readonly kind: 'notice';
  /** Identifies the notice like an event id, so a redelivered notice is published once. */
  readonly noticeId: string;
  /**
   * Whose notice it is: the emitter tells it only where this tenant may still be told, by the
   * registry as it stands when it publishes. Absent on notices queued before it was named.
   */
  readonly tenant?: string | undefined;
  readonly notice: FailureNotice;
} & NoticeDestination;

/**
 * What the delay queue carries: an event to emit, or failure notices for the emitter to publish
 * (ingest hands its notices over, so the emitter's role is the only one that ever publishes to
 * clients' topics): one, or one tenant's several packed in one message, as a flood of refused
 * requests hands them over.
 */
export type DelayQueueMessage =
  | {
      readonly kind: 'event';
      readonly event: ScheduledEvent;
      /** This copy's token (see EventRecord.queuedBy); absent on copies sent before tokens existed. */
      readonly queuedBy?: string | undefined;
    }
  | NoticeMessage
  | { readonly kind: 'notices'; readonly notices: readonly NoticeMessage[] }
  | {
      /** Ends the emitter published but could not record: recorded by whoever receives this. */
      readonly kind: 'ends';
      readonly ends: readonly EmissionEnding[];
    };

/** JSON with every non-ASCII character escaped: SQS refuses some characters, and takes any ASCII text. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A delay-queue message as an SQS body: ASCII JSON, so any payload SNS accepts is a valid body.
 * Escaping triples a payload of other characters at most, but JSON writes a control character in
 * six bytes: a 256 KiB payload of those would outgrow SQS's 1 MiB, so such an event carries its
 * payload in base64 (its UTF-8, a third larger) instead.
 */
export function encodeDelayQueueMessage(message: DelayQueueMessage): string {
  const body = asciiJson(message);
  if (message.kind !== 'event' || body.length <= SQS_MAX_MESSAGE_BYTES) return body;
  const { payload, ...event } = message.event;
  return asciiJson({ ...message, event: { ...event, payloadBase64: Buffer.from(payload, 'utf8').toString('base64') } });
}

/**
 * A pack of notices as an SQS body, from each notice's own (encodeDelayQueueMessage's): what
 * encodeDelayQueueMessage writes for the pack, without encoding the notices again.
 */
export function encodeNoticePack(noticeBodies: readonly string[]): string {
  return `{"kind":"notices","notices":[${noticeBodies.join(',')}]}`;
}

/** The payload of an event as encodeDelayQueueMessage wrote it; undefined when there is none. */
function payloadOf(event: { readonly payload?: unknown; readonly payloadBase64?: unknown }): string | undefined {
  if (typeof event.payload === 'string') return event.payload;
  return typeof event.payloadBase64 === 'string' ? Buffer.from(event.payloadBase64, 'base64').toString('utf8') : undefined;
}

/** A failure notice as encodeDelayQueueMessage wrote it, alone or in a pack; undefined when it is none. */
function noticeOf(value: {
  kind?: unknown;
  noticeId?: unknown;
  tenant?: unknown;
  failureTopic?: unknown;
  deadLetterTopic?: unknown;
  notice?: FailureNotice;
}): NoticeMessage | undefined {
  const failureTopic = typeof value.failureTopic === 'string' ? value.failureTopic : undefined;
  const deadLetterTopic = typeof value.deadLetterTopic === 'string' ? value.deadLetterTopic : undefined;
  if (
    value.kind !== 'notice' ||
    typeof value.noticeId !== 'string' ||
    (failureTopic === undefined && deadLetterTopic === undefined) ||
    typeof value.notice?.reason !== 'string'
  )
    return undefined;
  const tenant = typeof value.tenant === 'string' ? value.tenant : undefined;
  // A notice queued before every notice had details gets the empty ones it would have now.
  const notice = { ...value.notice, details: value.notice.details ?? {} };
  return { kind: 'notice', noticeId: value.noticeId, tenant, failureTopic, deadLetterTopic, notice };
}

export function decodeDelayQueueMessage(body: string): DelayQueueMessage {
  const value = JSON.parse(body) as Parameters<typeof noticeOf>[0] & {
    event?: Partial<ScheduledEvent> & { payloadBase64?: unknown };
    queuedBy?: unknown;
    ends?: unknown;
    notices?: unknown;
  };
  if (value.kind === 'ends' && Array.isArray(value.ends) && value.ends.every(isEmissionEnding)) return { kind: 'ends', ends: value.ends };
  const notice = noticeOf(value);
  if (notice !== undefined) return notice;
  if (value.kind === 'notices' && Array.isArray(value.notices) && value.notices.length > 0) {
    const notices = (value.notices as Parameters<typeof noticeOf>[0][]).map(noticeOf);
    if (notices.every((packed) => packed !== undefined)) return { kind: 'notices', notices };
  }
  const event = value.event;
  const payload = event === undefined ? undefined : payloadOf(event);
  if (
    value.kind !== 'event' ||
    typeof event?.id !== 'string' ||
    typeof event.tenant !== 'string' ||
    typeof event.target !== 'string' ||
    payload === undefined ||
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
      ...(typeof event.user === 'string' ? { user: event.user } : {}),
      target: event.target,
      payload,
      failureTopic: typeof event.failureTopic === 'string' ? event.failureTopic : undefined,
      dueAt: event.dueAt,
      version: event.version,
      ...(Array.isArray(event.labels) && event.labels.every((label) => typeof label === 'string') ? { labels: event.labels } : {}),
      ...(typeof event.series?.id === 'string' && typeof event.series.occurrence === 'number'
        ? { series: { id: event.series.id, occurrence: event.series.occurrence } }
        : {}),
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
    typeof end.event.dueAt === 'number' &&
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
  /** Sent by a resume: events held while their tenant was paused, to send now. */
  readonly resume?: boolean | undefined;
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
    resume: value.resume === true ? true : undefined,
  };
}

/**
 * A page of a job of the changes function. A resume sends a tenant's held events to the delay
 * queue, oldest first, a page after another: each page starts after `after`, the last event the
 * page before handed out (absent on the first page).
 */
export interface ChangeJob {
  readonly kind: 'resume';
  /** Names the job: its pages hand out chunks named after it and their cursor, so a page worked twice takes its own events again. */
  readonly jobId: string;
  readonly tenant: string;
  readonly after?: { readonly dueAt: number; readonly id: string } | undefined;
}

export function encodeChangeJob(job: ChangeJob): string {
  return JSON.stringify(job);
}

export function decodeChangeJob(body: string): ChangeJob {
  const value = JSON.parse(body) as Partial<ChangeJob>;
  const after = value.after;
  if (
    value.kind !== 'resume' ||
    typeof value.jobId !== 'string' ||
    typeof value.tenant !== 'string' ||
    (after !== undefined && (typeof after?.dueAt !== 'number' || typeof after.id !== 'string'))
  )
    throw new TypeError('not a change job');
  return { kind: 'resume', jobId: value.jobId, tenant: value.tenant, after };
}
