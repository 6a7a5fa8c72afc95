import { DynamoDbLoaderCursors } from '@adhoc-scheduler/shared';
import { planUniform } from '../plan.js';
import { pollUntil } from '../poll.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { COST_BOUND_PER_MILLION, deliveryResult, WRITE_UNITS_PER_EVENT_BOUND } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const TARGETS = {
  moveSeconds: 60,
  delivery: { duplicatesAllowed: false },
  latenessMs: { p99: 1000 },
  costPerMillion: COST_BOUND_PER_MILLION,
  writeUnitsPerEvent: WRITE_UNITS_PER_EVENT_BOUND.farPath,
} satisfies ScenarioTargets;

/** Ingest rate assumed when placing the events: under what the ingest scenario measures for the far path locally. */
const ASSUMED_INGEST_PER_SECOND = 500;

/**
 * N events due within one minute, stored because they are due beyond the near-path window,
 * placed so that one loader tick finds them all: the loader and the loading function then move
 * the whole minute into the delay queue at once. Reports how long that took, and the events'
 * lateness at the consumer.
 *
 * The loader ticks every I seconds from the service's start, and tick k takes the events due in
 * (cursor, now + lookahead]: an I-second slice of due times. With I longer than the minute, the
 * minute fits inside one slice, with (I - 60 s) / 2 of margin on each side for timer jitter.
 */
async function runFar(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { service, clients, progress } = ctx;
  const local = service.local;
  if (!local || !clients.dynamodb) throw new Error('the far scenario needs the local service (it reads the loader cursor)');
  const { config, outputs } = local;
  const spanMs = params.seconds * 1000;
  const intervalMs = config.loaderIntervalSeconds * 1000;
  if (spanMs >= intervalMs)
    throw new Error(
      `--seconds (${params.seconds}) must be shorter than the loader interval (${config.loaderIntervalSeconds} s) for one tick to find them all`,
    );

  // The first tick runs when the service starts; the timer's ticks follow every interval.
  const cursors = new DynamoDbLoaderCursors(clients.dynamodb, outputs.tableName);
  const firstTick = await firstLoaderTick(ctx);
  const firstCursor = (await cursors.read()).loadedThroughMs;
  if (firstCursor === undefined) throw new Error('the loader has not written its cursor');
  const margin = (intervalMs - spanMs) / 2;
  const ingestBudgetMs = (params.events / ASSUMED_INGEST_PER_SECOND) * 1000 + 15_000;
  const storedFrom = Date.now() + ingestBudgetMs + config.nearPathWindowSeconds * 1000;
  // Tick k (k >= 1 after the first) takes due times in (firstCursor + (k-1) I, firstCursor + k I].
  const k = Math.max(1, Math.ceil((storedFrom - margin - firstCursor) / intervalMs) + 1);
  const spanStart = firstCursor + (k - 1) * intervalMs + margin;
  const expectedTickAt = firstTick + k * intervalMs;
  progress.note(
    `far: ${params.events} events due from ${new Date(spanStart).toISOString()} over ${params.seconds} s; ` +
      `loader tick ${k} expected at ${new Date(expectedTickAt).toISOString()} (in ${Math.round((expectedTickAt - Date.now()) / 1000)} s)`,
  );

  const events = planUniform({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    firstDueAt: Math.round(spanStart),
    spreadMs: spanMs,
    publishAheadMs: undefined,
    publishFrom: Date.now(),
  });
  const ingestedBefore = (await service.report(false))?.usage.lambda.ingest.records ?? 0;
  let ingestFinishedAt = Number.NaN;
  const outcome = await measureDelivery(ctx, events, {
    afterPublish: async () => {
      const bar = progress.bar('stored', params.events);
      let ingested = 0;
      await pollUntil(
        async () => {
          const report = await service.report(false);
          ingested = (report?.usage.lambda.ingest.records ?? 0) - ingestedBefore;
          bar.update(ingested);
          return ingested >= params.events;
        },
        ctx.deadline,
        250,
      );
      ingestFinishedAt = Date.now();
    },
  });

  const report = outcome.report;
  const ticks = (report?.loaderTicks ?? []).filter((tick) => tick.startedAt >= outcome.startedAt && tick.chunksSent > 0);
  const movingTick = ticks[0];
  const loadingDone = (report?.invocations ?? []).filter(
    (invocation) => invocation.fn === 'loading' && movingTick && invocation.endedAt >= movingTick.startedAt,
  );
  const moveEnd = loadingDone.reduce((latest, invocation) => Math.max(latest, invocation.endedAt), 0);
  const moved = outcome.usage?.sqs.sentByQueue[outputs.delayQueueUrl] ?? 0;
  const moveSeconds = movingTick && moveEnd > 0 ? (moveEnd - movingTick.startedAt) / 1000 : undefined;
  const storedInTime = ingestFinishedAt + config.nearPathWindowSeconds * 1000 <= spanStart;

  const details = {
    ingestSeconds: round((ingestFinishedAt - outcome.publish.startedAt) / 1000, 2),
    allStoredBeyondWindow: storedInTime,
    loaderTicksWithEvents: ticks.map((tick) => ({
      startedAt: new Date(tick.startedAt).toISOString(),
      durationMs: round(tick.durationMs),
      chunksSent: tick.chunksSent,
      queries: tick.queries,
      readUnits: tick.readUnits,
    })),
    movedToDelayQueue: moved,
    moveSeconds: moveSeconds === undefined ? 'n/a' : round(moveSeconds, 2),
    movedPerMinute: moveSeconds === undefined ? 'n/a' : Math.round((moved / moveSeconds) * 60),
    firstDueSecondsAfterTick: movingTick ? round((spanStart - movingTick.startedAt) / 1000, 1) : 'n/a',
  };
  return deliveryResult(
    `far path: ${params.events.toLocaleString('en-US')} events due within one minute, moved by the loader`,
    {
      events: params.events,
      seconds: params.seconds,
      nearPathWindowSeconds: config.nearPathWindowSeconds,
      loaderIntervalSeconds: config.loaderIntervalSeconds,
      loaderLookaheadSeconds: config.loaderLookaheadSeconds,
      payloadBytes: ctx.measure.payloadBytes,
    },
    outcome,
    [
      {
        name: 'one minute of events moved into the delay queue',
        target: `≤ ${TARGETS.moveSeconds} s`,
        actual: moveSeconds === undefined ? 'n/a' : `${round(moveSeconds, 1)} s (${ticks.length} tick${ticks.length === 1 ? '' : 's'})`,
        met: moveSeconds !== undefined && moveSeconds <= TARGETS.moveSeconds && ticks.length === 1 && storedInTime,
      },
      ...correctnessTargets(outcome.counts),
      ...latenessTargets(outcome.lateness, TARGETS.latenessMs),
    ],
    'far path',
    TARGETS,
    details,
  );
}

/** When the service's first loader tick started (epoch ms), waiting for it if need be. */
async function firstLoaderTick(ctx: RunContext): Promise<number> {
  let first: number | undefined;
  await pollUntil(
    async () => {
      first = (await ctx.service.report(true))?.loaderTicks?.[0]?.startedAt;
      return first !== undefined;
    },
    Math.min(ctx.deadline, Date.now() + 60_000),
    250,
  );
  if (first === undefined) throw new Error('the local service ran no loader tick within a minute');
  return first;
}

export const far: Scenario = {
  description: `N events due within one minute, stored beyond a shortened near-path window and moved
by one loader tick; reports how fast they were moved into the delay queue
[100,000; window 240 s, loader every 90 s]`,
  run: runFar,
  defaults: {
    events: 100_000,
    quietEvents: 0,
    seconds: 60,
    aheadSeconds: 0,
    windowSeconds: 240,
    loaderIntervalSeconds: 90,
    backlog: 0,
    path: 'far',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 600,
  // It reads the loader's cursor and ticks.
  service: { startedForIt: true },
  targets: TARGETS,
};
