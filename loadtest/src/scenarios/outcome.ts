import { estimateCost } from '../cost/estimate.js';
import { costTarget, summarizeDelivery, type ScenarioResult, type TargetCheck } from '../report/results.js';
import type { DeliveryOutcome } from './delivery.js';

/** EventBridge Scheduler plus the SNS publish: the most the issue lets an event cost. */
export const COST_BOUND_PER_MILLION = 1.5;

/** A delivery scenario's result: the measurement, its cost for the path it took, and its targets. */
export function deliveryResult(
  title: string,
  parameters: ScenarioResult['parameters'],
  outcome: DeliveryOutcome,
  targets: readonly TargetCheck[],
  path: 'near path' | 'far path' | 'half near, half far path',
  details: ScenarioResult['details'] = {},
): ScenarioResult {
  const cost = outcome.usage ? estimateCost(outcome.usage, outcome.counts.delivered) : undefined;
  return {
    title,
    parameters,
    delivery: summarizeDelivery(outcome),
    distribution: outcome.distribution,
    ...(outcome.byTenant ? { distributionByTenant: Object.fromEntries(Object.entries(outcome.byTenant).map(([tenant, own]) => [tenant, own.distribution])) } : {}),
    details: { path, ...details },
    cost,
    usage: outcome.usage,
    targets: [...targets, ...costTarget(cost, path, COST_BOUND_PER_MILLION)],
  };
}
