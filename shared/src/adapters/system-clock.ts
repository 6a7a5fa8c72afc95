import type { Clock } from '../app/ports/process.js';

/** The machine's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
