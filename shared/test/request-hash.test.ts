import { describe, expect, it } from 'vitest';
import { requestHashOf, type ScheduledEvent } from '../src/domain/event.js';
import { createdByOtherRequest } from '../src/domain/lifecycle.js';
import { topicArn } from './factories.js';

const request: ScheduledEvent = {
  id: 'c-1',
  tenant: 'acme',
  user: 'alice',
  target: topicArn('out'),
  payload: '{"invoice":42}',
  failureTopic: topicArn('failures'),
  dueAt: 1_900_000_000_000,
  version: 1,
};

describe('the digest of a schedule request', () => {
  it('is the same for the same content, whatever the event id, tenant or version', () => {
    expect(requestHashOf({ ...request, id: 'c-2', tenant: 'globex', version: 3 } as ScheduledEvent)).toBe(requestHashOf(request));
    expect(requestHashOf(request)).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it.each<[string, Partial<ScheduledEvent>]>([
    ['due time', { dueAt: request.dueAt + 1 }],
    ['target', { target: topicArn('elsewhere') }],
    ['payload', { payload: '{"invoice":43}' }],
    ['failure topic', { failureTopic: topicArn('other-failures') }],
    ['absent failure topic', { failureTopic: undefined }],
    ['user', { user: 'mallory' }],
  ])('changes with the %s', (_field, change) => {
    expect(requestHashOf({ ...request, ...change })).not.toBe(requestHashOf(request));
  });

  it('cannot be made equal by moving text from one field to the next', () => {
    expect(requestHashOf({ ...request, user: 'alice', payload: 'x' })).not.toBe(requestHashOf({ ...request, user: 'alicex', payload: '' }));
  });
});

describe('a record created by another request', () => {
  const hash = requestHashOf(request);

  it('is one whose digest differs', () => {
    expect(createdByOtherRequest({ requestHash: requestHashOf({ ...request, payload: 'other' }) }, hash)).toBe(true);
    expect(createdByOtherRequest({ requestHash: hash }, hash)).toBe(false);
  });

  it('is never one written before digests were kept', () => {
    expect(createdByOtherRequest({ requestHash: undefined }, hash)).toBe(false);
  });
});
