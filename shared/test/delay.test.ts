import { describe, expect, it } from 'vitest';
import { delaySecondsFor, remainingWaitMs, waitUntil } from '../src/domain/delay.js';
import { FakeClock } from './fakes.js';

const NOW = Date.UTC(2030, 5, 15, 12, 30, 0, 123);
const LEAD_MS = 300;
const SQS_MAX_DELAY_SECONDS = 900;

describe('delaySecondsFor', () => {
  it('never makes an event visible later than its due time minus the lead, and wastes less than a second', () => {
    for (let untilDueMs = 0; untilDueMs <= 20_000; untilDueMs += 7) {
      const delay = delaySecondsFor(NOW + untilDueMs, NOW, LEAD_MS);
      const visibleAt = NOW + delay * 1000;
      expect(visibleAt).toBeLessThanOrEqual(Math.max(NOW, NOW + untilDueMs - LEAD_MS));
      expect(NOW + untilDueMs - LEAD_MS - visibleAt).toBeLessThan(1000);
    }
  });

  it('is a whole number of seconds', () => {
    for (const untilDueMs of [1, 999, 1_000, 1_301, 45_678, 599_999]) {
      expect(Number.isInteger(delaySecondsFor(NOW + untilDueMs, NOW, LEAD_MS))).toBe(true);
    }
  });

  it('is zero for an event due within the lead, now, or in the past', () => {
    expect(delaySecondsFor(NOW + LEAD_MS + 999, NOW, LEAD_MS)).toBe(0);
    expect(delaySecondsFor(NOW + LEAD_MS - 1, NOW, LEAD_MS)).toBe(0);
    expect(delaySecondsFor(NOW, NOW, LEAD_MS)).toBe(0);
    expect(delaySecondsFor(NOW - 60_000, NOW, LEAD_MS)).toBe(0);
  });

  it('is one second as soon as a full second fits before the lead', () => {
    expect(delaySecondsFor(NOW + LEAD_MS + 1_000, NOW, LEAD_MS)).toBe(1);
  });

  it('stops at the SQS maximum of 900 seconds', () => {
    expect(delaySecondsFor(NOW + LEAD_MS + 900_000, NOW, LEAD_MS)).toBe(SQS_MAX_DELAY_SECONDS);
    expect(delaySecondsFor(NOW + 3_600_000, NOW, LEAD_MS)).toBe(SQS_MAX_DELAY_SECONDS);
  });

  it('without a lead, aims at the due time itself', () => {
    expect(delaySecondsFor(NOW + 5_000, NOW, 0)).toBe(5);
    expect(delaySecondsFor(NOW + 4_999, NOW, 0)).toBe(4);
  });
});

describe('remainingWaitMs', () => {
  it('is the time left until due, and zero once due or late', () => {
    expect(remainingWaitMs(NOW + 250, NOW)).toBe(250);
    expect(remainingWaitMs(NOW, NOW)).toBe(0);
    expect(remainingWaitMs(NOW - 40, NOW)).toBe(0);
  });
});

describe('waitUntil', () => {
  it('asks the clock again after each sleep: a timer that fires a millisecond early never makes it return early', async () => {
    const clock = new FakeClock(NOW, 1);
    await waitUntil(clock, NOW + 250);
    expect(clock.now()).toBe(NOW + 250);
    expect(clock.sleeps).toEqual([250, 1]);
  });

  it('returns at or after the due time however early the timers fire', async () => {
    const clock = new FakeClock(NOW, 40);
    await waitUntil(clock, NOW + 250);
    expect(clock.now()).toBeGreaterThanOrEqual(NOW + 250);
  });

  it('does not sleep for an event already due', async () => {
    const clock = new FakeClock(NOW, 1);
    await waitUntil(clock, NOW);
    await waitUntil(clock, NOW - 10);
    expect(clock.sleeps).toEqual([]);
  });
});
