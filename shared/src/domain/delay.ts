import { SQS_MAX_DELAY_SECONDS } from '../config.js';

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
