import { usageBetween } from '../cost/estimate.js';
import { cpuBetween, sampleCpu } from '../cpu.js';
import { planUniform, scheduleRequest } from '../plan.js';
import { pollUntil } from '../poll.js';
import { publishEvents, type PublishStats } from '../publisher.js';
import { round, type ScenarioResult } from '../report/results.js';
import type { ScenarioTargets, TargetCheck } from '../report/targets.js';
import type { InvocationRecord } from '../service/probe.js';
import type { RunContext } from './context.js';
import { queueBacklog, timeOfCount, type AcceptanceSample } from './ingest-queue.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const TARGETS = {
  // In memory; with state on disk the target is 1,000 (BENCHMARKS.md).
  acceptedPerSecond: 2_000,
} satisfies ScenarioTargets;

/** How many events the ingest function took, and when (epoch ms) it had taken all, a tenth and nine tenths of them. */
interface Acceptance {
  readonly ingested: number;
  readonly doneAt: number | undefined;
  readonly tenth: number | undefined;
  readonly ninetieth: number | undefined;
}

/** The time (epoch ms) by which the ingest function had taken `share` of `total` records. */
export function timeOfShare(invocations: readonly InvocationRecord[], total: number, share: number): number | undefined {
  let records = 0;
  for (const invocation of invocations) {
    records += invocation.records;
    if (records >= total * share) return invocation.endedAt;
  }
  return undefined;
}

/**
 * Publishes N events as fast as the input topic takes them and measures how fast the ingest
 * function accepts them: validated, then stored (far path) or sent to the delay queue (near
 * path). The events are due after the run, so nothing is emitted while it measures.
 */
async function runIngest(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { service, clients, measure, progress } = ctx;
  const now = Date.now();
  const windowMs = (service.local?.config.nearPathWindowSeconds ?? params.windowSeconds) * 1000;
  // Far: a day ahead, stored; near: late in the window, so they wait in the delay queue until the run is over.
  const firstDueAt = params.path === 'far' ? now + 24 * 3600 * 1000 : now + windowMs - 60_000;
  const events = planUniform({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    firstDueAt,
    spreadMs: 50_000,
    publishAheadMs: undefined,
    publishFrom: now,
  });
  // Never emitted during the run; a valid topic ARN in the scheduler's account and region is all validation needs.
  const target = service.inputTopicArn.replace(/:[^:]+$/, `:${ctx.runId}-unused`);

  const before = await service.report(false);
  // Without the service's counters (a service started elsewhere), acceptance is seen as its ingest queue emptying.
  const queueUrl = before ? undefined : service.ingestQueueUrl;
  const cpuBefore = sampleCpu();
  const ingestedBefore = before?.usage.lambda.ingest.records ?? 0;
  const publishedBar = progress.bar('published', params.events);
  const ingestedBar = progress.bar('ingested', params.events);
  let published = 0;
  let ingested = 0;
  let publishing = true;
  let stopped = false;
  const samples: AcceptanceSample[] = [];
  const watching = queueUrl
    ? pollUntil(
        async () => {
          // Read before the queue: a backlog of 0 counts only once every publish has returned, its message enqueued.
          const allPublished = !publishing;
          const backlog = await queueBacklog(clients.sqs, queueUrl);
          ingested = Math.max(0, published - backlog);
          samples.push({ at: Date.now(), accepted: ingested });
          ingestedBar.update(ingested);
          return stopped || (allPublished && backlog === 0);
        },
        ctx.deadline,
        100,
      ).then(
        // Awaited only once publishing ends: a failed look at the queue must not go unhandled meanwhile.
        (done) => ({ done }),
        (error: unknown) => ({ error }),
      )
    : undefined;
  const refresh = setInterval(() => publishedBar.update(published), 200);
  let stats: PublishStats;
  let ingestDone = false;
  try {
    stats = await publishEvents(events, {
      sns: clients.sns,
      inputTopicArn: service.inputTopicArn,
      render: (event) => scheduleRequest(event, ctx.user, target, measure.payloadBytes, undefined, measure.labels),
      concurrency: measure.publishConcurrency,
      onPublished: () => {
        published += 1;
      },
      onFailed: () => undefined,
      signal: AbortSignal.timeout(Math.max(0, ctx.deadline - Date.now())),
    });
    publishing = false;
    if (watching !== undefined) {
      const watched = await watching;
      if ('error' in watched) throw watched.error;
      ingestDone = watched.done;
    } else if (before) {
      ingestDone = await pollUntil(
        async () => {
          ingested = ((await service.report(false))?.usage.lambda.ingest.records ?? 0) - ingestedBefore;
          ingestedBar.update(ingested);
          return ingested >= published;
        },
        ctx.deadline,
        100,
      );
    }
  } finally {
    clearInterval(refresh);
    stopped = true;
    await watching;
  }
  const cpu = cpuBetween(cpuBefore, sampleCpu());
  const after = await service.report(true);
  publishedBar.update(published);
  ingestedBar.update(ingested);

  const publishSeconds = (stats.finishedAt - stats.startedAt) / 1000;
  const details: Record<string, unknown> = {
    path: params.path === 'far' ? 'far path (stored in the table)' : 'near path (sent to the delay queue)',
    published: stats.published,
    publishFailed: stats.failed,
    publishSeconds: round(publishSeconds, 2),
    publishedPerSecond: Math.round(stats.published / publishSeconds),
    coresBusy: cpu ? { ...cpu.byProcess, 'everything else': cpu.othersCores } : 'n/a',
  };
  const targets: TargetCheck[] = [];
  let acceptance: Acceptance | undefined;
  if (after && before) {
    const ingestInvocations = (after.invocations ?? []).filter(
      (invocation) => invocation.fn === 'ingest' && invocation.endedAt >= stats.startedAt,
    );
    const share = (fraction: number): number | undefined => timeOfShare(ingestInvocations, stats.published, fraction);
    acceptance = {
      ingested: after.usage.lambda.ingest.records - ingestedBefore,
      doneAt: share(1),
      tenth: share(0.1),
      ninetieth: share(0.9),
    };
    Object.assign(details, {
      ingestInvocations: ingestInvocations.length,
      recordsPerInvocation: round(stats.published / Math.max(1, ingestInvocations.length), 2),
    });
  } else if (queueUrl) {
    const share = (fraction: number): number | undefined => timeOfCount(samples, stats.published * fraction);
    acceptance = { ingested, doneAt: share(1), tenth: share(0.1), ninetieth: share(0.9) };
    details.ingestedCountedBy = 'the ingest queue emptying, looked at every 100 ms (a service started elsewhere)';
  }
  if (acceptance) {
    const { doneAt, tenth, ninetieth } = acceptance;
    const ingestSeconds = doneAt === undefined ? undefined : (doneAt - stats.startedAt) / 1000;
    const perSecond = ingestSeconds === undefined ? undefined : Math.round(stats.published / ingestSeconds);
    Object.assign(details, {
      ingested: acceptance.ingested,
      allIngested: ingestDone,
      ingestSeconds: ingestSeconds === undefined ? 'n/a' : round(ingestSeconds, 2),
      ingestedPerSecond: perSecond ?? 'n/a',
      // The middle 80%: the rate once publishing and ingest both run, without start-up and tail.
      ingestedPerSecondMiddle80:
        tenth !== undefined && ninetieth !== undefined && ninetieth > tenth
          ? Math.round((0.8 * stats.published) / ((ninetieth - tenth) / 1000))
          : 'n/a',
    });
    targets.push({
      name: 'events accepted per second',
      target: `≥ ${TARGETS.acceptedPerSecond.toLocaleString('en-US')}`,
      actual: perSecond === undefined ? 'n/a' : perSecond.toLocaleString('en-US'),
      met: perSecond !== undefined && perSecond >= TARGETS.acceptedPerSecond,
    });
  }
  return {
    title: `ingest: ${params.events.toLocaleString('en-US')} events published as fast as the input topic takes them`,
    parameters: {
      events: params.events,
      path: params.path,
      payloadBytes: measure.payloadBytes,
      publishConcurrency: measure.publishConcurrency,
    },
    delivery: undefined,
    distribution: [],
    details,
    cost: undefined,
    usage: before && after ? usageBetween(after.usage, before.usage) : undefined,
    targets,
  };
}

export const ingest: Scenario = {
  description: `N events published as fast as possible; events per second the input side accepts
[50,000, --path far: stored in the table]`,
  run: runIngest,
  defaults: {
    events: 50_000,
    quietEvents: 0,
    seconds: 60,
    aheadSeconds: 0,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'far',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  // Nothing is delivered while it measures.
  drainSeconds: 0,
  service: { startedForIt: false },
  targets: TARGETS,
};
