import { describe, expect, it } from 'vitest';
import { EVENT_STATE, placedOnDelayQueueBy, type EventRecord } from '../src/domain/lifecycle.js';
import { topicArn } from './factories.js';

const NOW = 1_900_000_000_000;

const record = (overrides: Partial<EventRecord> = {}): EventRecord => ({
  id: 'm-1',
  tenant: 'acme',
  user: 'alice',
  target: topicArn('o'),
  payloadKept: 'queue',
  dueAt: NOW + 60_000,
  version: 1,
  state: EVENT_STATE.queued,
  inputMessageId: 'create-1',
  queuedBy: 'copy-1',
  createdAt: NOW,
  expiresAt: 0,
  ...overrides,
});

describe('the input message that placed an event on the delay queue', () => {
  it('is its create for the first version, sent straight to the delay queue', () => {
    expect(placedOnDelayQueueBy(record())).toBe('create-1');
  });

  it('is the reschedule that made a later version', () => {
    expect(placedOnDelayQueueBy(record({ version: 3, payloadKept: 'record', lastChangeBy: 'reschedule-2' }))).toBe('reschedule-2');
  });

  it.each([
    ['stored for the loader', { state: EVENT_STATE.scheduled }],
    ['taken by loading since', { loadedBy: 'chunk-1' }],
    ['emitted', { state: EVENT_STATE.emitted }],
    ['cancelled', { state: EVENT_STATE.cancelled }],
  ])('is nobody once the event is %s', (_case, overrides: Partial<EventRecord>) => {
    expect(placedOnDelayQueueBy(record(overrides))).toBeUndefined();
  });
});
