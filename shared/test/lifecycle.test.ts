import { describe, expect, it } from 'vitest';
import { EVENT_STATE, placedOnDelayQueueBy, type EventRecord } from '../src/domain/lifecycle.js';
import { lifecycleSteps, reachedAt } from '../src/domain/lifecycle-steps.js';
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

/** A near-path event as ingest leaves it: sent to the delay queue when it was created. */
const near = (overrides: Partial<EventRecord> = {}): EventRecord => record({ queuedAt: NOW, ...overrides });

const lines = (event: EventRecord) => lifecycleSteps(event).map(({ step, at, by }) => `${step} +${at - NOW} by ${by}`);

describe("an event's lifecycle", () => {
  it('names ingest for a near-path event it sent to the delay queue, and the emitter for its publish', () => {
    const steps = lifecycleSteps(near({ state: EVENT_STATE.emitted, emittedAt: NOW + 60_012, dueAt: NOW + 60_000 }));
    expect(steps).toEqual([
      { step: 'created', at: NOW, by: 'ingest', detail: 'input message create-1' },
      { step: 'queued', at: NOW, by: 'ingest', detail: 'sent to the delay queue' },
      { step: 'emitted', at: NOW + 60_012, by: 'the emitter', detail: 'its publish answered 12 ms after its due time' },
    ]);
  });

  it("keeps a rescheduled near-path event's first queueing, then the emitter carry's, in the order they happened", () => {
    const event = near({
      state: EVENT_STATE.emitted,
      version: 2,
      dueAt: NOW + 120_000,
      rescheduledAt: NOW + 10_000,
      lastChangeBy: 'reschedule-1',
      carriedAt: NOW + 60_000,
      emittedAt: NOW + 120_005,
    });
    expect(lines(event)).toEqual([
      'created +0 by ingest',
      'queued +0 by ingest',
      'rescheduled +10000 by input message reschedule-1',
      'queued +60000 by the emitter carry',
      'emitted +120005 by the emitter',
    ]);
    expect(lifecycleSteps(event)[2]?.detail).toBe(`to ${new Date(NOW + 120_000).toISOString()} (version 2)`);
  });

  it('shows a payload carried into the table, then the loader taking it', () => {
    const event = near({
      version: 2,
      payloadKept: 'record',
      rescheduledAt: NOW + 1,
      carriedToTableAt: NOW + 60_000,
      loadedAt: NOW + 900_000,
      loadedBy: 'chunk-1',
    });
    expect(lines(event)).toEqual([
      'created +0 by ingest',
      'queued +0 by ingest',
      'rescheduled +1 by a reschedule',
      'scheduled +60000 by the emitter carry',
      'queued +900000 by the loader',
    ]);
  });

  it('names the resume job, not the loader, for a held event sent again', () => {
    const event = near({
      heldAt: NOW + 60_000,
      resumedAt: NOW + 90_000,
      loadedBy: 'r-1#start',
      emittedAt: NOW + 90_010,
      state: EVENT_STATE.emitted,
    });
    expect(lines(event)).toEqual([
      'created +0 by ingest',
      'queued +0 by ingest',
      'held +60000 by the emitter',
      'queued +90000 by the resume job',
      'emitted +90010 by the emitter',
    ]);
  });

  it("names the loader, its sweep and ingest's resend each for its own send", () => {
    const far = record({ payloadKept: 'record', loadedAt: NOW + 5, sweptAt: NOW + 9, loadedBy: 'chunk-1' });
    expect(lines(far)).toEqual(['created +0 by ingest', 'queued +5 by the loader', "queued +9 by the loader's sweep"]);
    expect(lines(near({ resentAt: NOW + 3 }))).toEqual(['created +0 by ingest', 'queued +0 by ingest', 'queued +3 by ingest']);
  });

  it('does not name ingest for a record written before each step kept its time', () => {
    expect(lines(near({ queuedAt: NOW + 5, loadedBy: 'chunk-1', payloadKept: 'record' }))).toEqual([
      'created +0 by ingest',
      'queued +5 by the loader',
    ]);
  });

  it('ends with a failure or a cancel, and says who cancelled', () => {
    expect(lifecycleSteps(near({ state: EVENT_STATE.failed, failedAt: NOW + 60_001, reason: 'TARGET_NOT_FOUND' })).at(-1)).toEqual({
      step: 'failed',
      at: NOW + 60_001,
      by: 'the emitter',
      detail: 'TARGET_NOT_FOUND',
    });
    expect(lines(near({ state: EVENT_STATE.cancelled, cancelledAt: NOW + 7, cancelledBy: 'cancel-1' })).at(-1)).toBe(
      'cancelled +7 by input message cancel-1',
    );
  });

  it("gives a listing's SINCE as the time of the last step", () => {
    expect(reachedAt(near({ heldAt: NOW + 60_000, state: EVENT_STATE.held }))).toBe(NOW + 60_000);
    expect(reachedAt(record({ state: EVENT_STATE.scheduled, payloadKept: 'record' }))).toBe(NOW);
  });
});
