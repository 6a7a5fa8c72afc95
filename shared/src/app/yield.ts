import { setImmediate } from 'node:timers/promises';

/**
 * Lets the process's other work run before going on: its I/O callbacks and timers, the
 * emitter's above all, which share one event loop with loading and ingest in the local service.
 */
export async function yieldToOtherWork(): Promise<void> {
  await setImmediate();
}
