import { planUniform } from '../plan.js';
import { correctnessTargets, latenessTarget, type ScenarioResult } from '../report/results.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';

/** N events due evenly over S seconds, each published a few seconds (plus a fraction) before it is due: the near path. */
export async function runSteady(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const now = Date.now();
  const aheadMs = params.aheadSeconds * 1000;
  const events = planUniform({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    firstDueAt: now + aheadMs,
    spreadMs: params.seconds * 1000,
    publishAheadMs: aheadMs,
    publishJitterMs: 1000,
    publishFrom: now,
  });
  const outcome = await measureDelivery(ctx, events);
  return deliveryResult(
    `steady: ${params.events.toLocaleString('en-US')} events due evenly over ${params.seconds} s`,
    { events: params.events, seconds: params.seconds, publishedAheadSeconds: `${params.aheadSeconds} to ${params.aheadSeconds + 1}`, payloadBytes: ctx.measure.payloadBytes },
    outcome,
    [
      ...correctnessTargets(outcome.counts),
      latenessTarget(outcome.lateness, 'p50', 5),
      latenessTarget(outcome.lateness, 'p99', 15),
      latenessTarget(outcome.lateness, 'max', 100),
    ],
    'near path',
  );
}
