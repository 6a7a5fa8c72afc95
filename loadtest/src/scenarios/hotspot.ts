import { planUniform } from '../plan.js';
import { correctnessTargets, latenessTarget, type ScenarioResult } from '../report/results.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';

/** Full batches make an event cheaper: the bound is EventBridge Scheduler's own price, without the publish. */
const HOTSPOT_COST_BOUND_PER_MILLION = 1.0;

/** N events all due within the same second, published at once ahead of it (the near path). */
export async function runHotspot(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
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
    [...correctnessTargets(outcome.counts), latenessTarget(outcome.lateness, 'p99', 2000)],
    'near path',
    {},
    HOTSPOT_COST_BOUND_PER_MILLION,
  );
}
