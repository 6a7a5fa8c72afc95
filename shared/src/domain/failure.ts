import { createHash } from 'node:crypto';
import { snsMessageBytes, type ScheduledEvent } from './event.js';
import { SNS_MAX_MESSAGE_BYTES } from './limits.js';
import type { ReasonCode } from './reasons.js';
import { wellFormedCopy } from './unicode.js';

/** What a client's failure topic (or its tenant's dead-letter topic) receives (also logged). */
export interface FailureNotice {
  readonly reason: ReasonCode;
  readonly message: string;
  /** The scheduler's event id, when the event got far enough to have one. */
  readonly eventId?: string | undefined;
  /**
   * The request as the client wrote it: the parsed message, or its raw text when it was not JSON;
   * at emission, the schedule request as it stands (see requestQuote).
   */
  readonly event: unknown;
  readonly failedAt: string;
  /** What the message says, for machines: `{}` when it has nothing to add. */
  readonly details: Readonly<Record<string, unknown>>;
  /** Present when the quote of the event was cut to fit in one SNS message: what was cut, and how to recognise it. */
  readonly truncated?: NoticeTruncation | undefined;
}

export interface NoticeTruncation {
  /** `event.payload` (the request's payload), or `event` (the whole quote, as JSON text). */
  readonly field: 'event.payload' | 'event';
  /** The full text's size in UTF-8 bytes. */
  readonly bytes: number;
  /** SHA-256 of the full text's UTF-8 bytes, in hex. */
  readonly sha256: string;
}

/**
 * Where a notice goes: the client's failure topic when the request named one it may use, and
 * the tenant's dead-letter topic when it did not, or when the failure topic refuses the notice.
 */
export interface NoticeDestination {
  readonly failureTopic?: string | undefined;
  readonly deadLetterTopic?: string | undefined;
}

/** Message attributes of a published notice, so a subscription can filter on the reason. */
export function noticeAttributes(notice: Pick<FailureNotice, 'reason'>): Record<string, string> {
  return { 'scheduler-reason': notice.reason };
}

/**
 * Longest `message` a notice carries, and longest text of its `details`: either may quote the
 * request (a date, the path of a key), and the quote is in `event` anyway.
 */
const MAX_TEXT_CHARACTERS = 1024;

/** A text of the notice: at most MAX_TEXT_CHARACTERS, and well-formed (see failureNotice). */
function shortened(text: string): string {
  if (text.length <= MAX_TEXT_CHARACTERS) return text.toWellFormed();
  return `${text.slice(0, isHighSurrogate(text.charCodeAt(MAX_TEXT_CHARACTERS - 1)) ? MAX_TEXT_CHARACTERS - 1 : MAX_TEXT_CHARACTERS).toWellFormed()}...`;
}

/** The first half of a surrogate pair: a cut after it would leave half a character. */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * An accepted event as its schedule request would say it, with the fields a client writes
 * (`date` in ISO 8601, `failure_topic`): what a notice quotes at emission, as ingest's quote the
 * message it refuses. The date is the latest reschedule's.
 */
export function requestQuote(event: ScheduledEvent): Record<string, unknown> {
  return {
    date: new Date(event.dueAt).toISOString(),
    target: event.target,
    user: event.user,
    payload: event.payload,
    ...(event.failureTopic === undefined ? {} : { failure_topic: event.failureTopic }),
    ...(event.labels === undefined || event.labels.length === 0 ? {} : { labels: event.labels }),
  };
}

/** The one way a notice is made: a message in words, the request quoted, details always an object. */
export function failureNotice(
  reason: ReasonCode,
  message: string,
  event: unknown,
  now: number,
  extra: { eventId?: string | undefined; details?: Readonly<Record<string, unknown>> | undefined } = {},
): FailureNotice {
  const details = Object.fromEntries(
    Object.entries(extra.details ?? {}).map(([key, value]) => [key, typeof value === 'string' ? shortened(value) : value]),
  );
  // Well-formed, each lone surrogate replaced by U+FFFD (a request refused as INVALID_UNICODE, an event stored before it
  // existed): JSON would write one as an escape, which a client's parser turns back into half a character.
  const quote = wellFormedCopy(event);
  return fitted({
    reason,
    message: shortened(message),
    eventId: extra.eventId,
    event: quote,
    failedAt: new Date(now).toISOString(),
    details,
  });
}

function fits(notice: FailureNotice): boolean {
  return snsMessageBytes(JSON.stringify(notice), noticeAttributes(notice)) <= SNS_MAX_MESSAGE_BYTES;
}

/**
 * The notice as it fits in one SNS message: a notice is never dropped for its size. The
 * request's payload is cut first (a 256 KiB payload quoted with escapes outgrows the limit);
 * a quote too large for another reason is cut as JSON text.
 */
function fitted(notice: FailureNotice): FailureNotice {
  if (fits(notice)) return notice;
  const { event } = notice;
  if (typeof event === 'object' && event !== null && !Array.isArray(event)) {
    const request = event as Readonly<Record<string, unknown>>;
    const { payload } = request;
    if (typeof payload === 'string') {
      const cut = cutToFit(payload, (text, truncated) => ({
        ...notice,
        event: { ...request, payload: text },
        truncated: { field: 'event.payload', ...truncated },
      }));
      if (cut !== undefined) return cut;
    }
  }
  const text = typeof event === 'string' ? event : JSON.stringify(event);
  const cut = cutToFit(text, (prefix, truncated) => ({ ...notice, event: prefix, truncated: { field: 'event', ...truncated } }));
  // Unreachable: without its event a notice is a few kilobytes at most (its texts are shortened).
  if (cut === undefined) throw new RangeError(`a failure notice (${notice.reason}) does not fit in one SNS message even without its event`);
  return cut;
}

/** The notice built with the longest prefix of `text` that fits; undefined if not even an empty one does. */
function cutToFit(
  text: string,
  build: (prefix: string, truncated: Omit<NoticeTruncation, 'field'>) => FailureNotice,
): FailureNotice | undefined {
  const truncated = { bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') };
  const withPrefix = (length: number) => build(text.slice(0, length), truncated);
  if (!fits(withPrefix(0))) return undefined;
  // The notice only grows with the prefix: search for the longest that fits.
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(withPrefix(middle))) low = middle;
    else high = middle - 1;
  }
  // Never half a surrogate pair.
  if (low > 0 && isHighSurrogate(text.charCodeAt(low - 1))) low -= 1;
  return withPrefix(low);
}
