import type { OpenEventsCensus, OpenEventsCounter } from './ports/tenants.js';

export interface Reconciliation {
  readonly tenant: string;
  /** Open events found by the count. */
  readonly counted: number;
  /** What the counter said just before and just after the count. */
  readonly counterBefore: number;
  readonly counterAfter: number;
  /** What was added to the counter. */
  readonly correction: number;
  /** True when the counter did not move during the count: the correction is then exact. */
  readonly exact: boolean;
}

/**
 * Recounts a tenant's open events and corrects its counter by the difference. A count is not a
 * snapshot: events that start or end while it runs may or may not be in it. The counter is
 * read before and after, and the correction taken against their middle, so it is exact when
 * nothing moved and otherwise off by at most what moved. The correction is added, never set,
 * so places taken and freed meanwhile are kept.
 */
export async function reconcileOpenEvents(
  deps: { readonly counter: OpenEventsCounter; readonly census: OpenEventsCensus },
  tenant: string,
): Promise<Reconciliation> {
  const counterBefore = await deps.counter.openEvents(tenant);
  const counted = await deps.census.countOpen(tenant);
  const counterAfter = await deps.counter.openEvents(tenant);
  const correction = Math.round(counted - (counterBefore + counterAfter) / 2);
  if (correction !== 0) await deps.counter.correctOpenEvents(tenant, correction);
  return { tenant, counted, counterBefore, counterAfter, correction, exact: counterBefore === counterAfter };
}
