import { planUniform } from '../plan.js';
import { correctnessTargets, latenessTarget, type ScenarioResult } from '../report/results.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';

const WARMUP_SECONDS = 5;

/** N events due evenly over S seconds, each published a few seconds (plus a fraction) before it is due: the near path. */
/** At 33 events a second batches are small; the bound is what the scheduler may cost there. */
const STEADY_COST_BOUND_PER_MILLION = 3.0;

export async function runSteady(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const now = Date.now();
  const aheadMs = params.aheadSeconds * 1000;
  const spreadMs = params.seconds * 1000;
  // The same rate for a few seconds first, so that every process has compiled its hot paths and opened its connections.
  const warmupMs = WARMUP_SECONDS * 1000;
  const common = { user: ctx.user, publishAheadMs: aheadMs, publishJitterMs: 1000, publishFrom: now };
  const warmup = planUniform({ ...common, runId: `${ctx.runId}-warmup`, count: Math.ceil((params.events * warmupMs) / spreadMs), firstDueAt: now + aheadMs, spreadMs: warmupMs });
  const events = planUniform({ ...common, runId: ctx.runId, count: params.events, firstDueAt: now + aheadMs + warmupMs, spreadMs });
  const outcome = await measureDelivery(ctx, events, { warmup });
  return deliveryResult(
    `steady: ${params.events.toLocaleString('en-US')} events due evenly over ${params.seconds} s`,
    { events: params.events, seconds: params.seconds, warmupSeconds: WARMUP_SECONDS, publishedAheadSeconds: `${params.aheadSeconds} to ${params.aheadSeconds + 1}`, payloadBytes: ctx.measure.payloadBytes },
    outcome,
    [
      ...correctnessTargets(outcome.counts),
      latenessTarget(outcome.lateness, 'p50', 5),
      latenessTarget(outcome.lateness, 'p99', 15),
      latenessTarget(outcome.lateness, 'max', 100),
    ],
    'near path',
    {},
    STEADY_COST_BOUND_PER_MILLION,
  );
}
