import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { snsMessageBytes } from '../src/domain/event.js';
import { failureNotice, noticeAttributes, type FailureNotice } from '../src/domain/failure.js';
import { REASON } from '../src/domain/reasons.js';
import { scheduleRequest } from './factories.js';

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
