import { planSteadyMix, type PlannedEvent } from '../plan.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets } from '../report/targets.js';
import type { LoaderTick } from '../service/probe.js';
import { seedBacklog } from './backlog-seed.js';
import type { RunContext } from './context.js';
import { measureDelivery, type DeliveryOutcome } from './delivery.js';
import { COST_BOUND_PER_MILLION, deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const TARGETS = {
  delivery: { duplicatesAllowed: false, of: 'before and after the backlog' },
  latenessMs: { p99: 1000 },
  latenessOf: 'with the backlog',
  costPerMillion: COST_BOUND_PER_MILLION,
} satisfies ScenarioTargets;

function steadyMix(ctx: RunContext, params: ScenarioParams, phase: string, windowMs: number): PlannedEvent[] {
  return planSteadyMix({
    runId: `${ctx.runId}-${phase}`,
    user: ctx.user,
    count: params.events,
    spreadMs: params.seconds * 1000,
    nearAheadMs: params.aheadSeconds * 1000,
    windowMs,
    now: Date.now(),
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

/** What the loader did during one phase: per tick, and for the ticks that found events. */
function loaderWork(outcome: DeliveryOutcome): Record<string, unknown> {
  const ticks: LoaderTick[] = (outcome.report?.loaderTicks ?? []).filter(
    (tick) => tick.startedAt >= outcome.startedAt && tick.startedAt <= outcome.finishedAt,
  );
  const working = ticks.filter((tick) => tick.chunksSent > 0);
  const describe = (list: readonly LoaderTick[]) => ({
    ticks: list.length,
    medianDurationMs: round(median(list.map((tick) => tick.durationMs))),
    maxDurationMs: round(Math.max(...list.map((tick) => tick.durationMs))),
    medianReadUnits: median(list.map((tick) => tick.readUnits)),
    maxReadUnits: Math.max(...list.map((tick) => tick.readUnits)),
    medianQueries: median(list.map((tick) => tick.queries)),
    chunksSent: list.reduce((sum, tick) => sum + tick.chunksSent, 0),
  });
  return { allTicks: describe(ticks), ticksThatFoundEvents: describe(working) };
}

/**
 * A steady load on both paths, measured before and after a large number of open events is
 * written into the table (due later than the run looks ahead). If the loader's work follows
 * what is due, its reads and time per tick stay the same with the backlog as without it.
 */
async function runBacklog(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { service, clients, progress } = ctx;
  const local = service.local;
  if (!local || !clients.dynamodb) throw new Error('the backlog scenario needs the local service (it writes into its table)');
  const windowMs = local.config.nearPathWindowSeconds * 1000;

  progress.note('backlog: phase 1, steady load on an empty table');
  const before = await measureDelivery(ctx, steadyMix(ctx, params, 'before', windowMs), { label: 'before' });

  progress.note(`backlog: writing ${params.backlog.toLocaleString('en-US')} open events into the table`);
  const seedBar = progress.bar('backlog', params.backlog);
  const seeded = await seedBacklog(clients.dynamodb, local.outputs.tableName, local.config, {
    runId: ctx.runId,
    user: ctx.user,
    count: params.backlog,
    // Due over the next day, starting an hour out: beyond anything the run's loader looks at.
    fromMs: Date.now() + 3600_000,
    spanMs: 24 * 3600_000,
    target: service.inputTopicArn.replace(/:[^:]+$/, `:${ctx.runId}-backlog`),
    payloadBytes: ctx.measure.payloadBytes,
    onProgress: (written) => seedBar.update(written),
    deadline: ctx.deadline,
  });

  progress.note('backlog: phase 2, the same steady load with the backlog in the table');
  const after = await measureDelivery(ctx, steadyMix(ctx, params, 'after', windowMs), { label: 'after' });

  const details = {
    backlogWritten: seeded.written,
    backlogSeconds: round(seeded.seconds, 1),
    backlogWritesPerSecond: Math.round(seeded.written / seeded.seconds),
    loaderBeforeBacklog: loaderWork(before),
    loaderWithBacklog: loaderWork(after),
    latenessBeforeBacklogMs: before.lateness,
    countsBeforeBacklog: before.counts,
  };
  return deliveryResult(
    `backlog: steady load with ${params.backlog.toLocaleString('en-US')} open events in the table`,
    {
      backlog: params.backlog,
      eventsPerPhase: params.events,
      seconds: params.seconds,
      nearPathWindowSeconds: local.config.nearPathWindowSeconds,
      loaderIntervalSeconds: local.config.loaderIntervalSeconds,
      payloadBytes: ctx.measure.payloadBytes,
    },
    after,
    [
      ...correctnessTargets(before.counts).map((t) => ({ ...t, name: `${t.name} (before backlog)` })),
      ...correctnessTargets(after.counts),
      ...latenessTargets(after.lateness, TARGETS.latenessMs),
    ],
    'half near, half far path',
    TARGETS,
    details,
  );
}

export const backlog: Scenario = {
  description: `a steady load (near and far path) before and after writing --backlog open events
straight into the table: the loader's work per tick follows what is due, not what
is stored [1,000,000 open events; 600 events per phase over 60 s; window 60 s,
loader every 10 s]`,
  run: runBacklog,
  defaults: {
    events: 600,
    quietEvents: 0,
    seconds: 60,
    aheadSeconds: 10,
    windowSeconds: 60,
    loaderIntervalSeconds: 10,
    backlog: 1_000_000,
    path: 'far',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 60,
  // It writes the backlog into the service's table.
  service: { startedForIt: true },
  targets: TARGETS,
};
