import type { SchedulerConfig } from '../config.js';
import { expiresAtFor } from '../domain/event.js';
import { type Refusal, refusalsToKeep } from '../domain/refusals.js';
import type { RefusalLog } from './ports/errors-and-refusals.js';
import type { Logger, SchedulerMetrics } from './ports/process.js';

/**
 * Keeps the batch's refusals for the tenants' operators and clients, after its accepted events
 * are sent: a few per tenant (see REFUSALS_KEPT), the rest counted. The failure notice and the
 * log line are the refusal's report; a write that fails here is logged, and fails no record.
 */
export async function keepRefusals(
  deps: {
    readonly config: Pick<SchedulerConfig, 'retentionSeconds'>;
    readonly refusals: RefusalLog;
    readonly logger: Logger;
    readonly metrics: SchedulerMetrics;
  },
  refused: readonly Refusal[],
  now: number,
): Promise<void> {
  if (refused.length === 0) return;
  try {
    await deps.refusals.keep(refusalsToKeep(refused), expiresAtFor(now, deps.config.retentionSeconds));
  } catch (error) {
    deps.metrics.count('RefusalsNotKept', refused.length);
    deps.logger.warn({ err: error, refusals: refused.length }, 'refusals could not be kept for the refusal log');
  }
}
