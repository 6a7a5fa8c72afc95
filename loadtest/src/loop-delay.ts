import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the watch's timer asks to run, ms. */
const RESOLUTION_MS = 10;

/**
 * How much later than asked the harness's own event loop ran a timer, ms. A message the harness
 * receives is stamped after such a wait too, so this is the harness's own share of the lateness
 * it measures.
 */
export interface LoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export function watchLoopDelay(): { stop(): LoopDelay } {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // The histogram holds the time between the timer's runs: its interval plus the delay.
  const lateMs = (nanoseconds: number): number => Math.max(0, Math.round((nanoseconds / 1e6 - RESOLUTION_MS) * 10) / 10);
  return {
    stop() {
      histogram.disable();
      return { p50: lateMs(histogram.percentile(50)), p99: lateMs(histogram.percentile(99)), max: lateMs(histogram.max) };
    },
  };
}
