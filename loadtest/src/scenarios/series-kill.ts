import { ENV } from '@adhoc-scheduler/shared';
import { duplicateCause, summarizeKills } from '../chaos/evidence.js';
import { planKills, runKills } from '../chaos/kills.js';
import { seededRandom } from '../chaos/random.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { summarizeDelivery } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';
import { planSeries, seriesRequest } from './series.js';

const TARGETS = {
  // A kill between an occurrence's publish and its recorded end publishes it again: reported, with its cause.
  delivery: { duplicatesAllowed: true },
  everyKill: true,
} satisfies ScenarioTargets;

/** Kills keep this far apart where they can: a restart takes seconds. */
const KILL_MIN_GAP_MS = 30_000;
/** A restarted service runs at least this long before the next kill. */
const MIN_UPTIME_MS = 5_000;
/** A receive whose answer died with the emulator gets its messages again after this. */
const CONSUMER_VISIBILITY_SECONDS = 30;

/**
 * Series every minute, their occurrences materialised by the loader's takes during the run (a
 * short near-path window), while the service is killed with kill -9 at random moments among
 * them and started again on the same data directory: every occurrence once, none lost or early.
 */
async function runSeriesKill(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { crashable, progress } = ctx;
  if (!crashable) throw new Error('the series-kill scenario kills and restarts the local service it starts');
  const minutes = Math.max(1, Math.round(params.seconds / 60));
  const now = Date.now();
  const plan = planSeries({ runId: ctx.runId, user: ctx.user, count: params.events, minutes, aheadMs: params.aheadSeconds * 1000, now });
  const lastDue = plan.firstMinute + minutes * 60_000;
  const kills = planKills({
    count: params.kills,
    from: plan.firstMinute,
    until: lastDue,
    spikeAt: undefined,
    minGapMs: KILL_MIN_GAP_MS,
    random: seededRandom(params.seed),
  });
  progress.note(
    `series-kill: ${kills.length} kills planned at ${kills.map((kill) => `+${round((kill.at - now) / 1000)} s`).join(', ')}; seed ${params.seed}`,
  );
  const abort = new AbortController();
  const killing = runKills(crashable, kills, {
    minUptimeMs: MIN_UPTIME_MS,
    deadline: ctx.deadline,
    signal: abort.signal,
    onRestart: (kill) =>
      progress.note(
        `series-kill: kill ${kill.n} at +${round((kill.killedAt - now) / 1000)} s; up again after ${round((kill.readyAt - kill.killedAt) / 1000)} s`,
      ),
  });
  killing.catch(() => undefined);
  const outcome = await measureDelivery(ctx, plan.requests, {
    expected: plan.occurrences,
    render: (event, target) => seriesRequest(event, ctx.user, target, ctx.measure.payloadBytes, plan),
    publishUntilAccepted: true,
    consumerVisibilitySeconds: CONSUMER_VISIBILITY_SECONDS,
    afterPublish: async () => {
      await killing;
    },
  }).finally(() => abort.abort());
  const made = await killing;
  const duplicatedBy = { lostAnswer: 0, kill: 0, other: 0 };
  for (const { eventId } of plan.occurrences) {
    const deliveries = outcome.tracker.deliveriesOf(eventId);
    const receivedAt = outcome.tracker.firstReceived(eventId);
    if (deliveries > 1 && receivedAt !== undefined)
      duplicatedBy[duplicateCause({ eventId, clientId: eventId }, receivedAt, { faults: [], kills: made })] += deliveries - 1;
  }
  return {
    title: `series-kill: ${params.events.toLocaleString('en-US')} series every minute for ${minutes} minutes, ${made.length} kill -9s`,
    parameters: { series: params.events, minutes, occurrences: plan.occurrences.length, kills: params.kills, seed: params.seed },
    delivery: summarizeDelivery(outcome),
    distribution: outcome.distribution,
    details: { kills: summarizeKills(made, now, undefined), duplicatedBy },
    // Counters start again with each restart: not a measure of the run.
    cost: undefined,
    usage: undefined,
    targets: [
      ...correctnessTargets(outcome.counts, true),
      { name: 'kill -9 and restarts made', target: String(params.kills), actual: String(made.length), met: made.length === params.kills },
    ],
  };
}

export const seriesKill: Scenario = {
  description: `N recurring series every minute for S/60 minutes (as the series scenario), with a
short near-path window so that the loader's takes materialise them during the run,
while the service is killed with kill -9 --kills times and restarted on the same
data directory; counts occurrences missing, early and duplicated (by cause)
[1,000 series, 5 minutes, from 30 s ahead; 3 kills; window 60 s, loader every 10 s]`,
  run: runSeriesKill,
  defaults: {
    events: 1_000,
    quietEvents: 0,
    seconds: 300,
    aheadSeconds: 30,
    windowSeconds: 60,
    loaderIntervalSeconds: 10,
    backlog: 0,
    path: 'near',
    spikeEvents: 0,
    kills: 3,
    faultRate: 0,
  },
  // A message held by a killed service waits out its visibility timeout.
  drainSeconds: 180,
  service: {
    startedForIt: true,
    settings: (params) => ({ [ENV.loaderInitialCatchUpSeconds]: String(params.loaderIntervalSeconds) }),
    crashes: (params) => ({ probability: params.faultRate, seed: params.seed, idPattern: 'o-[0-9a-f]{32}-\\d+|s-c-[0-9a-f]{40}' }),
  },
  targets: TARGETS,
};
