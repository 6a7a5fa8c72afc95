import { TransientError } from '../domain/reasons.js';
import type { Clock } from './ports/process.js';

/**
 * Pauses before a step is tried again within the same invocation: two more tries, about a second
 * in all. One failed call among the dozens a loader tick or a loading chunk makes would otherwise
 * fail all of it, and wait for the next tick or the message's visibility timeout (tens of seconds
 * of lateness for events due within them).
 */
export const QUICK_RETRY_PAUSES_MS = [200, 800] as const;

/**
 * Runs a step, and runs it again after each pause while it fails with a TransientError (a failure
 * a retry may fix); any other error, or the last try's, is thrown. The step must be safe to run
 * twice: every one it wraps is a read, or a write whose repeat the next step tolerates.
 */
export async function withQuickRetries<T>(
  clock: Pick<Clock, 'sleep'>,
  step: () => Promise<T>,
  onRetry: (error: TransientError) => void,
): Promise<T> {
  for (const pauseMs of QUICK_RETRY_PAUSES_MS) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      onRetry(error);
      await clock.sleep(pauseMs);
    }
  }
  return step();
}
