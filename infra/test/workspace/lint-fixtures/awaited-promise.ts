// Lint fixtures, kept out of `pnpm lint` (biome.jsonc leaves this folder out): lint.test.ts lints
// floating-promise.ts, which calls a port's async method and leaves its promise floating, so a
// rejection would go unseen, and awaited-promise.ts, the same code with the call awaited.
import type { DelayQueue } from '@adhoc-scheduler/shared';

export async function putOff(queue: DelayQueue, receiptHandle: string, delaySeconds: number): Promise<void> {
  await queue.retryLater(receiptHandle, delaySeconds);
}
