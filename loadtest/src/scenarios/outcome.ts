import { estimateCost } from '../cost/estimate.js';
import { round, type DeliverySummary, type ScenarioResult } from '../report/results.js';
import { costTarget, type ScenarioTargets, type TargetCheck } from '../report/targets.js';
import type { DeliveryOutcome } from './delivery.js';

/** EventBridge Scheduler plus the SNS publish: what an event costs there, the bound unless a scenario sets its own. */
export const COST_BOUND_PER_MILLION = 1.5;

/**
 * DynamoDB write units an event may cost on each path, whatever its payload's size, with the
 * scheduler's defaults: near path its record, its tenant-index entry (SCHEDULER_INDEX_QUEUED_EVENTS)
 * and its end; far path its record, its tenant-index entry, its take and its end. Each label adds
 * its entry and the entry's tenant-index entry.
 */
export const WRITE_UNITS_PER_EVENT_BOUND = { nearPath: 3, farPath: 4, perLabel: 2 } as const;

/** A delivery scenario's result: the measurement, its cost for the path it took, and its targets (the cost and write units checked here). */
export function deliveryResult(
  title: string,
  parameters: ScenarioResult['parameters'],
  outcome: DeliveryOutcome,
  checks: readonly TargetCheck[],
  path: 'near path' | 'far path' | 'half near, half far path',
  targets: ScenarioTargets,
  details: ScenarioResult['details'] = {},
): ScenarioResult {
  const cost = outcome.usage ? estimateCost(outcome.usage, outcome.counts.delivered) : undefined;
  return {
    title,
    parameters,
    delivery: summarizeDelivery(outcome),
    distribution: outcome.distribution,
    ...(outcome.byTenant
      ? { distributionByTenant: Object.fromEntries(Object.entries(outcome.byTenant).map(([tenant, own]) => [tenant, own.distribution])) }
      : {}),
    details: { path, ...details },
    cost,
    usage: outcome.usage,
    targets: [
      ...checks,
      ...(targets.costPerMillion === undefined ? [] : costTarget(cost, path, targets.costPerMillion)),
      ...writeUnitsTarget(outcome, path, targets.writeUnitsPerEvent),
    ],
  };
}

/** DynamoDB write units per delivered event, the scarce resource (every write, counters included). */
function writeUnitsTarget(outcome: DeliveryOutcome, path: string, pathBound: number | undefined): TargetCheck[] {
  if (outcome.usage === undefined || pathBound === undefined || outcome.counts.delivered === 0) return [];
  const perEvent = outcome.usage.dynamodb.writeUnits / outcome.counts.delivered;
  const labels = outcome.labelsPerEvent;
  const bound = pathBound + labels * WRITE_UNITS_PER_EVENT_BOUND.perLabel;
  const which = labels === 0 ? 'event' : `event with ${labels} label${labels === 1 ? '' : 's'}`;
  return [
    { name: `DynamoDB write units per ${which}, ${path}`, target: `≤ ${bound}`, actual: perEvent.toFixed(2), met: perEvent <= bound },
  ];
}

/** What a delivery measurement found, as the results report it. */
export function summarizeDelivery(outcome: DeliveryOutcome): DeliverySummary {
  const seconds = Math.max(0.001, (outcome.publish.finishedAt - outcome.publish.startedAt) / 1000);
  return {
    counts: outcome.counts,
    latenessMs: outcome.lateness,
    publishLatenessMs: outcome.publishLateness,
    byTenant: outcome.byTenant
      ? Object.fromEntries(
          Object.entries(outcome.byTenant).map(([tenant, own]) => [
            tenant,
            { counts: own.counts, latenessMs: own.lateness, stagesMs: own.stages },
          ]),
        )
      : undefined,
    stagesMs: outcome.stages,
    publish: {
      published: outcome.publish.published,
      failed: outcome.publish.failed,
      requests: outcome.publish.requests,
      seconds: round(seconds, 2),
      perSecond: Math.round(outcome.publish.published / seconds),
    },
    consumer: outcome.consumer,
    cpu: outcome.cpu,
    harnessLoopDelayMs: outcome.harnessLoopDelay,
    missingSample: outcome.missingSample,
  };
}
