import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { watchLoopDelay } from '../src/loop-delay.js';

describe("the harness's event-loop delay", () => {
  it('reports a loop held up for 80 ms as late by most of that at its worst, without the watch’s own interval', async () => {
    const watch = watchLoopDelay();
    await sleep(50);
    const until = Date.now() + 80;
    while (Date.now() < until) {
      // Held up, as a long synchronous task holds the harness.
    }
    await sleep(30);
    const delay = watch.stop();

    expect(delay.max).toBeGreaterThanOrEqual(60);
    expect(delay.p50).toBeLessThan(delay.max);
    expect(delay.p50).toBeGreaterThanOrEqual(0);
  });
});
