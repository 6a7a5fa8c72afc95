import { GetQueueAttributesCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDbEventListing, ENV, SQS_BATCH_ENTRIES } from '@adhoc-scheduler/shared';
import {
  deadLetterKind,
  eventEvidence,
  deliveryByPart,
  duplicateCause,
  summarizeFaults,
  summarizeKills,
  type ChaosReport,
  type EventOutcome,
  type EventPart,
  type QueueDepth,
  type WatchedEvent,
} from '../chaos/evidence.js';
import { readFaultLog } from '../chaos/faults.js';
import { planKills, runKills } from '../chaos/kills.js';
import { seededRandom } from '../chaos/random.js';
import { mergePlans, planSteadyMix, planUniform, type PlannedEvent } from '../plan.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { summarizeDelivery } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const TARGETS = {
  // A publish whose answer was lost is published again, and a kill between a publish and its end repeats it: duplicates are reported, not refused.
  delivery: { duplicatesAllowed: true },
  everyKill: true,
} satisfies ScenarioTargets;

/** The spike is published at once this long before its second (less with a short window, to stay on the near path). */
const SPIKE_AHEAD_MS = 30_000;
/** The first kill comes once the load is under way. */
const KILLS_FROM_MS = 10_000;
/** Planned kills keep this far apart where they can: a restart takes seconds. */
const KILL_MIN_GAP_MS = 30_000;
/** A restarted service runs at least this long before the next kill. */
const MIN_UPTIME_MS = 5_000;
/**
 * The run's consumer queues hide a message handed out this long: a receive whose answer died
 * with the emulator gets its messages again after this, well within the drain time.
 */
const CONSUMER_VISIBILITY_SECONDS = 30;
/** Events listed with their evidence, at most. */
const EVIDENCE_LIMIT = 500;
/** The latest events delivered, listed with their evidence too. */
const LATEST_SHOWN = 10;
/** Dead letters read at the end, at most (10 a receive). */
const DEAD_LETTER_RECEIVES = 100;

/** What is recorded as an id with each fault: event ids (`c-` hashes, `m-` message ids) and the run's client ids. */
function chaosIdPattern(runId: string): string {
  const escaped = runId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `c-[0-9a-f]{40}|m-[0-9a-f]{8}-[0-9a-f-]{27}|${escaped}-(?:near|far|spike)-\\d+`;
}

function partOf(event: PlannedEvent, runId: string): EventPart {
  const part = event.clientId.slice(runId.length + 1).split('-')[0];
  return part === 'far' || part === 'spike' ? part : 'near';
}

/**
 * Reads what the service's dead-letter queue holds (messages stay there; they are only hidden
 * for a while): how many, of which kind, and the ids they name.
 */
async function readDeadLetters(
  sqs: SQSClient,
  queueUrl: string,
  idPattern: RegExp,
): Promise<{ messages: number; byKind: Record<string, number>; ids: Set<string> }> {
  const byKind: Record<string, number> = {};
  const ids = new Set<string>();
  let messages = 0;
  for (let receive = 0; receive < DEAD_LETTER_RECEIVES; receive += 1) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: SQS_BATCH_ENTRIES, WaitTimeSeconds: 0, VisibilityTimeout: 60 }),
    );
    if (Messages.length === 0) break;
    for (const { Body = '' } of Messages) {
      messages += 1;
      const kind = deadLetterKind(Body);
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      for (const id of Body.match(idPattern) ?? []) ids.add(id);
    }
  }
  return { messages, byKind, ids };
}

async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * A steady load on both paths and a spike due in one second, while the service is killed with
 * kill -9 at random moments (one at the spike) and started again on the same data directory,
 * and a share of its SNS, SQS and DynamoDB calls fail. Publishes are retried until accepted,
 * events carry a failure topic of the run's own, and every event missing, early or reported
 * failed is listed with its record, the faults on calls that named it and the kills it lived
 * through. Passes with nothing missing and nothing early.
 */
async function runChaos(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const { service, clients, progress, crashable } = ctx;
  const local = service.local;
  if (!crashable || !local || !clients.dynamodb)
    throw new Error('the chaos scenario kills and restarts the local service it starts (--service child)');
  const startedAt = Date.now();
  const windowMs = local.config.nearPathWindowSeconds * 1000;
  const steady = planSteadyMix({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    spreadMs: params.seconds * 1000,
    nearAheadMs: params.aheadSeconds * 1000,
    windowMs,
    now: startedAt,
  });
  // Two thirds into the steady load, on a whole second as a client naming "12:00:00" would.
  const spikeAt = Math.ceil((startedAt + params.aheadSeconds * 1000 + (params.seconds * 1000 * 2) / 3) / 1000) * 1000;
  const spike =
    params.spikeEvents > 0
      ? planUniform({
          runId: `${ctx.runId}-spike`,
          user: ctx.user,
          count: params.spikeEvents,
          firstDueAt: spikeAt,
          spreadMs: 1000,
          publishAheadMs: undefined,
          publishFrom: Math.max(startedAt, spikeAt - Math.min(SPIKE_AHEAD_MS, windowMs / 2)),
        })
      : [];
  const events = mergePlans(steady, spike);
  const lastDue = events.reduce((max, event) => Math.max(max, event.dueAt), startedAt);

  const plan = planKills({
    count: params.kills,
    from: startedAt + KILLS_FROM_MS,
    until: lastDue,
    spikeAt: spike.length > 0 ? spikeAt : undefined,
    minGapMs: KILL_MIN_GAP_MS,
    random: seededRandom(params.seed),
  });
  progress.note(
    `chaos: ${plan.length} kills planned at ${plan.map((kill) => `+${round((kill.at - startedAt) / 1000)} s`).join(', ')}; seed ${params.seed}`,
  );
  const abort = new AbortController();
  const killing = runKills(crashable, plan, {
    minUptimeMs: MIN_UPTIME_MS,
    deadline: ctx.deadline,
    signal: abort.signal,
    onRestart: (kill) =>
      progress.note(
        `chaos: kill ${kill.n} at +${round((kill.killedAt - startedAt) / 1000)} s${kill.atSpike ? ' (spike)' : ''}; up again after ${round((kill.readyAt - kill.killedAt) / 1000)} s`,
      ),
  });
  // Awaited after publishing; a restart that fails there fails the run.
  killing.catch(() => undefined);
  const outcome = await measureDelivery(ctx, events, {
    failureTopic: true,
    publishUntilAccepted: true,
    consumerVisibilitySeconds: CONSUMER_VISIBILITY_SECONDS,
    // The drain starts once the last restart is done.
    afterPublish: async () => {
      await killing;
    },
  }).finally(() => abort.abort());
  const kills = await killing;

  const { tracker } = outcome;
  const watched = new Map(
    events.map((event): [string, WatchedEvent] => [
      event.eventId,
      { eventId: event.eventId, clientId: event.clientId, part: partOf(event, ctx.runId), dueAt: event.dueAt, publishAt: event.publishAt },
    ]),
  );
  const flagged: [string, EventOutcome][] = [
    ...tracker.missingIds(Number.POSITIVE_INFINITY).map((id): [string, EventOutcome] => [id, { kind: 'missing' }]),
    ...tracker
      .earlyIds()
      .map((id): [string, EventOutcome] => [id, { kind: 'early', byMs: (watched.get(id)?.dueAt ?? 0) - (tracker.firstReceived(id) ?? 0) }]),
    ...tracker.failedOnly().map(({ eventId, reason }): [string, EventOutcome] => [eventId, { kind: 'failed', reason }]),
  ];
  const idPattern = new RegExp(chaosIdPattern(ctx.runId), 'g');
  const { faults, unreadableLines } = await readFaultLog(crashable.faultLog);
  const deadLetters = await readDeadLetters(clients.sqs, local.outputs.deadLetterQueueUrl, idPattern);
  const records = new DynamoDbEventListing(clients.dynamodb, local.outputs.tableName);
  const delivered = [...watched.values()].flatMap((event) => {
    const receivedAt = tracker.firstReceived(event.eventId);
    if (receivedAt === undefined) return [];
    const deliveries = tracker.deliveriesOf(event.eventId);
    const duplicate = deliveries > 1 ? duplicateCause(event, receivedAt, { faults, kills }) : undefined;
    return [{ event, part: event.part, latenessMs: receivedAt - event.dueAt, deliveries, duplicateCause: duplicate }];
  });
  const latest = delivered
    .sort((a, b) => b.latenessMs - a.latenessMs)
    .slice(0, LATEST_SHOWN)
    .map(({ event, latenessMs }): [string, EventOutcome] => [event.eventId, { kind: 'late', byMs: latenessMs }]);
  const evidenceOf = async (list: readonly [string, EventOutcome][]) => {
    const evidence = [];
    for (const [id, eventOutcome] of list) {
      const event = watched.get(id);
      if (event !== undefined)
        evidence.push(eventEvidence(event, eventOutcome, { faults, kills, record: await records.get(id), deadLetterIds: deadLetters.ids }));
    }
    return evidence;
  };

  const chaos: ChaosReport = {
    seed: params.seed,
    faultRate: params.faultRate,
    killsPlanned: params.kills,
    kills: summarizeKills(kills, startedAt, spike.length > 0 ? spikeAt : undefined),
    faults: summarizeFaults(faults, unreadableLines, await crashable.requests()),
    publishRetries: outcome.publish.failedRequests,
    deadLetters: { messages: deadLetters.messages, byKind: deadLetters.byKind },
    queuesAtEnd: {
      publicIngest: await queueDepth(clients.sqs, local.outputs.publicIngestQueueUrl),
      ingest: await queueDepth(clients.sqs, local.outputs.ingestQueueUrl),
      loading: await queueDepth(clients.sqs, local.outputs.loadingQueueUrl),
      delay: await queueDepth(clients.sqs, local.outputs.delayQueueUrl),
    },
    events: await evidenceOf(flagged.slice(0, EVIDENCE_LIMIT)),
    eventsNotShown: Math.max(0, flagged.length - EVIDENCE_LIMIT),
    byPart: deliveryByPart(delivered),
    latest: await evidenceOf(latest),
  };
  const counts = outcome.counts;
  return {
    title:
      `chaos: ${params.events.toLocaleString('en-US')} events over ${params.seconds} s and ${params.spikeEvents.toLocaleString('en-US')} due in the same second; ` +
      `${kills.length} kill -9 and restarts, ${round(params.faultRate * 100)}% of calls failing`,
    parameters: {
      events: params.events,
      seconds: params.seconds,
      publishedAheadSeconds: `near ${params.aheadSeconds} to ${params.aheadSeconds + 1}, far window + 20 to 21`,
      spikeEvents: params.spikeEvents,
      spikeDueSecondsAfterStart: round((spikeAt - startedAt) / 1000),
      kills: params.kills,
      faultRate: params.faultRate,
      seed: params.seed,
      nearPathWindowSeconds: local.config.nearPathWindowSeconds,
      loaderIntervalSeconds: local.config.loaderIntervalSeconds,
      payloadBytes: ctx.measure.payloadBytes,
    },
    // CPU time is sampled per process at start and end: the service's processes of a run across restarts are not those.
    delivery: { ...summarizeDelivery(outcome), cpu: undefined },
    distribution: outcome.distribution,
    details: { path: 'half near, half far path, and a spike on the near path' },
    // Usage counters start again with each life of the service: no cost for a run across restarts.
    cost: undefined,
    usage: undefined,
    chaos,
    targets: [
      ...correctnessTargets(counts, TARGETS.delivery.duplicatesAllowed),
      ...(TARGETS.everyKill
        ? [
            {
              name: 'kill -9 and restart of the service',
              target: `${params.kills}`,
              actual: `${kills.length}`,
              met: kills.length >= params.kills,
            },
          ]
        : []),
    ],
  };
}

export const chaos: Scenario = {
  description: `a steady load (near and far path) plus --spike events due in the same second, while
the service is killed with kill -9 --kills times at random moments (one at the
spike) and restarted on the same data directory and ports, and --fault-rate of its
SNS, SQS and DynamoDB calls fail (refused, or answer lost after the call took
effect); counts events sent, delivered, missing, duplicated, early and failed (by
reason code, from a failure topic of its own), and lists what happened to each one
missing, early or failed; passes with none missing and none early [3,000 over
180 s, 10 s ahead; spike 3,000; 5 kills; 3% of calls; window 60 s, loader every 10 s]`,
  run: runChaos,
  // A short window, so far-path events are stored and loaded within the run.
  defaults: {
    events: 3_000,
    quietEvents: 0,
    seconds: 180,
    aheadSeconds: 10,
    windowSeconds: 60,
    loaderIntervalSeconds: 10,
    backlog: 0,
    path: 'near',
    spikeEvents: 3_000,
    kills: 5,
    faultRate: 0.03,
  },
  // A message held by a killed service waits out its visibility timeout.
  drainSeconds: 180,
  service: {
    startedForIt: true,
    // The table is new: a first loader tick looking back an hour makes 480 queries, and one fault among them fails the tick.
    settings: (params) => ({ [ENV.loaderInitialCatchUpSeconds]: String(params.loaderIntervalSeconds) }),
    crashes: (params, runId) => ({ probability: params.faultRate, seed: params.seed, idPattern: chaosIdPattern(runId) }),
  },
  targets: TARGETS,
};
