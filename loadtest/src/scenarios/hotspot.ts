import { planUniform } from '../plan.js';
import type { ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult, WRITE_UNITS_PER_EVENT_BOUND } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const TARGETS = {
  delivery: { duplicatesAllowed: false },
  latenessMs: { p99: 2000 },
  // Full batches make an event cheaper: the bound is EventBridge Scheduler's own price, without the publish.
  costPerMillion: 1.0,
  writeUnitsPerEvent: WRITE_UNITS_PER_EVENT_BOUND.nearPath,
} satisfies ScenarioTargets;

/** N events all due within the same second, published at once ahead of it (the near path). */
async function runHotspot(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const now = Date.now();
  // The due second starts on a whole second, as a client naming "12:00:00" would.
  const firstDueAt = Math.ceil((now + params.aheadSeconds * 1000) / 1000) * 1000;
  const events = planUniform({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    firstDueAt,
    spreadMs: params.seconds * 1000,
    publishAheadMs: undefined,
    publishFrom: now,
  });
  const outcome = await measureDelivery(ctx, events);
  return deliveryResult(
    `hotspot: ${params.events.toLocaleString('en-US')} events due within ${params.seconds === 1 ? 'the same second' : `${params.seconds} s`}`,
    { events: params.events, seconds: params.seconds, dueSecondsAfterStart: params.aheadSeconds, payloadBytes: ctx.measure.payloadBytes },
    outcome,
    [...correctnessTargets(outcome.counts), ...latenessTargets(outcome.lateness, TARGETS.latenessMs)],
    'near path',
    TARGETS,
  );
}

export const hotspot: Scenario = {
  description: `N events due within the same second, all published at once [10,000, due 30 s later]`,
  run: runHotspot,
  defaults: {
    events: 10_000,
    quietEvents: 0,
    seconds: 1,
    aheadSeconds: 30,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'near',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 120,
  service: { startedForIt: false },
  targets: TARGETS,
};
