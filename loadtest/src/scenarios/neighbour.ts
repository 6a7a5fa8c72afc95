import { LOCAL_ACCOUNT } from '@adhoc-scheduler/infra';
import { DEFAULT_QUOTAS, REASON } from '@adhoc-scheduler/shared';
import { createConsumerEndpoint, deleteConsumerEndpoint, startConsumer, type ConsumerEndpoint } from '../consumer.js';
import { usageBetween } from '../cost/estimate.js';
import { GOLDEN_FRACTION, planUniform, scheduleRequest, type PlannedEvent } from '../plan.js';
import { pollUntil } from '../poll.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets, type TargetCheck } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery, type DeliveryOutcome } from './delivery.js';
import { NOISY_TENANT, noticeOf, startNoisyClientThread, type NoisyClientResult } from './noisy-client.js';
import { deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

export const QUIET_TENANT = 'quiet';

/** Every tenth of the quiet tenant's events is cancelled. */
export const CANCEL_EVERY = 10;
/** The quiet tenant's cancels are published this long before their event is due, or up to CANCEL_SPREAD_MS more. */
export const CANCEL_AHEAD_MS = 10_000;
export const CANCEL_SPREAD_MS = 5_000;
/** A cancel goes out at least this long after its event's schedule request, as the client docs ask ("and a moment more"). */
const CANCEL_AFTER_SCHEDULE_MS = 5_000;
/** The noisy tenant's reschedules move their (missing) event this far after the flood starts: within the near-path window. */
const RESCHEDULE_AFTER_MS = 300_000;

const TARGETS = {
  delivery: { duplicatesAllowed: false, of: `tenant ${QUIET_TENANT}` },
  latenessMs: { p99: 100 },
  latenessOf: `tenant ${QUIET_TENANT}`,
  cancels: { aheadSeconds: CANCEL_AHEAD_MS / 1000, of: `tenant ${QUIET_TENANT}` },
  refusals: { of: `tenant ${NOISY_TENANT}`, maxControlPerSecond: DEFAULT_QUOTAS.maxControlPerSecond },
} satisfies ScenarioTargets;

export interface NeighbourPlan {
  /** The noisy tenant's control requests, all to be published at `start`, as fast as its topic takes them. */
  readonly noisy: PlannedEvent[];
  /** The quiet tenant's schedule requests and its cancels, by publish time. */
  readonly quiet: PlannedEvent[];
  /** Of `quiet`, the cancels: each names its event by the event's client id, and has its event id and due time. */
  readonly cancels: ReadonlySet<PlannedEvent>;
  /** The quiet tenant's events that are not cancelled: each must be delivered once. */
  readonly expected: PlannedEvent[];
  /** When the reschedules of the noisy tenant move their events to. */
  readonly rescheduleTo: number;
}

/**
 * The noisy tenant's `noisyRequests` control requests, all published at `start`; the quiet
 * tenant's `quietEvents` events due evenly over `spreadMs` from `start + aheadMs` on, each
 * published `aheadMs` (plus up to a second) before it is due, and a cancel of every
 * CANCEL_EVERY-th of them published CANCEL_AHEAD_MS to CANCEL_AHEAD_MS + CANCEL_SPREAD_MS before
 * its event is due.
 */
export function planNeighbour(plan: {
  readonly runId: string;
  readonly user: string;
  readonly noisyRequests: number;
  readonly quietEvents: number;
  readonly spreadMs: number;
  readonly aheadMs: number;
  readonly start: number;
}): NeighbourPlan {
  const minimumAheadMs = CANCEL_AHEAD_MS + CANCEL_SPREAD_MS + CANCEL_AFTER_SCHEDULE_MS;
  if (plan.aheadMs < minimumAheadMs)
    throw new Error(
      `the neighbour scenario publishes its quiet events at least ${minimumAheadMs / 1000} s ahead (--ahead), so that their cancels go out after them`,
    );
  const quietEvents = planUniform({
    runId: `${plan.runId}-${QUIET_TENANT}`,
    tenant: QUIET_TENANT,
    user: plan.user,
    count: plan.quietEvents,
    firstDueAt: plan.start + plan.aheadMs,
    spreadMs: plan.spreadMs,
    publishAheadMs: plan.aheadMs,
    publishJitterMs: 1000,
    publishFrom: plan.start,
  });
  const bySeq = [...quietEvents].sort((a, b) => a.seq - b.seq);
  const cancelled = bySeq.filter((event) => event.seq % CANCEL_EVERY === 0);
  const cancels = new Set(
    cancelled.map((event, index): PlannedEvent => {
      const spread = Math.floor(((index * GOLDEN_FRACTION) % 1) * CANCEL_SPREAD_MS);
      return { ...event, publishAt: event.dueAt - CANCEL_AHEAD_MS - spread };
    }),
  );
  const cancelledIds = new Set(cancelled.map((event) => event.eventId));
  const noisy = Array.from(
    { length: plan.noisyRequests },
    (_, seq): PlannedEvent => ({
      seq,
      tenant: NOISY_TENANT,
      clientId: `${plan.runId}-${NOISY_TENANT}-${seq}`,
      // The quiet tenant's event a cancel-other-tenant names; for the others, an id no event has.
      eventId: bySeq[seq % Math.max(1, bySeq.length)]?.eventId ?? '',
      dueAt: plan.start + RESCHEDULE_AFTER_MS,
      publishAt: plan.start,
    }),
  );
  return {
    noisy,
    quiet: [...quietEvents, ...cancels].sort((a, b) => a.publishAt - b.publishAt),
    cancels,
    expected: bySeq.filter((event) => !cancelledIds.has(event.eventId)),
    rescheduleTo: plan.start + RESCHEDULE_AFTER_MS,
  };
}

/** A cancel of one of the quiet tenant's events, by the id it was scheduled with, as its client sends it. */
export function quietCancel(event: PlannedEvent, user: string, failureTopic: string): string {
  return JSON.stringify({ action: 'cancel', id: event.clientId, user, failure_topic: failureTopic });
}

/** A failure topic of the run's own for one tenant, with a queue subscribed to it. */
function failureEndpoint(ctx: RunContext, tenant: string): Promise<ConsumerEndpoint> {
  return createConsumerEndpoint(ctx.clients.sns, ctx.clients.sqs, `${ctx.runId}-${tenant}-failures`, ctx.service.emitterRoleArn);
}

function tenantTopics(ctx: RunContext): Readonly<Record<string, string>> {
  const topics = ctx.service.local?.outputs.tenantInputTopicArns ?? ctx.service.tenantInputTopicArns ?? {};
  for (const tenant of [NOISY_TENANT, QUIET_TENANT])
    if (topics[tenant] === undefined)
      throw new Error(
        `the neighbour scenario publishes as tenants "${NOISY_TENANT}" and "${QUIET_TENANT}"; this service has no input topic for "${tenant}" (the harness registers both in a service it starts, and loadtest compare in the services it starts)`,
      );
  return topics;
}

/**
 * Two tenants on their own input topics: the noisy one floods its topic with control requests
 * (at its default maxControlPerSecond), while the quiet one schedules near-path events over the
 * run and cancels a tenth of them at least 10 s ahead. The quiet tenant's events must be
 * delivered once and on time, and its cancels applied, whatever the noisy tenant sends.
 */
async function runNeighbour(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const topics = tenantTopics(ctx);
  const usageBefore = (await ctx.service.report(false))?.usage;
  const quietNotices: { reason: string; action: string }[] = [];
  const noisyFailures = await failureEndpoint(ctx, NOISY_TENANT);
  const quietFailures = await failureEndpoint(ctx, QUIET_TENANT);
  const quietFailuresConsumer = startConsumer(ctx.clients.sqs, quietFailures.queueUrl, ctx.measure.consumers, (message) => {
    const seen = noticeOf(message.Body ?? '');
    quietNotices.push({ reason: seen.reason, action: typeof seen.request?.action === 'string' ? seen.request.action : 'schedule' });
  });

  // Both clients start together, a moment from now: the quiet tenant's consumer is set up by then.
  const start = Date.now() + 2000;
  const plan = planNeighbour({
    runId: ctx.runId,
    user: ctx.user,
    noisyRequests: params.events,
    quietEvents: params.quietEvents,
    spreadMs: params.seconds * 1000,
    aheadMs: params.aheadSeconds * 1000,
    start,
  });
  const cancelPublishedAt = new Map<string, number>();
  const cancelledDue = new Map([...plan.cancels].map((cancel) => [cancel.eventId, cancel.dueAt]));
  const deliveredCancelled = new Set<string>();

  const noisyClient = startNoisyClientThread({
    access: ctx.service.access,
    requests: plan.noisy,
    inputTopicArn: topics[NOISY_TENANT] as string,
    failureTopicArn: noisyFailures.topicArn,
    failureQueueUrl: noisyFailures.queueUrl,
    publishConcurrency: ctx.measure.publishConcurrency,
    consumers: ctx.measure.consumers,
    deadline: ctx.deadline,
  });
  const lastCancelDue = Math.max(0, ...cancelledDue.values());
  let outcome: DeliveryOutcome;
  let noisy: NoisyClientResult;
  try {
    outcome = await measureDelivery(ctx, plan.quiet, {
      expected: plan.expected,
      tenantInputTopics: topics,
      render: (event, target) =>
        plan.cancels.has(event)
          ? quietCancel(event, ctx.user, quietFailures.topicArn)
          : scheduleRequest(event, ctx.user, target, ctx.measure.payloadBytes, quietFailures.topicArn),
      onPublished: (event, at) => {
        if (plan.cancels.has(event)) cancelPublishedAt.set(event.eventId, at);
      },
      onReceipt: (receipt) => {
        if (receipt.eventId !== undefined && cancelledDue.has(receipt.eventId)) deliveredCancelled.add(receipt.eventId);
      },
      // A cancelled event would arrive at its due time: listen until the last of them is past.
      afterPublish: async () => {
        await pollUntil(() => false, Math.min(ctx.deadline, lastCancelDue + 2000));
      },
    });
    // The flood's answers: every request's notice, or none for a while.
    noisy = await noisyClient.finish(outcome.finishedAt);
  } finally {
    await noisyClient.stop();
    await quietFailuresConsumer.stop();
    for (const endpoint of [noisyFailures, quietFailures])
      await deleteConsumerEndpoint(ctx.clients.sns, ctx.clients.sqs, endpoint).catch((error: unknown) =>
        ctx.progress.note(`could not remove a failure topic and queue: ${String(error)}`),
      );
  }
  const usageAfter = (await ctx.service.report(false))?.usage;
  const usage = usageBefore && usageAfter ? usageBetween(usageAfter, usageBefore) : undefined;

  // A cancel counts when its publish returned at least CANCEL_AHEAD_MS before its event was due.
  const cancels = [...plan.cancels].map((cancel) => {
    const publishedAt = cancelPublishedAt.get(cancel.eventId);
    return { cancel, publishedAt, aheadMs: publishedAt === undefined ? undefined : cancel.dueAt - publishedAt };
  });
  const held = cancels.filter(({ aheadMs }) => aheadMs !== undefined && aheadMs >= CANCEL_AHEAD_MS);
  const heldApplied = held.filter(({ cancel }) => !deliveredCancelled.has(cancel.eventId)).length;
  const quietRefusals = (cancels: boolean): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const { action, reason } of quietNotices) if ((action === 'cancel') === cancels) counts[reason] = (counts[reason] ?? 0) + 1;
    return counts;
  };
  const { answers, publish: noisyPublish } = noisy;
  const floodSeconds = (noisyPublish.finishedAt - noisyPublish.startedAt) / 1000;

  const quietCounts = outcome.counts;
  const perTenant = (tenant: string, checks: readonly TargetCheck[]): TargetCheck[] =>
    checks.map((check) => ({ ...check, name: `${tenant}: ${check.name}` }));
  const targets: TargetCheck[] = [
    ...perTenant(QUIET_TENANT, [
      ...correctnessTargets(quietCounts),
      ...latenessTargets(outcome.lateness, TARGETS.latenessMs),
      {
        name: `cancels published ≥ ${TARGETS.cancels.aheadSeconds} s ahead applied (their events not delivered)`,
        target: `all (${held.length})`,
        actual: `${heldApplied} of ${held.length}`,
        // Those the harness published later than that are reported apart (cancelsPublishedAtLeast10sAhead).
        met: heldApplied === held.length && held.length > 0,
      },
    ]),
    ...perTenant(NOISY_TENANT, [
      {
        name: 'requests answered by no notice',
        target: '0',
        actual: `${answers.unanswered} of ${answers.requests.toLocaleString('en-US')}`,
        met: answers.unanswered === 0,
      },
      {
        name: 'requests answered more than once',
        target: '0',
        actual: String(answers.answeredMoreThanOnce),
        met: answers.answeredMoreThanOnce === 0,
      },
      {
        name: 'control requests taken in one second, at most',
        target: `≤ ${TARGETS.refusals.maxControlPerSecond.toLocaleString('en-US')} (maxControlPerSecond)`,
        actual: answers.takenMostInOneSecond.toLocaleString('en-US'),
        met: answers.takenMostInOneSecond <= TARGETS.refusals.maxControlPerSecond,
      },
    ]),
  ];

  const snsPublishes = usage ? usage.sns.publishes + usage.sns.publishBatchEntries : undefined;
  const details = {
    noisy: {
      published: noisyPublish.published,
      publishFailed: noisyPublish.failed,
      publishSeconds: round(floodSeconds, 2),
      // From the flood's first publish to its last notice: how long the service worked on it.
      lastNoticeSecondsAfterStart: noisy.lastNoticeAt === 0 ? 'n/a' : round((noisy.lastNoticeAt - start) / 1000, 1),
      taken: answers.byReason[REASON.EVENT_NOT_FOUND] ?? 0,
      refusedOverQuota: answers.byReason[REASON.QUOTA_EXCEEDED] ?? 0,
      ...answers,
    },
    quiet: {
      cancels: plan.cancels.size,
      cancelsPublished: cancelPublishedAt.size,
      cancelsPublishedAtLeast10sAhead: held.length,
      cancelsApplied: cancels.filter(({ cancel }) => !deliveredCancelled.has(cancel.eventId)).length,
      cancelledEventsDelivered: deliveredCancelled.size,
      cancelPublishedAheadMinSeconds: round(
        Math.min(...cancels.flatMap(({ aheadMs }) => (aheadMs === undefined ? [] : [aheadMs]))) / 1000,
        2,
      ),
      cancelRefusals: quietRefusals(true),
      scheduleRefusals: quietRefusals(false),
    },
    // Every SNS publish of the service, the quiet tenant's deliveries included: a refused request costs at most one.
    serviceSnsPublishes: snsPublishes ?? 'n/a',
    serviceDynamoDbWriteUnits: usage ? round(usage.dynamodb.writeUnits, 0) : 'n/a',
  };
  const result = deliveryResult(
    `neighbour: tenant ${NOISY_TENANT} floods ${params.events.toLocaleString('en-US')} control requests while tenant ${QUIET_TENANT} schedules ${params.quietEvents.toLocaleString('en-US')} events and cancels a tenth`,
    {
      noisyRequests: params.events,
      quietEvents: params.quietEvents,
      quietCancels: plan.cancels.size,
      seconds: params.seconds,
      quietPublishAheadSeconds: params.aheadSeconds,
      payloadBytes: ctx.measure.payloadBytes,
    },
    outcome,
    targets,
    'near path',
    TARGETS,
    details,
  );
  // Not per event: the noisy tenant's flood is most of what the service did. The whole run's usage is kept.
  return { ...result, cost: undefined, usage };
}

export const neighbour: Scenario = {
  description: `two tenants, each on its own input topic: "noisy" publishes N control requests at
once (cancels and reschedules of ids it never scheduled, a tenth naming the quiet
tenant's events, a tenth invalid), over its default maxControlPerSecond; "quiet"
schedules --quiet-events near-path events due over S seconds, each published --ahead
before due, and cancels every tenth 10 to 15 s before due; quiet's lateness, its
cancels, and how noisy's requests were answered [50,000 and 1,000, over 60 s, 30 s ahead]`,
  run: runNeighbour,
  defaults: {
    events: 50_000,
    quietEvents: 1_000,
    seconds: 60,
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
  // Its two tenants at the default quotas: the noisy one's control requests meet maxControlPerSecond.
  service: {
    startedForIt: false,
    tenants: [NOISY_TENANT, QUIET_TENANT].map((id) => ({ id, accounts: [LOCAL_ACCOUNT] })),
  },
  targets: TARGETS,
};
