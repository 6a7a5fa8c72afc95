import { planUniform } from '../plan.js';
import type { ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult, WRITE_UNITS_PER_EVENT_BOUND } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const WARMUP_SECONDS = 5;

const TARGETS = {
  delivery: { duplicatesAllowed: false },
  latenessMs: { p50: 5, p99: 15, max: 100 },
  // At 33 events a second batches are small; the bound is what the scheduler may cost there.
  costPerMillion: 3.5,
  writeUnitsPerEvent: WRITE_UNITS_PER_EVENT_BOUND.nearPath,
} satisfies ScenarioTargets;

/** N events due evenly over S seconds, each published a few seconds (plus a fraction) before it is due: the near path. */
async function runSteady(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const now = Date.now();
  const aheadMs = params.aheadSeconds * 1000;
  const spreadMs = params.seconds * 1000;
  // The same rate for a few seconds first, so that every process has compiled its hot paths and opened its connections.
  const warmupMs = WARMUP_SECONDS * 1000;
  const common = { user: ctx.user, publishAheadMs: aheadMs, publishJitterMs: 1000, publishFrom: now };
  const warmup = planUniform({
    ...common,
    runId: `${ctx.runId}-warmup`,
    count: Math.ceil((params.events * warmupMs) / spreadMs),
    firstDueAt: now + aheadMs,
    spreadMs: warmupMs,
  });
  const events = planUniform({ ...common, runId: ctx.runId, count: params.events, firstDueAt: now + aheadMs + warmupMs, spreadMs });
  const outcome = await measureDelivery(ctx, events, { warmup });
  return deliveryResult(
    `steady: ${params.events.toLocaleString('en-US')} events due evenly over ${params.seconds} s`,
    {
      events: params.events,
      seconds: params.seconds,
      warmupSeconds: WARMUP_SECONDS,
      publishedAheadSeconds: `${params.aheadSeconds} to ${params.aheadSeconds + 1}`,
      payloadBytes: ctx.measure.payloadBytes,
    },
    outcome,
    [...correctnessTargets(outcome.counts), ...latenessTargets(outcome.lateness, TARGETS.latenessMs)],
    'near path',
    TARGETS,
  );
}

export const steady: Scenario = {
  description: `N events due evenly over S seconds, each published --ahead seconds before it is
due [2,000 over 60 s, 10 s ahead]`,
  run: runSteady,
  defaults: {
    events: 2_000,
    quietEvents: 0,
    seconds: 60,
    aheadSeconds: 10,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'near',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 30,
  service: { startedForIt: false },
  targets: TARGETS,
};
