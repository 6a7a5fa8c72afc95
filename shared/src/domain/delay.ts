import { SQS_MAX_DELAY_SECONDS } from './limits.js';

/**
 * SQS DelaySeconds for an event, in whole seconds: the message becomes visible at least
 * `leadMs` before the due time (never after it), so the emitter can wait out the remainder.
 */
export function delaySecondsFor(dueAt: number, now: number, leadMs: number): number {
  const seconds = Math.floor((dueAt - now - leadMs) / 1000);
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, seconds));
}

/** Milliseconds the emitter still has to hold an event (0 when it is due or past due). */
export function remainingWaitMs(dueAt: number, now: number): number {
  return Math.max(0, dueAt - now);
}

/** Waits until `dueAt` by this clock: a timer may fire a millisecond early, so the clock is asked again. */
export async function waitUntil(clock: { now(): number; sleep(ms: number): Promise<void> }, dueAt: number): Promise<void> {
  for (let wait = remainingWaitMs(dueAt, clock.now()); wait > 0; wait = remainingWaitMs(dueAt, clock.now())) await clock.sleep(wait);
}
