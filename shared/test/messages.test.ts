import { describe, expect, it } from 'vitest';
import { decodeDelayQueueMessage, decodeLoadingChunk, encodeDelayQueueMessage, encodeLoadingChunk } from '../src/domain/messages.js';
import { failureNotice } from '../src/domain/failure.js';
import { REASON } from '../src/domain/reasons.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import { SNS_MAX_MESSAGE_BYTES, SQS_MAX_MESSAGE_BYTES } from '../src/domain/limits.js';

const event: ScheduledEvent = {
  id: 'm-1',
  tenant: 'acme',
  user: 'zoë',
  target: 'arn:aws:sns:us-east-1:123456789012:out',
  payload: 'é 中 🚀 "quoted" \\ \u0001 \ud800',
  failureTopic: 'arn:aws:sns:us-east-1:123456789012:failures',
  dueAt: 1_900_000_000_123,
  version: 3,
};

describe('delay-queue messages', () => {
  it('carry an event through unchanged, as ASCII-only JSON that any SQS accepts', () => {
    const body = encodeDelayQueueMessage({ kind: 'event', event });
    expect(body).toMatch(/^[\x20-\x7e]*$/);
    expect(decodeDelayQueueMessage(body)).toEqual({ kind: 'event', event });
  });

  it.each([
    ['control characters, which JSON writes in six bytes each', '\u0001'.repeat(SNS_MAX_MESSAGE_BYTES - 500)],
    ['a mix of them and other characters', `${'\u0000\u0001é'.repeat(65_000)}🚀`],
  ])("carry the largest payload SNS takes within SQS's limit, when it is made of %s", (_case, payload) => {
    const body = encodeDelayQueueMessage({ kind: 'event', event: { ...event, payload }, queuedBy: 'copy-1' });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(SQS_MAX_MESSAGE_BYTES);
    expect(body).toMatch(/^[\x20-\x7e]*$/);
    expect(decodeDelayQueueMessage(body)).toEqual({ kind: 'event', event: { ...event, payload }, queuedBy: 'copy-1' });
  });

  it('carry a failure notice for the emitter to publish', () => {
    const notice = failureNotice(REASON.INVALID_DATE, 'bad date', { date: 'x' }, 0);
    const body = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', failureTopic: event.failureTopic, notice });
    expect(decodeDelayQueueMessage(body)).toEqual({
      kind: 'notice',
      noticeId: 'n-1',
      failureTopic: event.failureTopic,
      notice: JSON.parse(JSON.stringify(notice)),
    });
  });

  it('reject a body that is neither', () => {
    expect(() => decodeDelayQueueMessage(JSON.stringify({ kind: 'event', event: { id: 'x' } }))).toThrow(TypeError);
    expect(() => decodeDelayQueueMessage(JSON.stringify(event))).toThrow(TypeError);
  });

  it('reject a null body or a null event with a TypeError too, though not their own: the emitter refuses any error alike', () => {
    // The decoder reads the fields of `event` unchecked; every other mistyped field is refused by its own check (messages.properties.test.ts).
    expect(() => decodeDelayQueueMessage('null')).toThrow(TypeError);
    expect(() => decodeDelayQueueMessage(JSON.stringify({ kind: 'event', event: null }))).toThrow(TypeError);
  });

  it('send an event whose body is exactly the SQS limit as it is, and only a larger one in base64', () => {
    const empty = encodeDelayQueueMessage({ kind: 'event', event: { ...event, payload: '' } });
    const fitting = { kind: 'event' as const, event: { ...event, payload: 'a'.repeat(SQS_MAX_MESSAGE_BYTES - empty.length) } };
    const body = encodeDelayQueueMessage(fitting);
    expect(body.length).toBe(SQS_MAX_MESSAGE_BYTES);
    expect(JSON.parse(body).event.payload).toBe(fitting.event.payload);
    const larger = encodeDelayQueueMessage({ kind: 'event', event: { ...fitting.event, payload: `${fitting.event.payload}a` } });
    expect(JSON.parse(larger).event).not.toHaveProperty('payload');
    expect(decodeDelayQueueMessage(larger)).toEqual({ kind: 'event', event: { ...fitting.event, payload: `${fitting.event.payload}a` } });
  });

  it('leave a notice as it is, whatever its size: only an event carries a payload to rewrite', () => {
    const notice = { ...failureNotice(REASON.INVALID_DATE, 'bad date', { date: 'x' }, 0), event: 'x'.repeat(SQS_MAX_MESSAGE_BYTES) };
    const message = { kind: 'notice' as const, noticeId: 'n-1', failureTopic: event.failureTopic, notice };
    expect(encodeDelayQueueMessage(message)).toBe(JSON.stringify(message));
  });
});

describe('loading chunks', () => {
  it('round-trip their ids and reject anything else', () => {
    expect(decodeLoadingChunk(encodeLoadingChunk({ ids: ['a', 'b'] }))).toEqual({ ids: ['a', 'b'] });
    expect(() => decodeLoadingChunk('{"ids":[1]}')).toThrow(TypeError);
  });
});
