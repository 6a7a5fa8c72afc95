import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publishNotice, reportFailure } from '../src/app/failures.js';
import { snsMessageBytes } from '../src/domain/event.js';
import { failureNotice, noticeAttributes, type FailureNotice } from '../src/domain/failure.js';
import { EventRejectedError, REASON, TransientError } from '../src/domain/reasons.js';
import { scheduleRequest, topicArn } from './factories.js';
import { FakeClock, RecordingLogger, RecordingMetrics, RecordingPublisher, type Publish } from './fakes.js';

const SNS_MESSAGE_LIMIT_BYTES = 256 * 1024;
const NOW = Date.UTC(2030, 0, 1);

/** The notice's size as SNS counts it when the emitter publishes it. */
const publishedBytes = (notice: FailureNotice): number => snsMessageBytes(JSON.stringify(notice), noticeAttributes(notice));
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('a failure notice', () => {
  it('quotes the request whole when it fits', () => {
    const request = scheduleRequest({ date: 'next tuesday' });
    const notice = failureNotice(REASON.INVALID_DATE, 'bad date', request, NOW, { details: { field: 'date' } });
    expect(notice).toEqual({
      reason: REASON.INVALID_DATE,
      message: 'bad date',
      event: request,
      failedAt: '2030-01-01T00:00:00.000Z',
      details: { field: 'date' },
    });
    expect(notice.truncated).toBeUndefined();
  });

  it.each([
    ['quotes, which JSON escapes to twice their size', '"'.repeat(200_000)],
    ['control characters, six times their size', '\u0001'.repeat(60_000)],
    ['a payload that alone fills an SNS message', 'x'.repeat(SNS_MESSAGE_LIMIT_BYTES - 200)],
  ])('cuts the payload of a request full of %s to fit one SNS message, keeping its size and hash', (_case, payload) => {
    const request = scheduleRequest({ date: 'next tuesday', payload, id: 'order-1' });
    const notice = failureNotice(REASON.INVALID_DATE, 'bad date', request, NOW);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
    // Nearly all of the room is used: at most one more escaped character would have fitted.
    expect(publishedBytes(notice)).toBeGreaterThan(SNS_MESSAGE_LIMIT_BYTES - 12);
    expect(notice.truncated).toEqual({ field: 'event.payload', bytes: Buffer.byteLength(payload), sha256: sha256(payload) });
    const quoted = notice.event as Record<string, unknown>;
    expect({ ...quoted, payload: undefined }).toEqual({ ...request, payload: undefined });
    expect(payload.startsWith(String(quoted.payload))).toBe(true);
  });

  it('never cuts a character in half', () => {
    const payload = '🚀'.repeat(70_000);
    const notice = failureNotice(REASON.TARGET_NOT_FOUND, 'gone', scheduleRequest({ payload }), NOW);
    const kept = String((notice.event as Record<string, unknown>).payload);
    expect(kept.length % 2).toBe(0);
    expect(payload.startsWith(kept)).toBe(true);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
  });

  it('cuts a raw text that was not JSON', () => {
    const text = `{"payload": "${'"'.repeat(200_000)}`;
    const notice = failureNotice(REASON.INVALID_JSON, 'not JSON', text, NOW);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
    expect(notice.truncated).toEqual({ field: 'event', bytes: Buffer.byteLength(text), sha256: sha256(text) });
    expect(text.startsWith(String(notice.event))).toBe(true);
  });

  it('cuts a request too large for another reason as JSON text', () => {
    const request = { ...scheduleRequest({ payload: 42 }), note: '"'.repeat(200_000) };
    const notice = failureNotice(REASON.INVALID_FIELD, 'payload is not a string', request, NOW);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
    expect(notice.truncated).toMatchObject({ field: 'event', sha256: sha256(JSON.stringify(request)) });
  });

  it('keeps the texts of its details short: the path of a key as long as SNS allows', () => {
    const path = 'k'.repeat(SNS_MESSAGE_LIMIT_BYTES - 500);
    const notice = failureNotice(REASON.INVALID_UNICODE, `the key "${path}" is not well-formed Unicode`, { [path]: 'bad \ufffd' }, NOW, {
      details: { field: path },
    });
    expect(notice.details?.field).toBe(`${'k'.repeat(1024)}...`);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
  });

  it('never cuts a character in half in its message or its details', () => {
    // A surrogate pair spans the 1,024th and 1,025th characters.
    const text = `x${'😀'.repeat(600)}`;
    const notice = failureNotice(REASON.INVALID_UNICODE, text, {}, NOW, { details: { field: text } });
    expect(notice.message).toBe(`${text.slice(0, 1023)}...`);
    expect(notice.message.isWellFormed()).toBe(true);
    expect(notice.details?.field).toBe(notice.message);
  });

  it('quotes the event well-formed, each lone surrogate replaced by U+FFFD, as are its message and details', () => {
    const stored = { id: 'm-1', user: 'bad \ud800', payload: '\udc00 too', 'key \udbff': ['\ud83d'] };
    const notice = failureNotice(REASON.PAYLOAD_NOT_PUBLISHABLE, 'cannot encode \ud800', stored, NOW, {
      details: { field: 'user \ud800' },
    });
    expect(notice.event).toEqual({ id: 'm-1', user: 'bad \ufffd', payload: '\ufffd too', 'key \ufffd': ['\ufffd'] });
    expect(notice.message).toBe('cannot encode \ufffd');
    expect(notice.details).toEqual({ field: 'user \ufffd' });
  });

  it('keeps its message short, whatever the request put in it', () => {
    const date = '"'.repeat(200_000);
    const notice = failureNotice(REASON.INVALID_DATE, `"${date}" is not an ISO-8601 date-time`, scheduleRequest({ date }), NOW);
    expect(notice.message.length).toBeLessThan(1100);
    expect(publishedBytes(notice)).toBeLessThanOrEqual(SNS_MESSAGE_LIMIT_BYTES);
  });
});

describe('reporting a failure', () => {
  const FAILURES = topicArn('failures');
  const DEAD_LETTERS = topicArn('dead-letters');
  const notice = { ...failureNotice(REASON.INVALID_DATE, 'bad date', scheduleRequest(), NOW), eventId: 'e-1' };

  /** A publisher that answers each publish with `refusal`, and remembers every topic it was asked to publish to. */
  function setup(refusal: (publish: Publish) => Error | undefined = () => undefined) {
    const tried: string[] = [];
    const publisher = new RecordingPublisher(new FakeClock(NOW), (publish) => {
      tried.push(publish.topic);
      return refusal(publish);
    });
    const logger = new RecordingLogger();
    const metrics = new RecordingMetrics();
    return { publisher, tried, logger, metrics, send: publishNotice({ publisher, logger }) };
  }

  it('logs it with its reason code and event id, counts it, and publishes the notice to the failure topic', async () => {
    const { publisher, logger, metrics, send } = setup();
    await reportFailure({ logger, metrics }, send, notice, { failureTopic: FAILURES, deadLetterTopic: DEAD_LETTERS });
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { reason: REASON.INVALID_DATE, eventId: 'e-1', failureTopic: FAILURES, deadLetterTopic: DEAD_LETTERS, notice },
        message: 'bad date',
      },
    ]);
    expect(metrics.counts.EventsFailed).toBe(1);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([FAILURES]);
  });

  it('publishes to the dead-letter topic when the failure topic cannot take the notice, and logs why', async () => {
    const { publisher, logger, send } = setup(({ topic }) =>
      topic === FAILURES ? new EventRejectedError(REASON.TARGET_NOT_FOUND, 'no such topic') : undefined,
    );
    await send({ failureTopic: FAILURES, deadLetterTopic: DEAD_LETTERS }, notice);
    expect(publisher.published.map(({ topic }) => topic)).toEqual([DEAD_LETTERS]);
    expect(logger.at('warn')).toEqual([
      {
        level: 'warn',
        fields: { reason: REASON.TARGET_NOT_FOUND, topic: FAILURES, eventId: 'e-1' },
        message: 'failure topic cannot take the notice',
      },
    ]);
  });

  it('tries a topic that is both the failure and the dead-letter topic once', async () => {
    const { tried, send } = setup(() => new EventRejectedError(REASON.TARGET_ACCESS_DENIED, 'denied'));
    await send({ failureTopic: FAILURES, deadLetterTopic: FAILURES }, notice);
    expect(tried).toEqual([FAILURES]);
  });

  it('gives the notice up, with a warning, when the failure topic cannot take it and the tenant has no dead-letter topic', async () => {
    const { tried, logger, send } = setup(() => new EventRejectedError(REASON.TARGET_NOT_FOUND, 'no such topic'));
    await send({ failureTopic: FAILURES, deadLetterTopic: undefined }, notice);
    expect(tried).toEqual([FAILURES]);
    expect(logger.at('warn').map(({ message }) => message)).toEqual(['failure topic cannot take the notice']);
  });

  it('lets a transient error through, so that the record is retried, and tries no other topic', async () => {
    const { tried, send } = setup(() => new TransientError('SNS throttled'));
    await expect(send({ failureTopic: FAILURES, deadLetterTopic: DEAD_LETTERS }, notice)).rejects.toThrow('SNS throttled');
    expect(tried).toEqual([FAILURES]);
  });
});
